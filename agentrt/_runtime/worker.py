"""The worker loop: claim every runnable run of the store and drive it, with no host code.

``async with Runtime(store=...)`` starts one :class:`Worker`.  It claims runs with
:meth:`~agentrt.stores.base.Store.claim_runnable` (queued, interrupted, due timers,
runs whose reply, children or cancel request arrived while nobody drove them, parents
whose finished sub-run's outcome never reached them, runs past their deadline), up to
``Runtime.concurrency`` at once (and, per agent, within ``Runtime.agent_limits``
across the fleet: the store counts), and hands each to the runtime's driver under the
lease epoch of its claim.  Between claims it sleeps in the store's
``wait_for_work`` (LISTEN/NOTIFY on PostgreSQL, the file's data version on SQLite),
at most ``poll_seconds`` (the slow fallback poll) and never past the next timer.

A claimed run whose agent this process cannot load (module not importable, an
executor missing) is left alone with its lease unrenewed: the lease lapses and
another worker, perhaps one that can, takes it -- a natural backoff, never a hot loop.

A mixed fleet (a rolling deploy: old and new code on one store).  Each run row says what
code its newest checkpoint needs (``code_required``, see :mod:`agentrt._codec._requirement`).
The worker judges each distinct requirement it meets once, against the code importable in
this process -- the same blob format and Python, every suspended function with the same
digest -- and passes those it lacks to every claim (``claim_runnable(lacking=...)``), so
the store hands it only runs it can resume.  A run it claims anyway (a requirement it had
not seen yet) is given back at once, with a ``released`` trace event and no error: the run
is not failed and its lease does not linger, and a worker that carries its code takes it.

Recovery after a SIGKILL.  A run whose driver died keeps its lease until the lease lapses
(``lease_seconds``), but a claim takes at once the runs of a dead lease owner: a process of this
machine that no longer runs (owners are ``host/pid/nonce``), or, on a store with owner sessions
(PostgreSQL, :mod:`agentrt.stores._pg_sessions`), an owner of any machine whose session ended.  So
a waiting worker does not leave that to its next claim (up to ``poll_seconds`` away): every
:data:`_OWNERS_SECONDS` it reads the owners of live leases it can judge (``watched_owners``: one
read on the lease owner index, and one of ``pg_locks`` with session owners), every
:data:`_PID_CHECK_SECONDS` it checks their pids (a syscall each, no query), and the first time it
finds one dead it wakes and claims -- the dead owner's runs move within a fraction of a second,
whatever ``poll_seconds`` is.  Each dead owner wakes a worker once (a run the claim could not take,
the worker full or the agent at its limit, waits for the next poll: never a hot loop).  The epoch
fencing of every write is what makes taking a run safe; this only makes it prompt.

Blocked runs (:mod:`agentrt._runtime.blocking`) are never claimed.  Once per ``poll_seconds`` the
worker looks at them and takes up those it can restore that it has not tried yet with their
checkpoint requirement: at most once per worker process and requirement, so a worker running the
code that blocked a run tries it once at most, and a deploy (new workers) or an upgrade (a new
requirement) gives each blocked run one more try.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, cast  # Any: the wait mixes futures of different result types

from agentrt._runtime.blocking import BlockedSweep
from agentrt._runtime.storeio import StoreIO
from agentrt._sdk.agent import Agent
from agentrt.stores.base import Capability, RunRecord, Store, WatchedOwners, capabilities, owner_is_dead

__all__ = ["Worker", "WorkerHost"]

logger = logging.getLogger("agentrt.worker")

#: How often a waiting worker thread looks at its stop flag (``wait_for_work`` is cut in slices).
_SLICE_SECONDS = 0.25
#: A lease owner of this machine starts so (``make_owner``): its pid can be checked here.
_HOST_PREFIX = socket.gethostname() + "/"
#: How often a waiting worker checks the pids of this machine's lease owners (no query; see above).
_PID_CHECK_SECONDS = 0.1
#: How often a waiting worker reads the lease owners it watches (``watched_owners``: one read).
_OWNERS_SECONDS = 0.5
#: Claims made again at once in one ``claim()`` when some claimed run needed code this worker lacks
#: (each round learns at least one requirement more, so this only bounds a pathological store).
_MAX_ROUNDS = 8
#: How many blocked runs (newest first) one look at them reads.
_BLOCKED_BATCH = 1000


class WorkerHost(Protocol):
    """What the worker needs from the runtime that owns it (``Runtime`` is one)."""

    store: Store
    #: Every store call goes through it (never on the event loop).
    io: StoreIO
    concurrency: int
    poll_seconds: float
    blocked_sweep: BlockedSweep

    @property
    def agent_limits(self) -> Mapping[str, int]:
        """Agent spec -> how many of its runs may be driven at once across the fleet."""
        ...

    @property
    def owner(self) -> str: ...
    @property
    def lease_seconds(self) -> float: ...
    @property
    def driving(self) -> int:
        """How many runs are driven now."""
        ...

    @property
    def closed(self) -> bool: ...
    @property
    def lacking(self) -> list[str]:
        """The code requirements this process cannot meet (claims pass over them)."""
        ...

    def agent_of(self, rec: RunRecord) -> Agent: ...
    def check_executors(self, agent: Agent) -> None: ...
    def lacking_reason(self, code_required: str | None) -> str: ...
    def emit(self, kind: str, run_id: str, /, **data: Any) -> None: ...
    def note_driver_error(self, run_id: str, exc: BaseException) -> None: ...
    def adopt(self, rec: RunRecord, agent: Agent) -> None: ...
    async def release(self, run_id: str) -> None: ...
    async def schedule_run(self, run_id: str) -> None: ...
    async def changed(self) -> None:
        """Return when some run of this runtime changed."""


class DeadOwnerWatch:
    """Says, once per owner, when a lease owner the store lets it judge has died: a process of this
    machine that no longer runs, or an owner whose session ended (see the module docstring).  Used
    by the worker's waiting thread only; a store without :attr:`Capability.WATCHED_OWNERS` (a
    custom store) has no watch and relies on the poll."""

    def __init__(self, store: Store) -> None:
        watched = cast(WatchedOwners, store) if Capability.WATCHED_OWNERS in capabilities(store) else None
        self._read: Callable[[], list[tuple[str, bool]]] | None = watched.watched_owners if watched else None
        self._owners: list[tuple[str, bool]] = []
        self._read_at = -float("inf")
        self._told: set[str] = set()

    @property
    def active(self) -> bool:
        return self._read is not None

    def dead_owner_found(self) -> bool:
        """True the first time one of the owners read is dead (the others: False)."""
        if self._read is None:
            return False
        now = time.monotonic()
        if now - self._read_at >= _OWNERS_SECONDS:
            self._read_at = now
            try:
                self._owners = self._read()
            except Exception:  # the store is in trouble: the claim loop says so
                self._owners = []
            self._told &= {o for o, _ in self._owners}
        dead = [o for o, gone in self._owners if o not in self._told and (gone or owner_is_dead(o))]
        self._told.update(dead)
        return bool(dead)

    def slice_seconds(self) -> float:
        """How long the waiting thread may wait before looking again: :data:`_PID_CHECK_SECONDS`
        while owners of this machine are to be checked, else :data:`_SLICE_SECONDS` (an idle fleet
        wakes the thread 4 times a second, not 10)."""
        if any(o not in self._told and o.startswith(_HOST_PREFIX) for o, _ in self._owners):
            return _PID_CHECK_SECONDS
        return _SLICE_SECONDS


class Worker:
    """Claims and drives the runnable runs of one runtime's store (see the module docstring)."""

    def __init__(self, runtime: WorkerHost) -> None:
        self.rt = runtime
        self._task: asyncio.Task[None] | None = None
        self._stop = threading.Event()
        self._waiter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentrt-worker-wait")
        self._watch = DeadOwnerWatch(runtime.store)
        self.claimed = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="agentrt-worker")

    async def stop(self) -> None:
        """Stop claiming (runs being driven go on until the runtime closes)."""
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._waiter.shutdown(wait=True)

    async def _loop(self) -> None:
        failing = False
        while not self._stop.is_set():
            try:
                await self.claim()
                timeout = await self._timeout()
                failing = False
            except Exception as exc:  # the store is in trouble: retry, do not die
                if not failing:
                    logger.warning(
                        "agentrt worker: claiming failed (%s: %s); retrying", type(exc).__name__, exc
                    )
                failing = True
                timeout = min(self.rt.poll_seconds, 1.0)
            if timeout > 0:
                await self._wait(timeout)

    async def claim(self) -> list[RunRecord]:
        """Claim what fits in the free capacity and start driving it; returns the runs adopted."""
        rt = self.rt
        adopted: list[RunRecord] = []
        for _ in range(_MAX_ROUNDS):
            free = rt.concurrency - rt.driving
            if free <= 0 or rt.closed:
                break
            claimed = await rt.io(
                rt.store.claim_runnable,
                rt.owner,
                rt.lease_seconds,
                free,
                limits=dict(rt.agent_limits) or None,
                lacking=rt.lacking or None,
            )
            released = False
            for rec in claimed:
                self.claimed += 1
                try:
                    agent = rt.agent_of(rec)
                    rt.check_executors(agent)
                except Exception as exc:
                    # Left with its lease unrenewed: it lapses, and another worker may take the run.
                    rt.note_driver_error(rec.run_id, exc)
                    rt.emit("driver_error", rec.run_id, error=f"{type(exc).__name__}: {exc}")
                    continue
                reason = rt.lacking_reason(rec.code_required)  # its agent module is imported now
                if reason:
                    await rt.release(rec.run_id)
                    rt.emit("released", rec.run_id, reason=reason, code_required=rec.code_required)
                    released = True
                    continue
                rt.emit("claimed", rec.run_id, status=rec.status, epoch=rec.epoch, seq=rec.seq)
                rt.adopt(rec, agent)
                adopted.append(rec)
            if not released:
                break
        return adopted + await self.take_blocked()

    async def take_blocked(self) -> list[RunRecord]:
        """Start driving the blocked runs this worker may try now (see the module docstring)."""
        rt = self.rt
        sweep = rt.blocked_sweep
        if rt.closed or rt.concurrency - rt.driving <= 0 or not sweep.due():
            return []
        taken: list[RunRecord] = []
        blocked = await rt.io(rt.store.list_runs, status="blocked", limit=_BLOCKED_BATCH)
        for rec in sweep.untried(blocked):
            if rt.concurrency - rt.driving <= 0:
                break
            sweep.note(rec.run_id, rec.code_required)  # tried once, whatever comes of it
            try:
                rt.check_executors(rt.agent_of(rec))
            except Exception:
                continue  # not an agent this worker can load or run
            if rt.lacking_reason(rec.code_required):
                continue  # its checkpoint needs code this worker does not carry
            rt.emit("unblocking", rec.run_id, seq=rec.seq, blocked=rec.blocked)
            await rt.schedule_run(rec.run_id)
            taken.append(rec)
        return taken

    async def _timeout(self) -> float:
        rt = self.rt
        if rt.concurrency - rt.driving <= 0:
            return rt.poll_seconds  # full: a driver that ends touches the runtime and wakes us
        timeout = rt.poll_seconds
        wake = await rt.io(rt.store.next_wake_at)
        if wake is not None:
            timeout = min(timeout, max(wake - time.time(), 0.0) + 0.01)
        return timeout

    async def _wait(self, timeout: float) -> None:
        """Until the store says there may be work, a local run changes, or ``timeout`` passes."""
        rt = self.rt
        loop = asyncio.get_running_loop()
        done = threading.Event()
        waiter: asyncio.Future[None] = loop.run_in_executor(self._waiter, self._wait_in_thread, timeout, done)
        changed = asyncio.ensure_future(rt.changed())
        waiters: list[asyncio.Future[Any]] = [waiter, changed]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            done.set()
            changed.cancel()
            with contextlib.suppress(Exception):
                await waiter

    def _wait_in_thread(self, timeout: float, done: threading.Event) -> None:
        deadline = time.monotonic() + timeout
        store = self.rt.store
        watch = self._watch
        while not (self._stop.is_set() or done.is_set()):
            if watch.dead_owner_found():
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            slice_seconds = watch.slice_seconds()
            try:
                if store.wait_for_work(min(remaining, slice_seconds)):
                    return
            except Exception:
                time.sleep(min(remaining, slice_seconds))
