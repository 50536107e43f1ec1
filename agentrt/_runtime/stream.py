"""The durable event stream: every run's events, numbered once, in the store.

The runtime hands each of its events to :class:`EventStream` (an ``on_trace``
observer).  It appends the event to the run's stream in the store, which gives
it the run's next id (1, 2, 3... across processes and restarts), then wakes
the subscribers of that run.  Readers never see a live event that is not
stored: :meth:`EventStream.subscribe` reads the store after each wake-up, so the
history and the live tail are one sequence, and resuming after id ``N`` yields
exactly the events after ``N`` -- nothing lost, nothing twice.

Streamed model chunks are not stored (there can be thousands per call); they
stay on ``Runtime(on_chunk=...)`` / ``on_trace``.

On a store that can queue stream events (``Capability.QUEUED_STREAM``: SQLite's), an event
is not committed on its own: it is written by the store's next write
transaction -- the journal entry or checkpoint that follows it, so a step's
events cost no commit of their own -- and at the latest :data:`FLUSH_SECONDS`
later, when the run's subscribers are woken.  The events that end a burst (a
run's end, ``waiting``) are written at once.  As before, an event is stored
after what it reports, never before; a crash can lose the events of its last
few milliseconds (before, the one being written).

On a store that writes many events in one transaction (``Capability.BATCHED_STREAM``: PostgreSQL's),
the events of one turn of the event loop go together, at the end of that turn, in one transaction on
one lane; while a batch is being written the next one gathers, and goes when it lands (a group
commit: with many runs at once, one commit carries the events of many steps).

No write is made on the event loop: an event is written through the runtime's I/O seam
(:meth:`~agentrt._runtime.storeio.StoreIO.ordered`: a run's events in one lane, in order), and the
run's subscribers are woken once it is stored.  Readers of this stream (:meth:`EventStream.events`,
:meth:`EventStream.subscribe`, ``Runtime.wait``) first let the run's writes in flight land.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import Future
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]  # c_make_encoder: the C accelerator, untyped
from typing import Any, cast  # Any: event data are JSON values

from agentrt._runtime.storeio import StoreIO
from agentrt.observe import TraceEvent
from agentrt.stores.base import (
    BatchedStream,
    Capability,
    QueuedStream,
    Store,
    StreamEvent,
    StreamItem,
    capabilities,
)

__all__ = [
    "END_EVENT_GRACE_SECONDS",
    "END_KINDS",
    "FLUSH_SECONDS",
    "MAX_EVENT_ID",
    "UNSTORED_KINDS",
    "EventStream",
    "check_event_id",
]

#: Event ids are 64-bit signed integers in every store (SQLite INTEGER, PostgreSQL BIGINT).
MAX_EVENT_ID = 2**63 - 1


def check_event_id(after: object, where: str) -> int:
    """``after`` as a stream position, or ``ValueError`` naming ``where``: a position the store cannot
    even compare with (``after=2**63``) would otherwise fail inside the store, half-way through a stream."""
    if not isinstance(after, int) or isinstance(after, bool):
        raise TypeError(
            f"{where}: must be an event id, an integer from 0 to 2**63-1; got a {type(after).__name__}"
        )
    if not 0 <= after <= MAX_EVENT_ID:  # not shown: the repr of a huge int is itself costly (or refused)
        raise ValueError(f"{where}: must be an event id, an integer from 0 to 2**63-1; got one out of range")
    return after


logger = logging.getLogger("agentrt.observe")

#: The event that ends a run's stream (a run's last event).
END_KINDS = frozenset({"completed", "failed", "cancelled"})
#: Runtime events that are observed but not stored.
UNSTORED_KINDS = frozenset({"model_chunk"})
#: Events after which nothing may be written for a while: stored at once, with anything queued.
WRITE_NOW_KINDS = END_KINDS | {"waiting"}
#: How long a queued event waits at most for a write transaction to carry it.
FLUSH_SECONDS = 0.005
#: ``json.dumps(data, default=repr, separators=(",", ":"))`` (compact: a run's stream is most of the
#: store bytes a waiting run keeps) without building an encoder per event
_JSON = json.JSONEncoder(default=repr, separators=(",", ":"))
#: ... and without its Python layer: the C encoder, made once (event data are trees the runtime
#: built -- to_jsonable's output, numbers, strings -- so the cycle check is left out: a cycle
#: would be a RecursionError instead of a ValueError, both logged as an event not stored).
_C_ENCODER = (
    c_make_encoder(None, repr, encode_basestring_ascii, None, ":", ",", False, False, True)
    if c_make_encoder is not None
    else None
)


def _json_text(data: dict[str, Any]) -> str:
    """``json.dumps(data, default=repr, separators=(",", ":"))``, the same text."""
    if _C_ENCODER is None:
        return _JSON.encode(data)
    return "".join(_C_ENCODER(data, 0))


#: How often a subscriber re-reads the store when nothing woke it (another process may drive the run).
DEFAULT_POLL_SECONDS = 0.5
#: How long after a run's row says it ended a subscriber waits for its end event to be stored (the
#: driver records it after the row commits; a process that died in between never does).
END_EVENT_GRACE_SECONDS = 3.0


class EventStream:
    """Appends runtime events to the store's per-run stream and wakes the run's subscribers."""

    def __init__(
        self, store: Store, *, io: StoreIO | None = None, poll_seconds: float = DEFAULT_POLL_SECONDS
    ) -> None:
        self.store = store
        self.io = io if io is not None else StoreIO(store, threads=0)
        #: run id -> its newest write in flight (the lane writes a run's events in order)
        self._writing: dict[str, Future[Any]] = {}
        self.poll_seconds = poll_seconds
        self._wakeups: dict[str, asyncio.Event] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.get_ident()
        #: the store's own queue (``Capability.QUEUED_STREAM``), else None: every event is appended
        self._queued_stream = (
            cast(QueuedStream, store) if Capability.QUEUED_STREAM in capabilities(store) else None
        )
        self._queued_runs: set[str] = set()
        self._flush_armed = False
        #: the store's batch writer (``Capability.BATCHED_STREAM``) where it has no queue of its own
        self._batched = (
            cast(BatchedStream, store)
            if self._queued_stream is None and Capability.BATCHED_STREAM in capabilities(store)
            else None
        )
        #: the events gathered for the next batch, and what is done when they are stored
        self._batch: list[StreamItem] = []
        self._batch_done: Future[None] | None = None
        #: batches handed to the lane and not stored yet
        self._sending = 0

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.get_ident()

    # -- writing (the observation's recorder; also usable as an on_trace observer)

    def __call__(self, event: TraceEvent) -> None:
        self.record(event.kind, event.run_id, event.data)

    def record(self, kind: str, run_id: str, data: dict[str, Any]) -> None:
        """Store one event of ``run_id`` (queued on the store's next write where it can be)."""
        if kind in UNSTORED_KINDS:
            return
        on_loop = threading.get_ident() == self._thread
        if (
            self._queued_stream is not None
            and on_loop
            and self._loop is not None
            and not self._loop.is_closed()
            and kind not in WRITE_NOW_KINDS
        ):
            self._queued_stream.queue_stream(run_id, kind, _json_text(data))
            self._queued_runs.add(run_id)
            if not self._flush_armed:
                self._loop.call_later(FLUSH_SECONDS, self._flush_soon)
                self._flush_armed = True
            return
        if self._batched is not None and on_loop and self._loop is not None and not self._loop.is_closed():
            self._batch.append((run_id, kind, _json_text(data), time.time()))
            if self._batch_done is None:
                self._batch_done = Future()
                self._loop.call_soon(self._send_batch)
            self._writing[run_id] = self._batch_done
            return
        stored = json.loads(json.dumps(data, default=repr))
        if on_loop and self._loop is not None and not self._loop.is_closed():
            # after anything queued before it: the queue is written by the store's next write
            written = self.io.ordered(run_id, self.store.append_stream, run_id, kind, stored)
            if written is not None:
                self._writing[run_id] = written
                loop = self._loop
                written.add_done_callback(lambda f: loop.call_soon_threadsafe(self._landed, run_id, f))
                return
        self.store.append_stream(run_id, kind, stored)  # after anything queued before it
        if on_loop:
            self._wake_queued()
            self._wake(run_id)
        elif self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake, run_id)

    def _landed(self, run_id: str, written: Future[Any]) -> None:
        """An event written off the loop: wake the run's subscribers (on the loop)."""
        if self._writing.get(run_id) is written:
            del self._writing[run_id]
        if written.exception() is not None:
            logger.warning(
                "agentrt: an event of run %s could not be stored in its event stream",
                run_id,
                exc_info=written.exception(),
            )
        self._wake_queued()
        self._wake(run_id)

    # -- batches (``Capability.BATCHED_STREAM``)

    def _send_batch(self, now: bool = False) -> None:
        """Hand the gathered events to the stream's lane as one batch -- unless one is being written
        and not ``now``: then they go when it lands, with whatever gathered meanwhile."""
        if not self._batch or (self._sending and not now):
            return
        events, done = self._batch, self._batch_done
        self._batch, self._batch_done = [], None
        assert done is not None and self._batched is not None and self._loop is not None
        self._sending += 1
        loop = self._loop
        done.add_done_callback(lambda f: loop.call_soon_threadsafe(self._batch_landed, events, f))
        if self.io.ordered("\0stream", self._write_batch, self._batched, events, done) is None:
            self._write_batch(self._batched, events, done)  # calls are inline: made here

    @staticmethod
    def _write_batch(store: BatchedStream, events: list[StreamItem], done: Future[None]) -> None:
        try:
            store.append_streams(events)
        except BaseException as exc:
            done.set_exception(exc)
        else:
            done.set_result(None)

    def _batch_landed(self, events: list[StreamItem], done: Future[None]) -> None:
        """A batch is stored (or failed): wake its runs' subscribers, and send what gathered meanwhile."""
        self._sending -= 1
        if done.exception() is not None:
            logger.warning(
                "agentrt: %d events could not be stored in their runs' event streams",
                len(events),
                exc_info=done.exception(),
            )
        for run_id in dict.fromkeys(e[0] for e in events):
            if self._writing.get(run_id) is done:
                del self._writing[run_id]
            self._wake(run_id)
        if self._batch and not self._sending:
            self._send_batch()

    def _send_now(self, run_id: str | None) -> None:
        """Before waiting for ``run_id``'s events (None: every run's) on the loop's own thread: send
        the batch they are gathered in, which would otherwise go only after this turn of the loop."""
        on_loop = threading.get_ident() == self._thread
        if self._batch and on_loop and (run_id is None or self._writing.get(run_id) is self._batch_done):
            self._send_batch(now=True)

    def settle(self, run_id: str | None = None) -> None:
        """Wait until the events of ``run_id`` (None: of every run) written off the loop are stored."""
        self._send_now(run_id)
        pending = list(self._writing.values()) if run_id is None else [self._writing.get(run_id)]
        for written in pending:
            if written is not None:
                with contextlib.suppress(Exception):
                    written.result()

    async def settled(self, run_id: str) -> None:
        """:meth:`settle`, awaited."""
        self._send_now(run_id)
        written = self._writing.get(run_id)
        if written is not None:
            with contextlib.suppress(Exception):
                await asyncio.wrap_future(written)

    def _flush_soon(self) -> None:
        """The queued events' deadline: written off the loop (the store's next write may take them)."""
        self._flush_armed = False
        flush = self._queued_stream.flush_stream if self._queued_stream is not None else None
        if flush is None or self._loop is None or self._loop.is_closed():
            self._wake_queued()
            return
        written = self.io.ordered("", self._flush_quietly, flush)
        if written is None:
            self.flush()
            return
        loop = self._loop
        written.add_done_callback(lambda f: loop.call_soon_threadsafe(self._wake_queued))

    @staticmethod
    def _flush_quietly(flush: Any) -> None:
        try:
            flush()
        except Exception:
            logger.warning("agentrt: queued stream events could not be stored", exc_info=True)

    def flush(self) -> None:
        """Write the queued events (if the store has not already) and wake their runs' subscribers."""
        self._flush_armed = False
        self.settle()
        if self._queued_stream is not None:
            try:
                self._queued_stream.flush_stream()
            except Exception:
                logger.warning("agentrt: queued stream events could not be stored", exc_info=True)
        self._wake_queued()

    def _wake_queued(self) -> None:
        runs, self._queued_runs = self._queued_runs, set()
        for run_id in runs:
            self._wake(run_id)

    def _wake(self, run_id: str) -> None:
        wakeup = self._wakeups.pop(run_id, None)
        if wakeup is not None:
            wakeup.set()

    # -- reading

    def events(self, run_id: str, after: int = 0, limit: int | None = None) -> list[StreamEvent]:
        self.settle(run_id)
        return list(self.store.read_stream(run_id, after, limit))

    async def subscribe(self, run_id: str, after: int = 0) -> AsyncIterator[StreamEvent]:
        """Yield the run's events with id > ``after``, then each new one as it is stored, until its end
        event (``completed`` / ``failed`` / ``cancelled``) -- the last one: a run retried after it ended
        (``Runtime.retry``) goes on past its earlier end.  A run whose row says it ended while its end
        event is not stored yet is followed :data:`END_EVENT_GRACE_SECONDS` longer (its driver stores
        the event just after the row); one that never gets it (its process died between finishing and
        recording it) ends the iteration then, drained."""
        while True:
            # Taken before reading: an event stored between the read and the wait sets this one.
            wakeup = self._wakeups.setdefault(run_id, asyncio.Event())
            io, store = self.io, self.store
            await self.settled(run_id)
            batch = await io(store.read_stream, run_id, after)
            for event in batch:
                after = event.id
                yield event
                if event.kind in END_KINDS and not await io(store.read_stream, run_id, event.id, 1):
                    return
            if batch:
                continue
            rec = await io(store.get_run, run_id)
            wait = self.poll_seconds
            if rec is None or rec.finished:
                await self.settled(run_id)
                if await io(store.read_stream, run_id, after, 1):
                    continue
                if rec is None or await self._end_stored(run_id, after):
                    return
                # Its row says it ended, its end event is not stored: the driver records that event
                # just after the row commits (here or in another process), so wait for it a while.
                # A run whose process died in between has none: the iteration ends once drained.
                grace = rec.updated_at + END_EVENT_GRACE_SECONDS - time.time()
                if grace <= 0:
                    return
                wait = min(wait, grace)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wakeup.wait(), wait)

    async def _end_stored(self, run_id: str, after: int) -> bool:
        """Whether no end event can still come after ``after`` in a stream that holds nothing after it:
        the event at ``after`` is one, or there is none at ``after`` (ids run 1, 2, 3...: the stream ends
        before it, and the next event would not be after ``after`` either)."""
        if after == 0:
            return False
        at = await self.io(self.store.read_stream, run_id, after - 1, 1)
        return not at or at[0].id != after or at[0].kind in END_KINDS
