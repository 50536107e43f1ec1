"""``Runtime``: the durable scheduler, asyncio-native.

Per run, a *driver* (one asyncio task while the run has work in this process)
steps the run's :class:`~agentrt.lowlevel.Machine` from suspension to
suspension.  At each suspension it checkpoints first (write-ahead: the blob and
the pending request are in the store before anything is dispatched), then
dispatches the request: async tools on the loop, sync tools in a bounded thread
pool, sub-agents as child runs, timers with ``call_later``.  Each result is
journaled (run, seq, idx) as it arrives, and only then delivered.

After a crash, a run restarts from its newest checkpoint: results already
journaled are delivered from the journal; requests without a result are
dispatched again (at-least-once), with the same idempotency key ``RUN:SEQ``.

A run that waits for a reply, a timer or a child run leaves memory: its driver
ends, the machine is dropped, and the run costs one row until something wakes it.

As a worker (``async with Runtime(store=...)``, the default) the runtime also
claims every runnable run of its store (:mod:`agentrt._runtime.worker`): queued
runs, interrupted ones, due timers, runs whose reply or children arrived.  Every
write of a driver carries the lease epoch it was claimed under, so a driver that
lost its run (paused past its lease) can never write (:class:`LeaseLost`).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any  # Any: agent inputs, outputs and answers are user values

from agentrt._codec._requirement import code_requirement, lacking_code
from agentrt._runtime.blocking import BlockedSweep, refusal_finding, unrestorable_finding
from agentrt._runtime.budget import BudgetInterrupt, Watchdog, innermost_agent_frame
from agentrt._runtime.dispatch import Dispatcher
from agentrt._runtime.encoding import (
    checkpoint_bind,
    decode_error,
    decode_result,
    encode_error,
    encode_result,
    encode_value,
    error_record,
    seal_for,
)
from agentrt._runtime.history import check_chain, check_history
from agentrt._runtime.leases import Leases
from agentrt._runtime.observation import Observation, TraceObserver
from agentrt._runtime.pending import (
    REQUESTS,
    answered_in_store,
    describe_pending,
    parked_on,
    summarize,
    verdict,
    waits_outside,
)
from agentrt._runtime.retry import (
    RUNTIME_WORDS,
    RetryWords,
    check_retryable,
    pick_checkpoint,
    unrestorable,
    write_retry,
)
from agentrt._runtime.state import START, LiveRun
from agentrt._runtime.stream import EventStream, check_event_id
from agentrt._sdk.agent import Agent, agent_spec, load_agent
from agentrt._sdk.requests import Ask
from agentrt._sdk.schema import jsonable_or_repr, to_jsonable
from agentrt._sdk.task import StepRecorder, recording
from agentrt.exceptions import (
    AgentSpecError,
    Cancelled,
    CorruptBlob,
    DeadlineExceeded,
    IncompatibleBlob,
    LeaseHeld,
    MissingExecutor,
    ModelCallBudgetExceeded,
    NotWaiting,
    RowDamaged,
    RunBlocked,
    RunFailed,
    RunNotFound,
    SchemaError,
    StepBudgetExceeded,
)
from agentrt.keys import keyring_for_store
from agentrt.llm._contract import ExecutorRequest, as_executors
from agentrt.llm._needs import missing
from agentrt.lowlevel import Done, Machine
from agentrt.observe import TraceEvent
from agentrt.stores._identity import blob_digest
from agentrt.stores.base import (
    EventRow,
    LeaseLost,
    NewRun,
    RunRecord,
    Store,
    StreamEvent,
    check_limits,
)

__all__ = ["DEFAULT_STEP_BUDGET_SECONDS", "Runtime", "summarize"]

DEFAULT_STEP_BUDGET_SECONDS = 5.0
DEFAULT_MAX_MODEL_CALLS = 100
DEFAULT_LEASE_SECONDS = 10.0
#: How long a driver goes on stepping without giving the event loop a turn, when the calls of its
#: steps never wait (async tools that return at once, inline tools: dispatched eagerly, see
#: ``dispatch.start_task``).  Past it the driver yields once, so other runs, the lease renewer and
#: stream subscribers are never held up longer than this plus one step.
SLICE_SECONDS = 0.002
_LOCAL_PREFIX = "<local>:"
#: How many distinct code requirements a runtime remembers its verdict on.
_MAX_JUDGED = 4096


def __getattr__(name: str) -> Any:
    """``RuntimeEvent`` was the second event type; there is one now, :class:`~agentrt.observe.TraceEvent`."""
    if name == "RuntimeEvent":
        warnings.warn(
            "agentrt._runtime.runtime.RuntimeEvent is gone: observers receive agentrt.observe.TraceEvent "
            "(same kind, run_id and data, plus type, seq and at); import that instead",
            DeprecationWarning,
            stacklevel=2,
        )
        return TraceEvent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Runtime:
    """Drives many durable runs at once inside an asyncio program.

    ``store`` is a store object, or a location for :func:`agentrt.stores.open_store` (a SQLite file
    path, ``sqlite:///path``, ``postgresql://...``, ``memory:``); None: the store at ``AGENTRT_STORE``
    or ``.agentrt/agentrt.db``.  Every event of every run is also appended to the run's durable
    stream in the store (:meth:`events`, :meth:`subscribe`).  ``max_workers`` bounds the thread pool of sync
    tools.  ``step_budget_seconds`` (None: no limit) stops an agent computing
    longer than that between two awaits (AR110).  ``lease_seconds`` is how long
    another process must wait before taking over a run whose driver vanished
    without dying on this machine (a dead owner pid is taken over at once).

    Model requests (``task.llm``) are answered by ``executors`` (an
    :class:`~agentrt.llm.Executors`, a mapping, or an object with
    ``generate_text`` / ``stream_text`` / ``decide``); ``start`` and ``resume``
    refuse an agent whose code needs one that is missing.  ``max_model_calls``
    (per run) fails a run that asks for more, with cause ``max-model-calls``.

    Observation (purely watching; see :mod:`agentrt.observe`): ``on_trace``
    (one callable or a list) gets every :class:`~agentrt.observe.TraceEvent`;
    ``on_chunk(chunk, request)`` each streamed chunk; ``on_result(request,
    result)`` each model answer (normalized ``output`` / ``event`` and the
    executor's ``raw`` and ``usage``, once per attempt); ``on={"TypeName":
    handler, "*": handler}`` the events the agent emits with ``task.emit``.
    An observer that raises is logged once and switched off.  ``observers`` is
    the old name of ``on_trace`` (deprecated).

    The work is split by job, as trio splits its run loop: this class keeps the
    public API and the step loop (drive, step, checkpoint, finish, park);
    :mod:`~agentrt._runtime.dispatch` carries out requests,
    :mod:`~agentrt._runtime.pending` decides over them,
    :mod:`~agentrt._runtime.leases` holds leases and
    :mod:`~agentrt._runtime.observation` reports.
    """

    def __init__(
        self,
        store: Store | str | os.PathLike[str] | None = None,
        *,
        worker: bool = True,
        concurrency: int = 64,
        poll_seconds: float = 5.0,
        max_workers: int = 16,
        step_budget_seconds: float | None = DEFAULT_STEP_BUDGET_SECONDS,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        observers: list[TraceObserver] | None = None,
        executors: Any = None,  # anything as_executors accepts: Executors, a mapping, or a duck-typed object
        max_model_calls: int = DEFAULT_MAX_MODEL_CALLS,
        on_trace: TraceObserver | list[TraceObserver] | None = None,
        on_chunk: Callable[[str, ExecutorRequest], None] | None = None,
        on_result: Callable[[ExecutorRequest, Any], None] | None = None,  # the executor's own result object
        on: dict[str, Callable[[Any], None]] | None = None,  # handlers get the agent's emitted objects
        agent_limits: Mapping[str, int] | Mapping[Agent, int] | Mapping[Agent | str, int] | None = None,
    ) -> None:
        self._owns_store = store is None or isinstance(store, str | os.PathLike)
        if store is None or isinstance(store, str | os.PathLike):
            from agentrt.stores import open_store

            store = open_store(os.fspath(store) if store is not None else None)
        elif not hasattr(store, "create_run"):
            raise TypeError(
                "Runtime(store=...) takes a store object (agentrt.stores.SqliteStore, MemoryStore, ...), "
                f"a SQLite file path or a store URL, got {type(store).__name__}"
            )
        if concurrency < 1:
            raise ValueError(f"concurrency must be an int >= 1, got {concurrency!r}")
        #: Claims and drives the store's runnable runs inside ``async with`` (False: a client only).
        self.worker = worker
        self.concurrency = concurrency
        #: Agent spec -> how many of its runs may be driven at once across every worker of the store.
        self.agent_limits = check_limits(
            {(a if isinstance(a, str) else self._spec_of(a)): n for a, n in (agent_limits or {}).items()}
        )
        self.poll_seconds = float(poll_seconds)
        self._worker: Any = None
        if not isinstance(max_model_calls, int) or max_model_calls < 0:
            raise ValueError(f"max_model_calls must be an int >= 0, got {max_model_calls!r}")
        if observers is not None:
            warnings.warn(
                "Runtime(observers=...) is deprecated: pass on_trace=[...] (observers now receive "
                "agentrt.observe.TraceEvent, the one event type)",
                DeprecationWarning,
                stacklevel=2,
            )
        tracers = list(on_trace) if isinstance(on_trace, list) else [on_trace] if on_trace is not None else []
        self.store: Store = store
        self.step_budget_seconds = step_budget_seconds
        self._watchdog = Watchdog(step_budget_seconds) if step_budget_seconds else None
        self.leases = Leases(store, lease_seconds)
        self._stream = EventStream(store)
        self.observation = Observation(
            [*(observers or []), *tracers],
            on_chunk=on_chunk,
            on_result=on_result,
            on=on,
            recorder=self._stream,
        )
        self.executors = as_executors(executors)
        self.max_model_calls = max_model_calls
        self._dispatcher = Dispatcher(
            self, executors=self.executors, max_model_calls=max_model_calls, max_workers=max_workers
        )
        self._lives: dict[str, LiveRun] = {}
        self._drivers: dict[str, asyncio.Task[None]] = {}
        self._agents_by_spec: dict[str, Agent] = {}
        self._changed: asyncio.Event | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._entered = False  # set by __aenter__ (see ``entered``)
        self._driver_errors: dict[str, BaseException] = {}
        self._readopt: dict[str, tuple[RunRecord, Agent]] = {}  # claimed again while a stale driver ran
        # code_required texts judged here (agentrt._codec._requirement): restorable, or why not
        self._carried: dict[str, None] = {}  # ordered: the registry row keeps the newest
        self._lacking: dict[str, str] = {}
        #: Bumped whenever a requirement is judged (the worker registry writes its row again).
        self.judged_version = 0
        self._advertiser: Any = None  # the worker registry row, while this runtime is a worker
        #: The blocked runs this process blocked or tried (a worker tries each at most once).
        self.blocked_sweep = BlockedSweep(self.poll_seconds)

    @property
    def owner(self) -> str:
        """This runtime's lease owner id (``host/pid/nonce``)."""
        return self.leases.owner

    @property
    def lease_seconds(self) -> float:
        return self.leases.seconds

    @property
    def entered(self) -> bool:
        """Whether ``async with`` (or ``__aenter__``) started this runtime and it is not closed: a
        worker runtime is claiming and driving its store's runnable runs.  A host app that shares the
        runtime (``agentrt.asgi.create_app``) reads it to know whether it must start it itself."""
        return self._entered and not self._closed

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Runtime:
        self._ensure_started()
        self._entered = True
        if self.worker and self._worker is None:
            from agentrt._runtime.registry import Advertiser
            from agentrt._runtime.worker import Worker

            self._worker = Worker(self)
            self._worker.start()
            self._advertiser = Advertiser(self)
            self._advertiser.tick(force=True)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _ensure_started(self) -> None:
        if self._closed:
            raise RuntimeError("this Runtime is closed; create a new one")
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._stream.bind(self._loop)
            self._changed = asyncio.Event()
            self._renewer = self._loop.create_task(
                self.leases.renew_forever(lambda: list(self._drivers), on_tick=self._tick)
            )

    async def close(self) -> None:
        """Stop driving: runs in progress stay resumable from their last checkpoint."""
        if self._closed:
            return
        self._closed = True
        if self._worker is not None:
            await self._worker.stop()
        tasks: list[asyncio.Future[None]] = list(self._drivers.values())
        for live in self._lives.values():
            tasks.extend(live.inflight.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._renewer is not None:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)
        for run_id in list(self._lives):
            self.leases.release(run_id)
        self._lives.clear()
        if self._advertiser is not None:  # a clean stop: off the registry (a killed worker goes stale)
            self._advertiser.forget()
        self._dispatcher.close()
        self._stream.flush()  # the queued stream events, before the store may be closed
        if self._watchdog is not None:
            self._watchdog.close()
        if self._owns_store:
            self.store.close()

    async def drain(self, grace_seconds: float = 30.0) -> None:
        """Stop claiming, let the calls in flight finish and journal (up to ``grace_seconds``), then
        close: every lease is released, so other workers take the runs up at once (SIGTERM)."""
        if self._worker is not None:
            await self._worker.stop()
        inflight = [t for live in self._lives.values() for t in live.inflight.values()]
        if inflight:
            await asyncio.wait(inflight, timeout=grace_seconds)
        await self.close()

    def _tick(self) -> None:
        """Every lease-renewal interval: keep this worker's registry row current (cheap when idle)."""
        if self._advertiser is not None and not self._closed:
            self._advertiser.tick()

    def add_observer(self, observer: TraceObserver) -> None:
        """Register one more trace observer (the same registry as ``on_trace``)."""
        self.observation.add(observer)

    add_tracer = add_observer  # the name used before there was one event type

    def _emit(self, kind: str, run_id: str, /, **data: Any) -> None:
        self.observation.emit(kind, run_id, **data)

    def touch(self) -> None:
        """Wake whoever waits for a change of some run (``wait``, ``settle``)."""
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    # ------------------------------------------------------------------ public API

    async def start(
        self,
        agent: Agent,
        input: Any,
        run_id: str | None = None,
        *,
        priority: int = 0,
        deadline: float | datetime.timedelta | datetime.datetime | None = None,
        tenant: str | None = None,
    ) -> str:
        """Validate ``input``, record a new run and start driving it; returns its id.

        ``tenant``: the tenant the run belongs to (the HTTP API's tenant hook passes it), recorded in
        the transaction that creates the run, after validation; None: the run belongs to no tenant.

        ``deadline``: seconds from now (or a ``timedelta``), or an aware ``datetime``; past it the run
        is cancelled (:class:`~agentrt.DeadlineExceeded` at its pending await, status ``cancelled``),
        also while it waits with no process driving it.  Its sub-runs inherit it.
        """
        self._ensure_started()
        if not isinstance(agent, Agent):
            raise TypeError(f"Runtime.start needs an agent(...) value, got {agent!r}")
        value = agent.convert_input(input)
        self.check_executors(agent)
        run_id = run_id or uuid.uuid4().hex[:12]
        spec = self._spec_of(agent)
        at = deadline_at(deadline)
        if not self.worker or spec in self.agent_limits:
            # Queued for a worker: a client has none, and a limited agent's runs are taken only by
            # claims, which count the runs of that agent driven across the fleet.
            if spec.startswith(_LOCAL_PREFIX):
                raise AgentSpecError(
                    f"agent {agent.name!r} cannot be imported by name, so no worker could drive a run of it; "
                    "define it at module level (name = agent(...)) to submit runs of it"
                )
            self.store.create_run(
                NewRun(
                    run_id=run_id,
                    agent=spec,
                    input=to_jsonable(value),
                    status="queued",
                    priority=priority,
                    deadline=at,
                    tenant=tenant,
                )
            )
            if self.worker:
                self.register_agent(agent, spec)
            self._emit("queued", run_id, agent=agent.name, input=to_jsonable(value))
            self.touch()
            return run_id
        # Created leased to us, so no worker claims it before our driver's first step.
        self.store.create_run(
            NewRun(
                run_id=run_id,
                agent=spec,
                input=to_jsonable(value),
                owner=self.owner,
                ttl_seconds=self.lease_seconds,
                priority=priority,
                deadline=at,
                tenant=tenant,
            )
        )
        self.register_agent(agent, spec)
        self._emit("started", run_id, agent=agent.name, input=to_jsonable(value))
        self._schedule(run_id, explicit=True)
        return run_id

    async def cancel(self, run_id: str) -> list[str]:
        """Cancel the run and its unfinished sub-runs; returns their ids.

        Cooperative: each gets :class:`~agentrt.Cancelled` at the await it is suspended on
        (its ``finally`` blocks run) and ends ``cancelled``; a queued run is cancelled at once.
        A run driven by another process loses its lease and is taken up by a worker to be
        cancelled there."""
        self._ensure_started()
        self._get(run_id)
        ids = self.store.request_cancel(run_id)
        mine = [self._drivers[rid] for rid in ids if rid in self._drivers]
        for task in mine:
            task.cancel()  # its calls in flight are cancelled: nothing of theirs is journaled
        if mine:
            await asyncio.gather(*mine, return_exceptions=True)
        self._emit("cancel_requested", run_id, runs=ids)
        if self.worker:  # drive them to their end here (the store took their leases back)
            for rid in ids:
                rec = self.store.get_run(rid)
                if rec is not None and not rec.finished:
                    self._schedule(rid)
        self.touch()
        return ids

    async def resume(self, run_id: str) -> RunRecord:
        """Continue an interrupted run (or one whose timer or child is due, or a ``blocked`` one) from its
        last checkpoint.  A blocked run is tried at once: it goes on if the code loaded now allows it,
        else it is blocked again with the new finding (:mod:`agentrt._runtime.blocking`).

        Raises :class:`RunNotFound`, or :class:`LeaseHeld` when another live
        process drives it.  A finished run, or one waiting for a reply, is left as is.
        """
        self._ensure_started()
        rec = self._get(run_id)
        if rec.finished:
            return rec
        self.check_executors(self.agent_of(rec))
        self._emit("resumed", run_id, seq=rec.seq, status=rec.status)
        self._schedule(run_id, explicit=True)
        return rec

    async def retry(
        self, run_id: str, from_seq: int | None = None, *, words: RetryWords = RUNTIME_WORDS
    ) -> RunRecord:
        """Restart a ``failed`` or ``blocked`` run from its newest checkpoint (or checkpoint ``from_seq``)
        on the code loaded now, and drive it; returns its record, ``running`` again.

        Results that succeeded at that checkpoint are reused; calls that failed are made again (see
        :mod:`agentrt._runtime.retry`).  Raises :class:`~agentrt.CannotRetry` (not failed nor blocked,
        or the checkpoint cannot be restored here), ``CheckpointNotFound``, :class:`RunNotFound` or
        :class:`LeaseHeld`.  ``words``: how errors name the fix (the CLI and HTTP API pass theirs).
        """
        self._ensure_started()
        rec = self._get(run_id)
        check_retryable(self.store, rec, words)
        self.check_executors(self.agent_of(rec))
        seq = pick_checkpoint(self.store, rec, from_seq, words)
        rec = self.leases.acquire(run_id)
        try:
            check_retryable(self.store, rec, words)  # again, under the lease
            machine = None
            if seq is not None:
                blob = self.store.get_checkpoint(run_id, seq)
                assert blob is not None, "pick_checkpoint returns a kept checkpoint"
                try:
                    machine = self._restore_checkpoint(run_id, seq, blob)
                except IncompatibleBlob as exc:
                    raise unrestorable(run_id, seq, exc, words) from None
            new_seq = write_retry(self.store, rec, self.owner, rec.epoch, seq, machine)
        except BaseException:
            self.leases.release(run_id)
            raise
        self._emit("retried", run_id, from_seq=seq, seq=new_seq, previous_status=rec.status)
        self._schedule(run_id, explicit=True)
        return self._get(run_id)

    async def reply(self, run_id: str, value: Any) -> str:
        """Deliver ``value`` to the ``task.ui.ask`` the run waits on; returns the id of the run that got it.

        If ``run_id`` waits on a sub-agent that waits on a question, the reply goes
        to that sub-agent.  Raises :class:`NotWaiting` otherwise.
        """
        self._ensure_started()
        target = self._reply_target(self._get(run_id))
        if not self.worker:  # a client records the reply; the store wakes the run for a worker
            if not self.store.put_result(
                target.run_id,
                target.seq,
                0,
                True,
                encode_result(self.store, target.run_id, target.seq, 0, True, value),
            ):
                raise NotWaiting(
                    f"run {target.run_id!r} already has a reply for its question (seq {target.seq})"
                )
            self._emit("replied", target.run_id, seq=target.seq)
            return target.run_id
        self.check_executors(self.agent_of(target))  # before the reply is journaled and the run goes on
        rec = self.leases.acquire(target.run_id)
        try:
            reply = encode_value(value, seal_for(self.store, "value#0", target.run_id, rec.seq))
            if not self.store.put_result(target.run_id, rec.seq, 0, True, reply):
                raise NotWaiting(
                    f"run {target.run_id!r} already has a reply for its question (seq {rec.seq})"
                )
        except BaseException:
            if target.run_id not in self._drivers:
                self.store.release_lease(target.run_id, self.owner)
            raise
        live = self._lives.get(target.run_id)
        if live is not None and live.seq == rec.seq:
            live.results[0] = (True, value)
        self._emit("replied", target.run_id, seq=rec.seq)
        reason = self.lacking_reason(rec.code_required) if target.run_id not in self._drivers else ""
        if reason:  # recorded; a worker that carries the run's code goes on with it (the store woke it)
            self.leases.release(target.run_id)
            self._emit("released", target.run_id, reason=reason, code_required=rec.code_required)
            self._driver_errors[target.run_id] = IncompatibleBlob(reason)
            return target.run_id
        self._schedule(target.run_id, explicit=True)
        return target.run_id

    def _reply_target(self, rec: RunRecord) -> RunRecord:
        if rec.damaged is not None:  # its pending request may be one of the defaults
            column, why = rec.damaged
            raise RowDamaged(
                f"run {rec.run_id!r} cannot take a reply: its stored row is damaged (column {column}: "
                f"{why}); nothing was written. Repair the column in {self.store.location} (`agentrt "
                f"show {rec.run_id}` names it), then reply again",
                rec.run_id,
                column,
            )
        pending = rec.pending or {}
        if rec.finished:
            raise NotWaiting(f"run {rec.run_id!r} is {rec.status}; there is nothing to reply to")
        if pending.get("kind") == "ask":
            if self.store.get_results(rec.run_id, rec.seq):
                raise NotWaiting(
                    f"run {rec.run_id!r} already has a reply for its question; resume it instead"
                )
            return rec
        asking = [
            r for r in self._descendants(rec) if (r.pending or {}).get("kind") == "ask" and not r.finished
        ]
        asking = [r for r in asking if not self.store.get_results(r.run_id, r.seq)]
        if len(asking) == 1:
            return asking[0]
        what = describe_pending(rec.pending)
        if len(asking) > 1:
            ids = ", ".join(r.run_id for r in asking)
            raise NotWaiting(
                f"run {rec.run_id!r} has several sub-runs waiting for a reply ({ids}); reply to one"
            )
        raise NotWaiting(
            f"run {rec.run_id!r} is not waiting for a reply (status {rec.status}, {what}); "
            "only a run paused on task.ui.ask(...) takes Runtime.reply(...)"
        )

    def _descendants(self, rec: RunRecord) -> list[RunRecord]:
        out: list[RunRecord] = []
        stack = [rec]
        while stack:
            for child in self.store.children(stack.pop().run_id):
                out.append(child)
                stack.append(child)
        return out

    def check_executors(self, agent: Agent) -> None:
        """Raise :class:`~agentrt.llm.MissingExecutor` if ``agent`` (or a sub-agent) makes a kind of model
        request this runtime has no executor for -- before any run starts, rather than at its first call."""
        lacking = missing(agent, self.executors.kinds())
        if not lacking:
            return
        first = lacking[0]
        sites = "; ".join(f"agent {n.agent!r} calls task.llm.{n.kind} in {n.where}" for n in lacking)
        kinds = sorted({n.kind for n in lacking})
        raise MissingExecutor(
            first.agent,
            first.kind,
            first.where,
            f"this runtime has no {' / '.join(kinds)} executor, but {sites}. Pass "
            f"Runtime(executors=Executors({', '.join(k + '=...' for k in kinds)}))",
        )

    def lacking_reason(self, code_required: str | None) -> str:
        """Why this process cannot restore a checkpoint that needs ``code_required`` (a run row's text;
        see :mod:`agentrt._codec._requirement`), or "" when it can or nothing is recorded.  Judged once
        per distinct text, with the modules imported now (import the run's agent module first)."""
        if not code_required or code_required in self._carried:
            return ""
        reason = self._lacking.get(code_required)
        if reason is None:
            reason = lacking_code(code_required)
            if reason:
                self._note_lacking(code_required, reason)
            else:
                if len(self._carried) >= _MAX_JUDGED:
                    self._carried.clear()
                self._carried[code_required] = None
                self.judged_version += 1
        return reason

    def _note_lacking(self, code_required: str, reason: str) -> None:
        if len(self._lacking) >= _MAX_JUDGED:  # judged again, at the cost of one claim and release each
            self._lacking.clear()
        self._lacking[code_required] = reason
        self.judged_version += 1

    @property
    def lacking(self) -> list[str]:
        """The code requirements this process found it cannot meet (a worker's claims pass over them)."""
        return list(self._lacking)

    def judged(self) -> tuple[list[str], list[tuple[str, str]]]:
        """The code requirements judged here, oldest first: those this process carries, and those it
        lacks with why (what its worker registry row shows)."""
        return list(self._carried), list(self._lacking.items())

    @property
    def loaded_agents(self) -> Mapping[str, Agent]:
        """The agents this runtime has loaded or been given, by spec."""
        return self._agents_by_spec

    def runs(self, status: str | None = None, limit: int | None = None) -> list[RunRecord]:
        """The runs in the store, newest first; ``status`` keeps only those with that status."""
        return self.store.list_runs(status=status, limit=limit)

    def events(self, run_id: str, after: int = 0, limit: int | None = None) -> list[StreamEvent]:
        """The run's stored events with id > ``after`` (ids count 1, 2, 3... per run), oldest first.

        The same ids are what :meth:`subscribe` yields and what ``agentrt serve`` sends as SSE ids,
        so a reader that saw up to ``N`` resumes with ``after=N`` and misses nothing.
        """
        check_event_id(after, "Runtime.events(after=...)")
        self._get(run_id)
        return self._stream.events(run_id, after, limit)

    def subscribe(self, run_id: str, after: int = 0) -> AsyncIterator[StreamEvent]:
        """Iterate the run's events after ``after``: the stored ones, then each new one as it happens,
        until the run's end event (``completed`` / ``failed`` / ``cancelled``).  Works for runs driven by
        other processes too (it re-reads the store while nothing happens here)."""
        check_event_id(after, "Runtime.subscribe(after=...)")
        self._get(run_id)
        return self._stream.subscribe(run_id, after)

    def status(self, run_id: str) -> RunRecord:
        """The run's record as stored now (status, output or error, pending request, ...)."""
        return self._get(run_id)

    async def wait(self, run_id: str, timeout: float | None = None) -> Any:
        """Wait until the run completes and return its output (an instance of the agent's output class).

        If the run failed, raise its exception (original type where it can be
        rebuilt here, else :class:`RunFailed`); if it is blocked and no process is trying it now,
        raise :class:`~agentrt.RunBlocked`.  ``timeout`` raises ``TimeoutError``.
        """
        self._ensure_started()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            rec = self._get(run_id)
            if rec.status == "completed":
                return self._typed_output(rec)
            if rec.status in ("failed", "cancelled"):
                raise self.failure(rec)
            if rec.status == "blocked" and run_id not in self._drivers and not rec.lease_live():
                raise RunBlocked(run_id, rec.blocked or {})  # nobody is trying it now
            await self._wait_change(deadline)

    async def settle(self, run_id: str, timeout: float | None = None) -> RunRecord:
        """Wait until the run finished, or waits while this runtime has nothing left to do (nothing in
        flight, no timer armed): what ``agentrt run`` / ``resume`` wait for before exiting."""
        self._ensure_started()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            rec = self._get(run_id)
            if rec.finished or (not self._drivers and not self._dispatcher.timers_armed):
                return rec
            await self._wait_change(deadline)

    async def _wait_change(self, deadline: float | None) -> None:
        assert self._changed is not None
        remaining = 1.0 if deadline is None else min(1.0, deadline - time.monotonic())
        if remaining <= 0:
            raise TimeoutError("timed out waiting for the run")
        with contextlib.suppress(TimeoutError):  # poll the store too: another process may drive it
            await asyncio.wait_for(self._changed.wait(), remaining)

    def _get(self, run_id: str) -> RunRecord:
        rec = self.store.get_run(run_id)
        if rec is None:
            raise RunNotFound(run_id, self.store.location)
        return rec

    def register_agent(self, agent: Agent, spec: str | None = None) -> str:
        """Remember ``agent`` under ``spec`` (default: its own) and return the spec.

        The cache is the only way back to an agent that is not importable by name.
        """
        spec = spec or self._spec_of(agent)
        self._agents_by_spec.setdefault(spec, agent)
        return spec

    @staticmethod
    def _spec_of(agent: Agent) -> str:
        return agent_spec(agent) or f"{_LOCAL_PREFIX}{agent.name}@{id(agent):x}"

    def agent_of(self, rec: RunRecord) -> Agent:
        """The agent of a stored run (imports its module if needed)."""
        agent = self._agents_by_spec.get(rec.agent)
        if agent is not None:
            return agent
        if rec.agent.startswith(_LOCAL_PREFIX):
            raise AgentSpecError(
                f"run {rec.run_id!r} was started with an agent that cannot be imported by name "
                f"({rec.agent[len(_LOCAL_PREFIX) :]}), so only the runtime that started it can drive it; "
                "define the agent at module level (name = agent(...)) to resume it anywhere"
            )
        agent = load_agent(rec.agent)
        self._agents_by_spec[rec.agent] = agent
        return agent

    def _typed_output(self, rec: RunRecord) -> Any:
        try:
            return self.agent_of(rec).convert_output(rec.output)
        except Exception:
            return rec.output

    def failure(self, rec: RunRecord) -> BaseException:
        """The exception a failed run ended with (rebuilt from its blob where possible)."""
        if rec.error_blob:
            try:
                return decode_error(rec.error_blob, seal_for(self.store, "error", rec.run_id, None))
            except Exception:
                pass
        if rec.status == "cancelled":
            return Cancelled(rec.run_id)
        return RunFailed(rec.run_id, rec.error or {})

    # ------------------------------------------------------------------ scheduling

    def schedule(self, run_id: str) -> None:
        """Make sure a driver runs for ``run_id`` if its lease is free; wake it if it already runs."""
        self._schedule(run_id)

    def _schedule(self, run_id: str, *, explicit: bool = False) -> None:
        """Make sure a driver runs for ``run_id`` (taking its lease); wake it if it already runs.

        ``explicit``: the caller asked for this run, so a lease held elsewhere is an error to report.
        """
        if self._closed:
            return
        if run_id in self._drivers:
            live = self._lives.get(run_id)
            if live is not None and live.wakeup is not None:
                live.wakeup.set()
            return
        if self.agent_limits and not explicit:
            stored = self.store.get_run(run_id)
            if stored is not None and stored.agent in self.agent_limits:
                self.touch()  # a limited agent's runs are taken by claims only (they count the fleet)
                return
        try:
            rec = self.leases.acquire(run_id)
        except LeaseHeld:
            if explicit:
                raise
            return
        if rec.finished:
            self.leases.release(run_id)
            return
        try:
            agent = self.agent_of(rec)
        except BaseException:
            self.leases.release(run_id)
            raise
        self.adopt(rec, agent, explicit=explicit)

    def adopt(self, rec: RunRecord, agent: Agent, *, explicit: bool = False) -> None:
        """Start a driver for ``rec``, whose lease this runtime holds at ``rec.epoch``.

        ``explicit``: the caller asked for this run (``resume``, ``reply``, ``start``), so a checkpoint
        this process cannot restore is an error to report; otherwise (a claim, a local wake-up) the run
        is released at once for a worker that carries its code."""
        assert self._loop is not None
        run_id = rec.run_id
        live = self._lives.get(run_id)
        if run_id in self._drivers:
            if live is not None and live.epoch != rec.epoch:
                # Our lease lapsed (this process was paused) and we claimed the run again: the driver
                # still running holds the old epoch, so its next write is fenced off.  Its in-memory
                # state may be behind the store: start afresh from the store once it has stopped.
                self._readopt[run_id] = (rec, agent)
            return
        if live is None:
            live = self._lives[run_id] = LiveRun(run_id, agent)
        live.epoch = rec.epoch
        live.explicit = live.explicit or explicit
        live.cancel_requested = live.cancel_requested or rec.cancel_requested
        live.deadline = rec.deadline
        self._drivers[run_id] = self._loop.create_task(self._drive(live), name=f"agentrt-run-{run_id}")

    @property
    def driving(self) -> int:
        """How many runs this runtime drives right now."""
        return len(self._drivers)

    def deliver(self, run_id: str, seq: int, idx: int, ok: bool, blob: bytes) -> None:
        """Journal a result that arrived from outside a driver (child run, timer) and wake the run."""
        if not self.store.put_result(run_id, seq, idx, ok, blob):
            return
        live = self._lives.get(run_id)
        if live is not None and live.seq == seq and idx not in live.results:
            live.results[idx] = decode_result(self.store, run_id, seq, idx, ok, blob)
        elif live is None and not self._answered(run_id, seq):
            return  # parked and still waiting on other members: leave it out of memory
        self._schedule(run_id)

    def _answered(self, run_id: str, seq: int) -> bool:
        """Whether a parked run's pending request (at ``seq``) now has what it needs to go on."""
        rec = self.store.get_run(run_id)
        if rec is None or rec.finished or rec.seq != seq:
            return rec is not None and not rec.finished
        oks = [ok for ok, _blob in self.store.get_results(run_id, seq).values()]
        return answered_in_store(rec.pending, oks)

    def _notify_parent(self, run_id: str, ok: bool, value: Any) -> None:
        rec = self.store.get_run(run_id)
        if rec is None or rec.parent_id is None or rec.parent_seq is None:
            return
        idx = rec.parent_idx or 0
        parent, seq = rec.parent_id, rec.parent_seq
        try:
            blob = encode_result(self.store, parent, seq, idx, ok, value)
        except Exception as exc:
            ok, blob = False, encode_result(self.store, parent, seq, idx, False, exc)
        self.deliver(rec.parent_id, rec.parent_seq, idx, ok, blob)

    # ------------------------------------------------------------------ the driver

    async def _drive(self, live: LiveRun) -> None:
        """The step loop of one run: step, checkpoint, dispatch, wait for results, until it ends or parks."""
        run_id = live.run_id
        try:
            if live.machine is None:
                try:
                    self._load(live)
                except CorruptBlob as exc:  # a replayed blob or a rolled-back history: blocked, kept
                    self._block(live, refusal_finding(exc), [])
                    self._driver_errors[run_id] = exc
                    return
                except IncompatibleBlob as exc:
                    if live.code_required is None and not live.explicit:
                        raise  # a claim of a run with no recorded requirement: its lease lapses (no hot loop)
                    if live.explicit:  # asked for here: blocked and reported (a worker with its code goes on)
                        if live.code_required is not None:
                            self._note_lacking(live.code_required, str(exc))
                        self._block(live, unrestorable_finding(exc, live.seq), [])
                        self._driver_errors[run_id] = exc
                    else:
                        self._release_unrestorable(live, exc)
                    return
            slice_end = time.monotonic() + SLICE_SECONDS
            while True:
                if time.monotonic() >= slice_end:  # steps whose calls never waited: let the loop run
                    await asyncio.sleep(0)
                    slice_end = time.monotonic() + SLICE_SECONDS
                if live.lease_lost is not None:
                    raise live.lease_lost
                if live.deadline is not None and not live.cancel_thrown and time.time() >= live.deadline:
                    live.cancel_requested = True
                if live.cancel_requested and not live.cancel_thrown:
                    live.cancel_thrown = True
                    if not self._cancel(live):
                        return
                    continue
                if live.payload is START:
                    if not self._advance(live, True, None):
                        return
                    continue
                ready = verdict(live.payload, live.results)
                if ready is None:
                    if self._dispatcher.calls_directly(live):  # the common step: one tool call
                        await self._dispatcher.call(live)
                    else:
                        self._dispatcher.dispatch(live)
                    ready = verdict(live.payload, live.results)
                if ready is not None:
                    if not self._advance(live, ready.ok, ready.value):
                        return
                    continue
                if live.inflight:
                    await self._wait_inflight(live)
                    slice_end = time.monotonic() + SLICE_SECONDS
                    continue
                self._park(live)
                return
        except LeaseLost as exc:
            self._emit("lease_lost", run_id, message=str(exc))
            self._evict(live, release=False)
        except RowDamaged as exc:  # its row, not the host, is wrong: blocked with the finding, kept
            self._driver_errors[run_id] = exc
            try:
                self._block(live, refusal_finding(exc), [])
            except Exception:  # the store cannot even record that: as any failure of the host
                self._evict(live, release=False)
        except asyncio.CancelledError:
            self._evict(live, release=True)
            raise
        except Exception as exc:  # a failure of the host (store, codec): the run stays resumable
            self._emit("driver_error", run_id, error=f"{type(exc).__name__}: {exc}")
            # The lease is kept until it expires: a worker retries the run after lease_seconds
            # instead of claiming it again at once, in a loop, while the cause persists.
            self._evict(live, release=False)
            self._driver_errors[run_id] = exc
        finally:
            self._drivers.pop(run_id, None)
            again = self._readopt.pop(run_id, None)
            if again is not None and not self._closed:
                self._lives.pop(run_id, None)
                self.adopt(*again)
            self.touch()

    async def _wait_inflight(self, live: LiveRun) -> None:
        """Wait until a call in flight finishes, or (for a run that also waits outside) a wake-up."""
        if len(live.inflight) == 1 and live.deadline is None and not waits_outside(live.payload):
            # One call and nothing else to wait for (the common step): await its task itself, which
            # costs one loop turn less than asyncio.wait.  Cancelling the driver cancels the call,
            # as _evict would.  The task catches what the call raises; an error of the host (the
            # store failing to journal) comes out here and stops the driver, the run resumable.
            (task,) = live.inflight.values()
            await task
            return
        waiters: list[asyncio.Future[Any]] = list(live.inflight.values())
        wake: asyncio.Task[Any] | None = None
        if waits_outside(live.payload):
            live.wakeup = asyncio.Event()
            wake = asyncio.ensure_future(live.wakeup.wait())
            waiters.append(wake)
        timeout = None  # until the deadline, where the step loop throws DeadlineExceeded
        if live.deadline is not None and not live.cancel_thrown:
            timeout = max(live.deadline - time.time(), 0.0)
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if wake is not None:
                wake.cancel()
            live.wakeup = None

    def _cancel(self, live: LiveRun) -> bool:
        """Throw :class:`Cancelled` into the run at its pending await.  False: the run finished."""
        for task in live.inflight.values():
            task.cancel()
        live.inflight.clear()
        error: Cancelled = Cancelled(live.run_id)
        if live.deadline is not None and time.time() >= live.deadline:
            error = DeadlineExceeded(live.run_id, live.deadline)
        if live.payload is START:  # never stepped: nothing to unwind
            assert live.machine is not None
            live.machine.discard()
            self._finish_failed(live, error, [])
            return False
        return self._advance(live, False, error)

    def _release_unrestorable(self, live: LiveRun, exc: IncompatibleBlob) -> None:
        """A run claimed (or woken here) whose checkpoint this process cannot restore: not a failure
        of the run nor of this process.  Its lease is given back at once and its code requirement
        remembered, so this worker's claims pass over it and one that carries its code takes it."""
        if live.code_required is not None:
            self._note_lacking(live.code_required, str(exc))
        self._emit("released", live.run_id, reason=str(exc), code_required=live.code_required)
        self._evict(live, release=True)

    def driver_error(self, run_id: str) -> BaseException | None:
        """The host-side error (store, codec, blob) that stopped driving ``run_id`` here, if any."""
        return self._driver_errors.get(run_id)

    def _evict(self, live: LiveRun, *, release: bool) -> None:
        for task in live.inflight.values():
            task.cancel()
        live.inflight.clear()
        if release and live.unjournaled:  # stopping (close, cancel): keep what was answered
            with contextlib.suppress(Exception):
                self._journal_deferred(live)
        live.unjournaled = []
        self._lives.pop(live.run_id, None)
        if release:
            self.leases.release(live.run_id)

    def _restore_checkpoint(self, run_id: str, seq: int, blob: bytes) -> Machine:
        """The run's machine from its checkpoint: signed with the store's key, of this run and sequence."""
        seal = seal_for(self.store, "checkpoint", run_id, seq)
        return Machine._set_checked(blob, seal.ring, seal.requirement())

    def _load(self, live: LiveRun) -> None:
        """Rebuild the run's machine from its newest checkpoint (or from its input)."""
        rec = self._get(live.run_id)
        if rec.damaged is not None:  # a defaulted input or usage must not drive the run on
            column, why = rec.damaged
            raise RowDamaged(
                f"run {live.run_id}: its stored row is damaged (column {column}: {why}), so it is not "
                f"driven; repair the column in {self.store.location} (`agentrt show {live.run_id}` "
                "names it), then resume it",
                live.run_id,
                column,
            )
        live.usage = dict(rec.usage)
        live.cancel_requested = live.cancel_requested or rec.cancel_requested
        live.deadline = rec.deadline
        checkpoint = self.store.latest_checkpoint(live.run_id)
        if checkpoint is None:
            check_history(self.store, rec, None)
            live.checkpoint_digest = b""
            value = live.agent.convert_input(rec.input)
            live.machine = Machine(live.agent.run, value, live.agent.make_task(live.run_id))
            live.seq = 0
            live.payload = START
            live.results = {}
            return
        seq, blob = checkpoint
        live.code_required = rec.code_required
        live.seq = seq  # named by the finding if it cannot be restored here
        live.machine = self._restore_checkpoint(live.run_id, seq, blob)  # the blob's own checks first
        check_history(self.store, rec, checkpoint)  # then: is it the newest this store signed?
        check_chain(self.store, live.run_id, seq, blob)
        live.checkpoint_digest = blob_digest(blob)
        live.payload = live.machine.pending
        live.results = {}
        for idx, (ok, data) in self.store.get_results(live.run_id, seq).items():
            live.results[idx] = decode_result(self.store, live.run_id, seq, idx, ok, data)

    # -- stepping

    def _advance(self, live: LiveRun, ok: bool, arg: Any) -> bool:
        """Step the machine once (``step(arg)`` if ``ok``, else ``throw(arg)``); checkpoint the next
        suspension or record the outcome.  False: the run finished."""
        machine = live.machine
        assert machine is not None, "a live run being stepped has a machine"
        if isinstance(arg, ModelCallBudgetExceeded):  # fails the run; the agent does not get to catch it
            machine.discard()
            self._finish_failed(live, arg, [])
            return False
        recorder = StepRecorder(live.run_id)
        watchdog = self._watchdog
        how = machine.step if ok else machine.throw
        try:
            with recording(recorder):
                if watchdog is not None:
                    watchdog.arm()
                    try:
                        out = how(arg)
                    finally:
                        watchdog.disarm()
                else:
                    out = how(arg)
        except BudgetInterrupt as interrupt:
            function, filename, lineno = innermost_agent_frame(interrupt.__traceback__)
            error = StepBudgetExceeded(function, filename, lineno, self.step_budget_seconds)
            error.__traceback__ = interrupt.__traceback__
            self._finish_failed(live, error, self._events(live, recorder))
            return False
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            self._finish_failed(live, exc, self._events(live, recorder))
            return False
        events = self._events(live, recorder)
        if isinstance(out, Done):
            self._finish_completed(live, out.value, events)
            return False
        if not isinstance(out, REQUESTS):
            live.machine = None
            not_a_request = TypeError(
                f"AR102: agent {live.agent.name!r} suspended with {out!r}, which is not an agentrt request; "
                "await task.tools.NAME(...), task.llm.generate_text(...), task.gather([...]), "
                "task.ui.ask(...) "
                "or task.sleep(...) instead "
                "of calling agentrt.suspend directly"
            )
            self._finish_failed(live, not_a_request, events)
            return False
        live.seq += 1
        live.payload = out
        live.results = {}
        try:
            blob = machine._signed_get(
                keyring_for_store(self.store).write,
                checkpoint_bind(self.store, live.run_id, live.seq, live.checkpoint_digest),
            )
        except Exception as exc:  # CannotCrossAwait and friends: blocked at the last good checkpoint
            live.seq -= 1
            self._block(live, refusal_finding(exc), events)
            return False
        pending = summarize(out)
        code = live.code_required = code_requirement(blob)
        live.checkpoint_digest = blob_digest(blob)
        if live.unjournaled:
            self.store.save_checkpoint(  # the store declares Capability.JOURNAL_WITH_CHECKPOINT
                live.run_id,
                self.owner,
                live.seq,
                blob,
                pending,
                events,
                epoch=live.epoch,
                journal=live.unjournaled,
                code_required=code,
            )
            live.unjournaled = []
        else:
            self.store.save_checkpoint(
                live.run_id, self.owner, live.seq, blob, pending, events, epoch=live.epoch, code_required=code
            )
        self.observation.emit("checkpoint", live.run_id, seq=live.seq, size_bytes=len(blob), request=pending)
        return True

    def _events(self, live: LiveRun, recorder: StepRecorder) -> list[EventRow]:
        rows: list[EventRow] = []
        for n, event in enumerate(recorder.events):
            rows.append((live.seq, n, event.kind, event.level, event.data))
            self._emit(event.kind, live.run_id, **{**event.data, "level": event.level})
            if event.kind == "emit":
                self.observation.emitted(event.data.get("type"), event.obj)
        return rows

    def _journal_deferred(self, live: LiveRun) -> None:
        """Journal the results whose entry was to ride on the next checkpoint, when there is none."""
        entries, live.unjournaled = live.unjournaled, []
        for seq, idx, ok, blob in entries:
            self.store.put_result(live.run_id, seq, idx, ok, blob, None, owner=self.owner, epoch=live.epoch)

    def _finish_completed(self, live: LiveRun, value: Any, events: list[EventRow]) -> None:
        self._journal_deferred(live)
        agent = live.agent
        try:
            if not isinstance(value, agent.output):
                value = agent.convert_output(value)
            output_json = to_jsonable(value)
        except (SchemaError, TypeError) as exc:
            if not isinstance(exc, SchemaError):
                exc = SchemaError("output", f"is not JSON data: {exc}", agent=agent.name)
            self._finish_failed(live, exc, events)
            return
        live.machine = None
        if self.store.finish_run(
            live.run_id, self.owner, "completed", output=output_json, events=events, epoch=live.epoch
        ):
            self._emit("completed", live.run_id, output=output_json)
        self._lives.pop(live.run_id, None)
        self.leases.release(live.run_id)
        self.touch()
        self._notify_parent(live.run_id, True, value)

    def _finish_failed(self, live: LiveRun, exc: BaseException, events: list[EventRow]) -> None:
        self._journal_deferred(live)
        live.machine = None
        record = error_record(exc)
        try:
            blob = encode_error(exc, seal_for(self.store, "error", live.run_id, None))
        except Exception:
            blob = None
        status = "cancelled" if isinstance(exc, Cancelled) else "failed"
        if self.store.finish_run(
            live.run_id, self.owner, status, error=record, error_blob=blob, events=events, epoch=live.epoch
        ):
            self._emit(status, live.run_id, error=record)
        self._lives.pop(live.run_id, None)
        self.leases.release(live.run_id)
        self.touch()
        self._notify_parent(live.run_id, False, exc)

    def _block(self, live: LiveRun, finding: dict[str, Any], events: list[EventRow]) -> None:
        """The run cannot go on here (see :mod:`agentrt._runtime.blocking`): record it ``blocked`` at
        its last good checkpoint, with the results it holds journaled, and drop it from memory."""
        for task in live.inflight.values():  # none is expected: a step waits for what it needs
            task.cancel()
        live.inflight.clear()
        self._journal_deferred(live)
        if live.machine is not None:
            live.machine.discard()  # no finally / __exit__ runs: the run goes on from its checkpoint
        live.machine = None
        if self.store.block_run(live.run_id, self.owner, finding, events, epoch=live.epoch):
            self._emit("blocked", live.run_id, seq=live.seq, blocked=finding)
        self.blocked_sweep.note(live.run_id, live.code_required)
        self._lives.pop(live.run_id, None)
        self.leases.release(live.run_id)
        self.touch()

    def _park(self, live: LiveRun) -> None:
        """The run waits on something that is not a tool call: store it, drop it from memory."""
        self._journal_deferred(live)
        waiting_on, wake_at = parked_on(live.payload, live.results)
        if live.deadline is not None and not live.cancel_thrown:  # a worker wakes it to cancel it
            wake_at = live.deadline if wake_at is None else min(wake_at, live.deadline)
        self.store.set_waiting(live.run_id, self.owner, waiting_on, wake_at, [], epoch=live.epoch)
        data: dict[str, Any] = {"waiting_on": waiting_on, "seq": live.seq}
        if waiting_on == "reply":
            data["prompt"] = jsonable_or_repr(live.payload.prompt) if isinstance(live.payload, Ask) else None
        if wake_at is not None:
            data["wake_at"] = wake_at
        self._emit("waiting", live.run_id, **data)
        live.machine = None
        live.results = {}
        self._lives.pop(live.run_id, None)
        self.leases.release(live.run_id)


def deadline_at(deadline: float | datetime.timedelta | datetime.datetime | None) -> float | None:
    """A run's deadline as ``time.time()`` seconds: from seconds or a ``timedelta`` from now, or an
    aware ``datetime``."""
    if deadline is None:
        return None
    if isinstance(deadline, datetime.datetime):
        if deadline.tzinfo is None:
            raise ValueError(
                f"deadline={deadline!r} has no time zone; pass an aware datetime "
                "(datetime.now(timezone.utc) + ...) or seconds from now"
            )
        return deadline.timestamp()
    if isinstance(deadline, datetime.timedelta):
        return time.time() + deadline.total_seconds()
    if isinstance(deadline, int | float) and not isinstance(deadline, bool) and deadline > 0:
        return time.time() + float(deadline)
    raise ValueError(
        f"deadline must be seconds from now (> 0), a timedelta or an aware datetime, got {deadline!r}"
    )


def default_store_path() -> str:
    return os.environ.get("AGENTRT_STORE") or os.path.join(".agentrt", "agentrt.db")
