"""``Runtime``: the durable scheduler, asyncio-native -- its public API and its collaborators.

A runtime drives many runs at once inside an asyncio program.  The work is split by job, as trio
splits its run loop, each part behind a small interface:

- :mod:`~agentrt._runtime.stepper` decides, purely, what a run does next (checkpoint, dispatch,
  park, finish, fail, block), and :mod:`~agentrt._runtime.driver` is the I/O shell that does it;
- :mod:`~agentrt._runtime.dispatch` carries out requests (one handler per request kind);
- :mod:`~agentrt._runtime.storeio` is the one seam to the store: no store call blocks the loop;
- :mod:`~agentrt._runtime.worker` claims runnable runs, :mod:`~agentrt._runtime.registry`
  advertises this worker, :mod:`~agentrt._runtime.requirements` judges code requirements,
  :mod:`~agentrt._runtime.agents` maps specs to agents, :mod:`~agentrt._runtime.leases` holds
  leases and :mod:`~agentrt._runtime.observation` reports.

As a worker (``async with Runtime(store=...)``, the default) the runtime also claims every runnable
run of its store: queued runs, interrupted ones, due timers, runs whose reply or children arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any  # Any: agent inputs, outputs and answers are user values

from agentrt._runtime.agents import LOCAL_PREFIX, AgentRegistry, spec_of
from agentrt._runtime.blocking import BlockedSweep
from agentrt._runtime.budget import Watchdog
from agentrt._runtime.driver import Driver
from agentrt._runtime.encoding import checkpoint_bind, encode_result, encode_value, seal_for
from agentrt._runtime.leases import Leases
from agentrt._runtime.observation import Observation, TraceObserver
from agentrt._runtime.pending import summarize
from agentrt._runtime.registry import Advertiser
from agentrt._runtime.replies import deadline_at, reply_target
from agentrt._runtime.requirements import CodeJudge
from agentrt._runtime.retry import (
    RUNTIME_WORDS,
    RetryWords,
    check_retryable,
    pick_checkpoint,
    unrestorable,
    write_retry,
)
from agentrt._runtime.stepper import Stepper
from agentrt._runtime.storeio import StoreIO
from agentrt._runtime.stream import EventStream, check_event_id
from agentrt._runtime.worker import Worker
from agentrt._sdk.agent import Agent
from agentrt._sdk.schema import to_jsonable
from agentrt.exceptions import (
    AgentSpecError,
    IncompatibleBlob,
    MissingExecutor,
    NotWaiting,
    RunBlocked,
    RunNotFound,
)
from agentrt.keys import keyring_for_store
from agentrt.llm import ExecutorRequest, as_executors
from agentrt.llm import unserved_requests as missing
from agentrt.lowlevel import Machine
from agentrt.stores.base import NewRun, RunRecord, Store, StreamEvent, check_limits

__all__ = ["DEFAULT_STEP_BUDGET_SECONDS", "Runtime", "summarize"]

DEFAULT_STEP_BUDGET_SECONDS = 5.0
DEFAULT_MAX_MODEL_CALLS = 100
DEFAULT_LEASE_SECONDS = 10.0


class Runtime:
    """Drives many durable runs at once inside an asyncio program.

    ``store`` is a store object, or a location for :func:`agentrt.stores.open_store` (a SQLite file
    path, ``sqlite:///path``, ``postgresql://...``, ``memory:``); None: the store at ``AGENTRT_STORE``
    or ``.agentrt/agentrt.db``.  Every event of every run is also appended to the run's durable stream
    in the store (:meth:`events`, :meth:`subscribe`).  ``max_workers`` bounds the thread pool of sync
    tools.  ``step_budget_seconds`` (None: no limit) stops an agent computing longer than that between
    two awaits (AR110).  ``lease_seconds`` is how long another process must wait before taking over a
    run whose driver vanished without being seen to die (a dead owner pid on this machine, or on
    PostgreSQL an owner whose session ended, is taken over at once).

    Model requests (``task.llm``) are answered by ``executors`` (an :class:`~agentrt.llm.Executors`, a
    mapping, or an object with ``generate_text`` / ``stream_text`` / ``decide``); ``start`` and
    ``resume`` refuse an agent whose code needs one that is missing.  ``max_model_calls`` (per run)
    fails a run that asks for more, with cause ``max-model-calls``.

    Observation (purely watching; see :mod:`agentrt.observe`): ``on_trace`` (one callable or a list)
    gets every :class:`~agentrt.observe.TraceEvent`; ``on_chunk(chunk, request)`` each streamed chunk;
    ``on_result(request, result)`` each model answer (normalized ``output`` / ``event`` and the
    executor's ``raw`` and ``usage``, once per attempt); ``on={"TypeName": handler, "*": handler}`` the
    events the agent emits with ``task.emit``.  An observer that raises is logged once and switched off.

    Its collaborators (see the module docstring) are built here and declared as attributes; the worker
    and the registry see the runtime only through their ``WorkerHost`` / ``AdvertiserHost`` protocols.
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
            {(a if isinstance(a, str) else spec_of(a)): n for a, n in (agent_limits or {}).items()}
        )
        self.poll_seconds = float(poll_seconds)
        self._worker: Worker | None = None
        if not isinstance(max_model_calls, int) or max_model_calls < 0:
            raise ValueError(f"max_model_calls must be an int >= 0, got {max_model_calls!r}")
        tracers = list(on_trace) if isinstance(on_trace, list) else [on_trace] if on_trace is not None else []
        self.store: Store = store
        #: The one seam to the store: every store call of the drivers and the worker goes through it.
        self.io = StoreIO(store)
        self.step_budget_seconds = step_budget_seconds
        self._watchdog = Watchdog(step_budget_seconds) if step_budget_seconds else None
        self.leases = Leases(store, lease_seconds)
        self._stream = EventStream(store, io=self.io)
        self.observation = Observation(
            tracers,
            on_chunk=on_chunk,
            on_result=on_result,
            on=on,
            recorder=self._stream,
        )
        self.executors = as_executors(executors)
        self.max_model_calls = max_model_calls
        self.agents = AgentRegistry()
        self.judge = CodeJudge()
        self.stepper = Stepper(
            sign=self._sign, watchdog=self._watchdog, step_budget_seconds=step_budget_seconds
        )
        self.driver = Driver(
            store=store,
            io=self.io,
            leases=self.leases,
            observation=self.observation,
            stepper=self.stepper,
            agents=self.agents,
            judge=self.judge,
            agent_limits=self.agent_limits,
            touch=self.touch,
            executors=self.executors,
            max_model_calls=max_model_calls,
            max_workers=max_workers,
            poll_seconds=self.poll_seconds,
        )
        #: The blocked runs this process blocked or tried (a worker tries each at most once).
        self.blocked_sweep: BlockedSweep = self.driver.blocked_sweep
        self._changed: asyncio.Event | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._entered = False  # set by __aenter__ (see ``entered``)
        self._advertiser: Advertiser | None = None  # the worker registry row, while this runtime is a worker

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

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Runtime:
        self._ensure_started()
        self._entered = True
        if self.worker and self._worker is None:
            self._advertiser = Advertiser(self)
            await self._advertiser.tick(force=True)
            # Started last: it claims once the host's code waits (after its retry/resume, Driver.exclusive)
            self._worker = Worker(self)
            self._worker.start()
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
                self.leases.renew_forever(self.io, lambda: list(self.driver.drivers), on_tick=self._tick)
            )

    async def close(self) -> None:
        """Stop driving: runs in progress stay resumable from their last checkpoint."""
        if self._closed:
            return
        self._closed = True
        if self._worker is not None:
            await self._worker.stop()
        await self.driver.close()
        if self._renewer is not None:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)
        if self._advertiser is not None:  # a clean stop: off the registry (a killed worker goes stale)
            await self._advertiser.forget()
        if not self._owns_store:  # a shared store handle outlives this runtime: its owner's session ends
            await self.io(self.leases.end_session)
        self._stream.flush()  # the queued stream events, before the store may be closed
        await self.io.aclose()
        if self._watchdog is not None:
            self._watchdog.close()
        if self._owns_store:
            self.store.close()

    async def drain(self, grace_seconds: float = 30.0) -> None:
        """Stop claiming, let the calls in flight finish and journal (up to ``grace_seconds``), then
        close: every lease is released, so other workers take the runs up at once (SIGTERM)."""
        if self._worker is not None:
            await self._worker.stop()
        inflight = [t for live in self.driver.lives.values() for t in live.inflight.values()]
        if inflight:
            await asyncio.wait(inflight, timeout=grace_seconds)
        await self.close()

    async def _tick(self) -> None:
        """Every lease-renewal interval: keep this worker's registry row current (cheap when idle)."""
        if self._advertiser is not None and not self._closed:
            await self._advertiser.tick()

    def add_observer(self, observer: TraceObserver) -> None:
        """Register one more trace observer (the same registry as ``on_trace``)."""
        self.observation.add(observer)

    def emit(self, kind: str, run_id: str, /, **data: Any) -> None:
        """Report one thing a run did to the observers and the run's event stream."""
        self.observation.emit(kind, run_id, **data)

    def touch(self) -> None:
        """Wake whoever waits for a change of some run (``wait``, ``settle``)."""
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    async def changed(self) -> None:
        """Return when some run of this runtime changes (a driver ends, a run is queued)."""
        if self._changed is None:
            await asyncio.Future()  # never started: nothing changes
        else:
            await self._changed.wait()

    def _sign(self, machine: Machine, run_id: str, seq: int, chain: bytes) -> bytes:
        """The stepper's signer: the machine's checkpoint, signed with the store's key and bound to it."""
        return machine.get_bound(
            keyring_for_store(self.store).write, checkpoint_bind(self.store, run_id, seq, chain)
        )

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
        spec = spec_of(agent)
        at = deadline_at(deadline)
        if not self.worker or spec in self.agent_limits:
            # Queued for a worker: a client has none, and a limited agent's runs are taken only by
            # claims, which count the runs of that agent driven across the fleet.
            if spec.startswith(LOCAL_PREFIX):
                raise AgentSpecError(
                    f"agent {agent.name!r} cannot be imported by name, so no worker could drive a run of it; "
                    "define it at module level (name = agent(...)) to submit runs of it"
                )
            await self.io(
                self.store.create_run,
                NewRun(
                    run_id=run_id,
                    agent=spec,
                    input=to_jsonable(value),
                    status="queued",
                    priority=priority,
                    deadline=at,
                    tenant=tenant,
                ),
            )
            if self.worker:
                self.register_agent(agent, spec)
            self.emit("queued", run_id, agent=agent.name, input=to_jsonable(value))
            self.touch()
            return run_id
        # Created leased to us, so no worker claims it before our driver's first step.
        await self.io(
            self.store.create_run,
            NewRun(
                run_id=run_id,
                agent=spec,
                input=to_jsonable(value),
                owner=self.owner,
                ttl_seconds=self.lease_seconds,
                priority=priority,
                deadline=at,
                tenant=tenant,
            ),
        )
        self.register_agent(agent, spec)
        self.emit("started", run_id, agent=agent.name, input=to_jsonable(value))
        await self.driver.schedule(run_id, explicit=True)
        return run_id

    async def cancel(self, run_id: str) -> list[str]:
        """Cancel the run and its unfinished sub-runs; returns their ids.

        Cooperative: each gets :class:`~agentrt.Cancelled` at the await it is suspended on
        (its ``finally`` blocks run) and ends ``cancelled``; a queued run is cancelled at once.
        A run driven by another process loses its lease and is taken up by a worker to be
        cancelled there."""
        self._ensure_started()
        await self._read(run_id)
        ids = await self.io(self.store.request_cancel, run_id)
        drivers = self.driver.drivers
        mine = [drivers[rid] for rid in ids if rid in drivers]
        for task in mine:
            task.cancel()  # its calls in flight are cancelled: nothing of theirs is journaled
        if mine:
            await asyncio.gather(*mine, return_exceptions=True)
        self.emit("cancel_requested", run_id, runs=ids)
        if self.worker:  # drive them to their end here (the store took their leases back)
            for rid in ids:
                rec = await self.io(self.store.get_run, rid)
                if rec is not None and not rec.finished:
                    await self.driver.schedule(rid)
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
        async with self.driver.exclusive(run_id):
            rec = await self._read(run_id)
            if rec.finished:
                return rec
            self.check_executors(self.agent_of(rec))
            self.emit("resumed", run_id, seq=rec.seq, status=rec.status)
            await self.driver.schedule_held(run_id, explicit=True)
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
        async with self.driver.exclusive(run_id):
            io, store = self.io, self.store
            rec = await self._read(run_id)
            await io(check_retryable, store, rec, words)
            self.check_executors(self.agent_of(rec))
            seq = await io(pick_checkpoint, store, rec, from_seq, words)
            rec = await io(self.leases.acquire, run_id)
            try:
                await io(check_retryable, store, rec, words)  # again, under the lease
                machine = None
                if seq is not None:
                    blob = await io(store.get_checkpoint, run_id, seq)
                    assert blob is not None, "pick_checkpoint returns a kept checkpoint"
                    try:
                        machine = self._restore_checkpoint(run_id, seq, blob)
                    except IncompatibleBlob as exc:
                        raise unrestorable(run_id, seq, exc, words) from None
                new_seq = await io(write_retry, store, rec, self.owner, rec.epoch, seq, machine)
            except BaseException:
                await io(self.leases.release, run_id)
                raise
            self.emit("retried", run_id, from_seq=seq, seq=new_seq, previous_status=rec.status)
            await self.driver.schedule_held(run_id, explicit=True)
            return await self._read(run_id)

    async def reply(self, run_id: str, value: Any) -> str:
        """Deliver ``value`` to the ``task.ui.ask`` the run waits on; returns the id of the run that got it.

        If ``run_id`` waits on a sub-agent that waits on a question, the reply goes
        to that sub-agent.  Raises :class:`NotWaiting` otherwise.
        """
        self._ensure_started()
        io, store = self.io, self.store
        target = await io(reply_target, store, await self._read(run_id))
        if not self.worker:  # a client records the reply; the store wakes the run for a worker
            if not await io(
                store.put_result,
                target.run_id,
                target.seq,
                0,
                True,
                encode_result(store, target.run_id, target.seq, 0, True, value),
            ):
                raise NotWaiting(
                    f"run {target.run_id!r} already has a reply for its question (seq {target.seq})"
                )
            self.emit("replied", target.run_id, seq=target.seq)
            return target.run_id
        self.check_executors(self.agent_of(target))  # before the reply is journaled and the run goes on
        rec = await io(self.leases.acquire, target.run_id)
        try:
            reply = encode_value(value, seal_for(store, "value#0", target.run_id, rec.seq))
            if not await io(store.put_result, target.run_id, rec.seq, 0, True, reply):
                raise NotWaiting(
                    f"run {target.run_id!r} already has a reply for its question (seq {rec.seq})"
                )
        except BaseException:
            if target.run_id not in self.driver.drivers:
                await io(store.release_lease, target.run_id, self.owner)
            raise
        live = self.driver.lives.get(target.run_id)
        if live is not None and live.seq == rec.seq:
            live.results[0] = (True, value)
        self.emit("replied", target.run_id, seq=rec.seq)
        reason = self.lacking_reason(rec.code_required) if target.run_id not in self.driver.drivers else ""
        if reason:  # recorded; a worker that carries the run's code goes on with it (the store woke it)
            await self.release(target.run_id)
            self.emit("released", target.run_id, reason=reason, code_required=rec.code_required)
            self.note_driver_error(target.run_id, IncompatibleBlob(reason))
            return target.run_id
        await self.driver.schedule(target.run_id, explicit=True)
        return target.run_id

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
            rec = await self._read(run_id)
            if rec.finished:
                await self._settled(run_id)
            if rec.status == "completed":
                return self._typed_output(rec)
            if rec.status in ("failed", "cancelled"):
                raise self.failure(rec)
            if rec.status == "blocked" and run_id not in self.driver.drivers and not rec.lease_live():
                raise RunBlocked(run_id, rec.blocked or {})  # nobody is trying it now
            await self._wait_change(deadline)

    async def settle(self, run_id: str, timeout: float | None = None) -> RunRecord:
        """Wait until the run finished, or waits while this runtime has nothing left to do (nothing in
        flight, no timer armed): what ``agentrt run`` / ``resume`` wait for before exiting."""
        self._ensure_started()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            changed, idle = self._changed, self.driver.idle
            rec = await self._read(run_id)  # off the loop: runs may move meanwhile
            if rec.finished or (idle and self.driver.idle and self._changed is changed):
                await self._settled(run_id)
                return rec
            if self._changed is changed or (deadline is not None and time.monotonic() >= deadline):
                await self._wait_change(deadline)

    async def _wait_change(self, deadline: float | None) -> None:
        assert self._changed is not None
        remaining = 1.0 if deadline is None else min(1.0, deadline - time.monotonic())
        if remaining <= 0:
            raise TimeoutError("timed out waiting for the run")
        with contextlib.suppress(TimeoutError):  # poll the store too: another process may drive it
            await asyncio.wait_for(self._changed.wait(), remaining)

    def _get(self, run_id: str) -> RunRecord:
        """The run's record, read on the caller's thread (the synchronous API: ``status``, ``events``)."""
        rec = self.store.get_run(run_id)
        if rec is None:
            raise RunNotFound(run_id, self.store.location)
        return rec

    async def _read(self, run_id: str) -> RunRecord:
        """The run's record, read off the loop."""
        rec = await self.io(self.store.get_run, run_id)
        if rec is None:
            raise RunNotFound(run_id, self.store.location)
        return rec

    async def _settled(self, run_id: str) -> None:
        """Once a run ended: its driver has finished here (its end event is reported) and its
        events are stored, so a reader after ``wait`` sees them all."""
        task = self.driver.drivers.get(run_id)
        if task is not None and task is not asyncio.current_task():
            with contextlib.suppress(BaseException):
                await asyncio.shield(task)
        await self._stream.settled(run_id)

    # ------------------------------------------------------------------ agents and code

    def register_agent(self, agent: Agent, spec: str | None = None) -> str:
        """Remember ``agent`` under ``spec`` (default: its own) and return the spec.

        The cache is the only way back to an agent that is not importable by name.
        """
        return self.agents.register(agent, spec)

    def agent_of(self, rec: RunRecord) -> Agent:
        """The agent of a stored run (imports its module if needed)."""
        return self.agents.agent_of(rec)

    @property
    def loaded_agents(self) -> Mapping[str, Agent]:
        """The agents this runtime has loaded or been given, by spec."""
        return self.agents.loaded

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
        return self.judge.lacking_reason(code_required)

    @property
    def lacking(self) -> list[str]:
        """The code requirements this process found it cannot meet (a worker's claims pass over them)."""
        return self.judge.lacking

    @property
    def judged_version(self) -> int:
        """Bumped whenever a code requirement is judged (the worker registry writes its row again)."""
        return self.judge.version

    def judged(self) -> tuple[list[str], list[tuple[str, str]]]:
        """The code requirements judged here, oldest first: those this process carries, and those it
        lacks with why (what its worker registry row shows)."""
        return self.judge.judged()

    def _typed_output(self, rec: RunRecord) -> Any:
        try:
            return self.agent_of(rec).convert_output(rec.output)
        except Exception:
            return rec.output

    def failure(self, rec: RunRecord) -> BaseException:
        """The exception a failed run ended with (rebuilt from its blob where possible)."""
        return self.driver.failure(rec)

    def _restore_checkpoint(self, run_id: str, seq: int, blob: bytes) -> Machine:
        """The run's machine from its checkpoint: signed with the store's key, of this run and sequence."""
        return self.driver.restore_checkpoint(run_id, seq, blob)

    # ------------------------------------------------------------------ scheduling (the driver's)

    def schedule(self, run_id: str) -> None:
        """Make sure a driver runs for ``run_id`` if its lease is free; wake it if it already runs
        (soon: the lease is taken off the loop)."""
        self._ensure_started()
        self.driver.schedule_soon(run_id)

    async def schedule_run(self, run_id: str) -> None:
        """:meth:`schedule`, awaited."""
        await self.driver.schedule(run_id)

    def adopt(self, rec: RunRecord, agent: Agent, *, explicit: bool = False) -> None:
        """Start a driver for ``rec``, whose lease this runtime holds at ``rec.epoch``.

        ``explicit``: the caller asked for this run (``resume``, ``reply``, ``start``), so a checkpoint
        this process cannot restore is an error to report; otherwise (a claim, a local wake-up) the run
        is released at once for a worker that carries its code."""
        self.driver.adopt(rec, agent, explicit=explicit)

    async def release(self, run_id: str) -> None:
        """Give the lease on ``run_id`` back (off the loop)."""
        await self.io(self.leases.release, run_id)

    @property
    def driving(self) -> int:
        """How many runs this runtime drives right now."""
        return self.driver.driving

    def driver_error(self, run_id: str) -> BaseException | None:
        """The host-side error (store, codec, blob) that stopped driving ``run_id`` here, if any."""
        return self.driver.driver_errors.get(run_id)

    def note_driver_error(self, run_id: str, exc: BaseException) -> None:
        """Remember why ``run_id`` could not be driven here (:meth:`driver_error`)."""
        self.driver.driver_errors[run_id] = exc
