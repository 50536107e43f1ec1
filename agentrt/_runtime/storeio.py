"""The one seam between the runtime's event loop and its store: no store call blocks the loop.

Stores are synchronous (:mod:`agentrt.stores.base`); a PostgreSQL round trip or a SQLite commit
made on the event loop would stop every run of the process while it lasts.  So every store call
the runtime, its drivers and its worker make goes through :class:`StoreIO`, which runs it on
threads of its own, sized for the store:

- :class:`~agentrt.stores.memory.MemoryStore`: inline, on the loop (dictionaries behind a lock:
  no I/O to overlap, and a hop to a thread would cost more than the call);
- :class:`~agentrt.stores.sqlite.SqliteStore`: what it declares in ``io_threads`` -- inline at
  ``synchronous=NORMAL`` (a local commit costs less than the hop: a durable step measured 349 us
  inline against 689 us through a thread, ``benchmarks/step.py --quick``), one thread at ``FULL``,
  where each commit waits for the disk (one connection behind one lock: more would only queue);
- PostgreSQL, and any other store: ``store.io_threads`` threads if it says, else the size of the
  PostgreSQL store's default connection pool (4) -- round trips of different runs overlap, each on a
  pooled connection; a call beyond the pool waits for a connection in its thread, not on the loop.
  A custom store that is not thread-safe sets ``io_threads = 1``.

A call is awaited by the task that made it (one driver's writes stay in its order).  A task
cancelled while its call runs waits for the call to end before it sees the cancellation, as when
the call was made on the loop: nothing a driver does after it is cancelled (evict, release its
lease) can overtake the write it was making.

A step's checkpoint goes through :meth:`StoreIO.save_checkpoint`: on a store that declares
``Capability.PIPELINED`` (PostgreSQL's) it is made on the loop itself, its statement sent with the
other runs' of the same turn of the loop on one connection (``agentrt.stores._pg_pipeline``: the
thread hand-offs cost a busy worker ten times the CPU of the statement); elsewhere as any call.

Stream events (fire and forget, but ordered per run) go to :meth:`StoreIO.ordered`: one of a few
single-thread lanes, chosen by run id, so a run's events are written in the order they happened.
"""

from __future__ import annotations

import asyncio
import functools
import zlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar, cast  # Any: the store's own return values

from agentrt.stores.capabilities import Capability, Pipeline, Pipelined, capabilities

__all__ = ["DEFAULT_IO_THREADS", "StoreIO", "io_threads"]

P = ParamSpec("P")
T = TypeVar("T")

#: Threads for a store that does not say (PostgreSQL's default connection pool holds 4).
DEFAULT_IO_THREADS = 4


def io_threads(store: object) -> int:
    """How many threads make ``store``'s calls (0: inline, on the loop; see the module docstring)."""
    declared = getattr(store, "io_threads", None)
    if isinstance(declared, int) and not isinstance(declared, bool) and declared >= 0:
        return declared
    from agentrt.stores.memory import MemoryStore
    from agentrt.stores.sqlite import SqliteStore

    if isinstance(store, MemoryStore):
        return 0
    if isinstance(store, SqliteStore):  # one written before it declared io_threads
        return 1
    return DEFAULT_IO_THREADS


class StoreIO:
    """Runs store calls off the event loop (see the module docstring)."""

    def __init__(self, store: object, threads: int | None = None) -> None:
        self.threads = io_threads(store) if threads is None else threads
        self._pool: ThreadPoolExecutor | None = None
        self._lanes: list[ThreadPoolExecutor] = []
        if self.threads:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="agentrt-store")
            # One thread: the lane is the pool itself, so events and writes keep one order.
            self._lanes = (
                [self._pool]
                if self.threads == 1
                else [
                    ThreadPoolExecutor(1, thread_name_prefix=f"agentrt-stream-{i}")
                    for i in range(self.threads)
                ]
            )
        self._closed = False
        self._pipelined = (
            cast(Pipelined, store) if Capability.PIPELINED in capabilities(store) and self.threads else None
        )
        self._pipeline: Pipeline | None = None
        self._pipeline_loop: asyncio.AbstractEventLoop | None = None
        self.store = store

    @property
    def inline(self) -> bool:
        """Whether calls are made on the caller's thread (a store with no I/O)."""
        return self._pool is None

    async def __call__(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` (a store method), off the loop; its result or its exception."""
        if self._pool is None or self._closed:
            return fn(*args, **kwargs)
        future = asyncio.get_running_loop().run_in_executor(
            self._pool, functools.partial(fn, *args, **kwargs)
        )
        cancelled: asyncio.CancelledError | None = None
        while True:
            try:
                result = await asyncio.shield(future)
            except asyncio.CancelledError as exc:
                if future.done():
                    raise
                cancelled = exc  # the call goes on in its thread: wait for it, then be cancelled
                continue
            if cancelled is not None:
                raise cancelled
            return result

    async def save_checkpoint(self, *args: Any, **kwargs: Any) -> None:
        """``store.save_checkpoint(*args, **kwargs)``: pipelined on the loop where the store can."""
        if self._pipelined is None or self._closed:
            await self(self.store.save_checkpoint, *args, **kwargs)  # type: ignore[attr-defined]  # a Store
            return
        loop = asyncio.get_running_loop()
        if self._pipeline is None or self._pipeline_loop is not loop:  # a pipeline serves one loop
            if self._pipeline is not None:
                self._pipeline.abandon()
            self._pipeline, self._pipeline_loop = self._pipelined.open_pipeline(), loop
        await self._pipelined.save_checkpoint_pipelined(self._pipeline, *args, **kwargs)

    async def aclose(self) -> None:
        """:meth:`close`, after the pipelined statements in flight are made and their connection closed."""
        pipeline, self._pipeline = self._pipeline, None
        if pipeline is not None:
            await pipeline.aclose()
        self.close()

    def ordered(self, key: str, fn: Callable[..., Any], /, *args: Any) -> Future[Any] | None:
        """Start ``fn(*args)`` after every earlier call with the same ``key`` (a run id); None when
        calls are inline (then the caller makes it itself)."""
        if not self._lanes or self._closed:
            return None
        lane = self._lanes[zlib.crc32(key.encode()) % len(self._lanes)]
        return lane.submit(fn, *args)

    def close(self) -> None:
        """Wait for the calls in progress, then stop the threads (later calls are made inline)."""
        if self._closed:
            return
        self._closed = True
        for lane in self._lanes:
            if lane is not self._pool:
                lane.shutdown(wait=True)
        if self._pool is not None:
            self._pool.shutdown(wait=True)
