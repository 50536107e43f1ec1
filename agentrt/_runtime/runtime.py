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
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs

from agentrt._runtime.budget import BudgetInterrupt, Watchdog, innermost_agent_frame
from agentrt._runtime.encoding import decode_error, decode_value, encode_error, encode_value, error_record
from agentrt._runtime.stream import EventStream
from agentrt._sdk.agent import Agent, agent_spec, load_agent
from agentrt._sdk.errors import (
    AgentSpecError,
    LeaseHeld,
    NotWaiting,
    RunFailed,
    RunNotFound,
    SchemaError,
    StepBudgetExceeded,
    ToolError,
)
from agentrt._sdk.requests import REQUEST_TYPES, Ask, ChildRun, Fulfilled, Gather, Rejected, Sleep, ToolCall
from agentrt._sdk.schema import jsonable_or_repr, to_jsonable
from agentrt._sdk.task import StepRecorder, recording
from agentrt._sdk.tools import IDEMPOTENCY_PARAM, Tool
from agentrt.llm._contract import ExecutorRequest, Usage, as_executors
from agentrt.llm._host import Outcome, build_request, execute
from agentrt.llm._needs import missing
from agentrt.llm.errors import MissingExecutor, ModelCallBudgetExceeded
from agentrt.llm.requests import ModelCall
from agentrt.lowlevel import Done, Machine
from agentrt.observe import TraceEvent, trace_type
from agentrt.stores.base import (
    EventRow,
    LeaseLost,
    NewRun,
    RunRecord,
    Store,
    StreamEvent,
    add_usage,
    make_owner,
)

__all__ = ["DEFAULT_STEP_BUDGET_SECONDS", "Runtime", "RuntimeEvent", "summarize"]

DEFAULT_STEP_BUDGET_SECONDS = 5.0
DEFAULT_MAX_MODEL_CALLS = 100
DEFAULT_LEASE_SECONDS = 10.0
_LOCAL_PREFIX = "<local>:"


@attrs.frozen
class RuntimeEvent:
    """What the runtime reports to observers (the CLI's live progress and JSON logs)."""

    kind: str  # started resumed checkpoint tool_started tool_finished child_started notify log emit
    #            waiting completed failed
    run_id: str
    data: dict[str, Any] = attrs.field(factory=dict)
    at: float = attrs.field(factory=time.time)


def summarize(request: Any) -> dict[str, Any]:
    """A JSON description of a pending request (kept with each checkpoint, shown by ``agentrt show``)."""
    if isinstance(request, ToolCall):
        return {"kind": "tool", "name": request.name, "kwargs": jsonable_or_repr(request.kwargs)}
    if isinstance(request, ChildRun):
        return {"kind": "agent", "name": request.name, "input": jsonable_or_repr(request.kwargs)}
    if isinstance(request, Ask):
        return {"kind": "ask", "prompt": jsonable_or_repr(request.prompt)}
    if isinstance(request, Sleep):
        return {"kind": "sleep", "seconds": request.seconds, "until": request.until}
    if isinstance(request, ModelCall):
        text = request.prompt if request.prompt is not None else str(request.messages[-1].get("content", ""))
        return {
            "kind": "llm",
            "method": request.kind,
            "src": request.src,
            "model": request.model,
            "prompt": text if len(text) <= 200 else text[:199] + "…",
        }
    if isinstance(request, Gather):
        return {
            "kind": "gather",
            "settled": request.settled,
            "requests": [summarize(r) for r in request.requests],
        }
    return {"kind": "unknown", "repr": repr(request)}


_START = object()  # the payload of a run that has not been stepped yet


@attrs.define(eq=False)
class _Live:
    """A run this runtime is driving or about to drive."""

    run_id: str
    agent: Agent
    machine: Machine | None = None
    seq: int = 0
    payload: Any = None
    results: dict[int, tuple[bool, Any]] = attrs.field(factory=dict)
    inflight: dict[int, asyncio.Task[None]] = attrs.field(factory=dict)
    wakeup: asyncio.Event | None = None
    model_calls: int = 0  # model calls made here whose result is not journaled yet
    usage: dict[str, int] = attrs.field(factory=dict)  # the run's journaled usage (we hold its lease)


#: What an agent may suspend with.
_REQUESTS = (*REQUEST_TYPES, ModelCall)
#: Members the driver runs itself (in flight in this process) rather than waiting for outside.
_IN_PROCESS = (ToolCall, ModelCall)


def _members(payload: Any) -> tuple[Any, ...]:
    return payload.requests if isinstance(payload, Gather) else (payload,)


class Runtime:
    """Drives many durable runs at once inside an asyncio program.

    ``store`` is a store object, or a location for :func:`agentrt.stores.open_store` (a SQLite file
    path, ``sqlite:///path``, ``memory:``); None: the SQLite store at ``AGENTRT_STORE`` or
    ``.agentrt/agentrt.db``.  Every event of every run is also appended to the run's durable
    stream in the store (:meth:`events`, :meth:`subscribe`).  ``max_workers`` bounds the thread pool of sync
    tools.  ``step_budget_seconds`` (None: no limit) stops an agent computing
    longer than that between two awaits (AR110).  ``lease_seconds`` is how long
    another process must wait before taking over a run whose driver vanished
    without dying on this machine (a dead owner pid is taken over at once).
    ``observers`` receive a :class:`RuntimeEvent` for everything that happens.

    Model requests (``task.llm``) are answered by ``executors`` (an
    :class:`~agentrt.llm.Executors`, a mapping, or an object with
    ``generate_text`` / ``stream_text`` / ``decide``); ``start`` and ``resume``
    refuse an agent whose code needs one that is missing.  ``max_model_calls``
    (per run) fails a run that asks for more, with cause ``max-model-calls``.
    Observation (purely watching; see :mod:`agentrt.observe`): ``on_trace``
    gets every :class:`~agentrt.observe.TraceEvent`; ``on_chunk(chunk, request)``
    each streamed chunk; ``on_result(request, result)`` each model answer
    (normalized ``output`` / ``event`` and the executor's ``raw`` and ``usage``,
    once per attempt); ``on={"TypeName": handler, "*": handler}`` the events the
    agent emits with ``task.emit``.
    """

    def __init__(
        self,
        store: Store | str | os.PathLike[str] | None = None,
        *,
        max_workers: int = 16,
        step_budget_seconds: float | None = DEFAULT_STEP_BUDGET_SECONDS,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        observers: list[Callable[[RuntimeEvent], None]] | None = None,
        executors: Any = None,
        max_model_calls: int = DEFAULT_MAX_MODEL_CALLS,
        on_trace: Callable[[TraceEvent], None] | list[Callable[[TraceEvent], None]] | None = None,
        on_chunk: Callable[[str, ExecutorRequest], None] | None = None,
        on_result: Callable[[ExecutorRequest, Any], None] | None = None,
        on: dict[str, Callable[[Any], None]] | None = None,
    ) -> None:
        if store is None or isinstance(store, str | os.PathLike):
            from agentrt.stores import open_store

            store = open_store(None if store is None else os.fspath(store))
        elif not hasattr(store, "create_run"):
            raise TypeError(
                f"Runtime(store=...) takes a store object (agentrt.stores.SqliteStore, MemoryStore, ...), "
                f"a SQLite file path or a store URL, got {type(store).__name__}"
            )
        self.store: Store = store
        self.owner = make_owner()
        self.lease_seconds = float(lease_seconds)
        self.step_budget_seconds = step_budget_seconds
        self._watchdog = Watchdog(step_budget_seconds) if step_budget_seconds else None
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="agentrt-tool")
        self._observers: list[Callable[[RuntimeEvent], None]] = list(observers or [])
        self.executors = as_executors(executors)
        if not isinstance(max_model_calls, int) or max_model_calls < 0:
            raise ValueError(f"max_model_calls must be an int >= 0, got {max_model_calls!r}")
        self.max_model_calls = max_model_calls
        self._tracers: list[Callable[[TraceEvent], None]] = (
            list(on_trace) if isinstance(on_trace, list) else [on_trace] if on_trace is not None else []
        )
        self._stream = EventStream(self.store)
        self._tracers.insert(0, self._stream)
        self._on_chunk = on_chunk
        self._on_result = on_result
        self._on_emitted: dict[str, Callable[[Any], None]] = dict(on or {})
        self._trace_seq: dict[str, int] = {}
        self._lives: dict[str, _Live] = {}
        self._drivers: dict[str, asyncio.Task[None]] = {}
        self._timers: dict[tuple[str, int, int], asyncio.TimerHandle] = {}
        self._agents_by_spec: dict[str, Agent] = {}
        self._changed: asyncio.Event | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._driver_errors: dict[str, BaseException] = {}

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Runtime:
        self._ensure_started()
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
            self._renewer = self._loop.create_task(self._renew_leases())

    async def close(self) -> None:
        """Stop driving: runs in progress stay resumable from their last checkpoint."""
        if self._closed:
            return
        self._closed = True
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        tasks = list(self._drivers.values())
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
            self._release(run_id)
        self._lives.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._watchdog is not None:
            self._watchdog.close()

    def add_observer(self, observer: Callable[[RuntimeEvent], None]) -> None:
        self._observers.append(observer)

    def add_tracer(self, on_trace: Callable[[TraceEvent], None]) -> None:
        self._tracers.append(on_trace)

    def _emit(self, kind: str, run_id: str, /, **data: Any) -> None:
        if self._observers:
            event = RuntimeEvent(kind, run_id, data)
            for observer in self._observers:
                with contextlib.suppress(Exception):  # an observer must never break a run
                    observer(event)
        if self._tracers:
            n = self._trace_seq.get(run_id, 0)
            self._trace_seq[run_id] = n + 1
            trace = TraceEvent(trace_type(kind), run_id, n, time.time(), kind, data)
            for tracer in self._tracers:
                with contextlib.suppress(Exception):
                    tracer(trace)

    def _touch(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    # ------------------------------------------------------------------ public API

    async def start(self, agent: Agent, input: Any, run_id: str | None = None) -> str:
        """Validate ``input``, record a new run and start driving it; returns its id."""
        self._ensure_started()
        if not isinstance(agent, Agent):
            raise TypeError(f"Runtime.start needs an agent(...) value, got {agent!r}")
        value = agent.convert_input(input)
        self.check_executors(agent)
        run_id = run_id or uuid.uuid4().hex[:12]
        spec = self._spec_of(agent)
        self.store.create_run(NewRun(run_id=run_id, agent=spec, input=to_jsonable(value)))
        self._remember(spec, agent)
        self._emit("started", run_id, agent=agent.name, input=to_jsonable(value))
        self._schedule(run_id, explicit=True)
        return run_id

    async def resume(self, run_id: str) -> RunRecord:
        """Continue an interrupted run (or one whose timer or child is due) from its last checkpoint.

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

    async def reply(self, run_id: str, value: Any) -> str:
        """Deliver ``value`` to the ``task.ui.ask`` the run waits on; returns the id of the run that got it.

        If ``run_id`` waits on a sub-agent that waits on a question, the reply goes
        to that sub-agent.  Raises :class:`NotWaiting` otherwise.
        """
        self._ensure_started()
        target = self._reply_target(self._get(run_id))
        self.check_executors(self.agent_of(target))  # before the reply is journaled and the run goes on
        rec = self.store.acquire_lease(target.run_id, self.owner, self.lease_seconds)
        try:
            if not self.store.put_result(target.run_id, rec.seq, 0, True, encode_value(value)):
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
        self._schedule(target.run_id, explicit=True)
        return target.run_id

    def _reply_target(self, rec: RunRecord) -> RunRecord:
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
        what = _describe_pending(rec)
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

    def runs(self, status: str | None = None, limit: int | None = None) -> list[RunRecord]:
        """The runs in the store, newest first; ``status`` keeps only those with that status."""
        return self.store.list_runs(status=status, limit=limit)

    def events(self, run_id: str, after: int = 0, limit: int | None = None) -> list[StreamEvent]:
        """The run's stored events with id > ``after`` (ids count 1, 2, 3... per run), oldest first.

        The same ids are what :meth:`subscribe` yields and what ``agentrt serve`` sends as SSE ids,
        so a reader that saw up to ``N`` resumes with ``after=N`` and misses nothing.
        """
        self._get(run_id)
        return self._stream.events(run_id, after, limit)

    def subscribe(self, run_id: str, after: int = 0) -> AsyncIterator[StreamEvent]:
        """Iterate the run's events after ``after``: the stored ones, then each new one as it happens,
        until the run's end event (``completed`` / ``failed``).  Works for runs driven by other processes
        too (it re-reads the store while nothing happens here)."""
        self._get(run_id)
        return self._stream.subscribe(run_id, after)

    def status(self, run_id: str) -> RunRecord:
        """The run's record as stored now (status, output or error, pending request, ...)."""
        return self._get(run_id)

    async def wait(self, run_id: str, timeout: float | None = None) -> Any:
        """Wait until the run completes and return its output (an instance of the agent's output class).

        If the run failed, raise its exception (original type where it can be
        rebuilt here, else :class:`RunFailed`).  ``timeout`` raises ``TimeoutError``.
        """
        self._ensure_started()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            rec = self._get(run_id)
            if rec.status == "completed":
                return self._typed_output(rec)
            if rec.status == "failed":
                raise self._failure(rec)
            await self._wait_change(deadline)

    async def settle(self, run_id: str, timeout: float | None = None) -> RunRecord:
        """Wait until the run finished, or waits while this runtime has nothing left to do (nothing in
        flight, no timer armed): what ``agentrt run`` / ``resume`` wait for before exiting."""
        self._ensure_started()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            rec = self._get(run_id)
            if rec.finished or (not self._drivers and not self._timers):
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

    def _remember(self, spec: str, agent: Agent) -> None:
        """Cache the agent of ``spec`` (the only way back to an agent that is not importable by name)."""
        self._agents_by_spec.setdefault(spec, agent)

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

    def _failure(self, rec: RunRecord) -> BaseException:
        if rec.error_blob:
            try:
                return decode_error(rec.error_blob)
            except Exception:
                pass
        return RunFailed(rec.run_id, rec.error or {})

    # ------------------------------------------------------------------ scheduling

    def _schedule(self, run_id: str, *, explicit: bool = False) -> None:
        """Make sure a driver runs for ``run_id`` (taking its lease); wake it if it already runs."""
        if self._closed:
            return
        if run_id in self._drivers:
            live = self._lives.get(run_id)
            if live is not None and live.wakeup is not None:
                live.wakeup.set()
            return
        try:
            self.store.acquire_lease(run_id, self.owner, self.lease_seconds)
        except LeaseHeld:
            if explicit:
                raise
            return
        assert self._loop is not None
        live = self._lives.get(run_id)
        if live is None:
            rec = self._get(run_id)
            try:
                agent = self.agent_of(rec)
            except BaseException:
                self.store.release_lease(run_id, self.owner)
                raise
            live = self._lives[run_id] = _Live(run_id, agent)
        self._drivers[run_id] = self._loop.create_task(self._drive(live), name=f"agentrt-run-{run_id}")

    def _release(self, run_id: str) -> None:
        with contextlib.suppress(Exception):
            self.store.release_lease(run_id, self.owner)

    async def _renew_leases(self) -> None:
        interval = max(self.lease_seconds / 3, 0.05)
        while True:
            await asyncio.sleep(interval)
            held = list(self._drivers)
            if held:
                with contextlib.suppress(Exception):
                    self.store.renew_leases(self.owner, held, self.lease_seconds)

    # ------------------------------------------------------------------ the driver

    async def _drive(self, live: _Live) -> None:
        run_id = live.run_id
        try:
            if live.machine is None:
                self._load(live)
            while True:
                if live.payload is _START:
                    if not self._advance(live, live.machine.step, None):  # type: ignore[union-attr]
                        return
                    continue
                ready = self._ready(live)
                if ready is None:
                    self._dispatch(live)
                    ready = self._ready(live)
                if ready is not None:
                    if not self._advance(live, *ready):
                        return
                    continue
                if live.inflight:
                    waiters: list[asyncio.Future[Any]] = list(live.inflight.values())
                    wake: asyncio.Task[Any] | None = None
                    if any(not isinstance(m, _IN_PROCESS) for m in _members(live.payload)):
                        live.wakeup = asyncio.Event()
                        wake = asyncio.ensure_future(live.wakeup.wait())
                        waiters.append(wake)
                    try:
                        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        if wake is not None:
                            wake.cancel()
                        live.wakeup = None
                    continue
                self._park(live)
                return
        except LeaseLost as exc:
            self._emit("lease_lost", run_id, message=str(exc))
            self._evict(live, release=False)
        except asyncio.CancelledError:
            self._evict(live, release=True)
            raise
        except Exception as exc:  # a failure of the host (store, codec): the run stays resumable
            self._emit("driver_error", run_id, error=f"{type(exc).__name__}: {exc}")
            self._evict(live, release=True)
            self._driver_errors[run_id] = exc
        finally:
            self._drivers.pop(run_id, None)
            self._touch()

    def driver_error(self, run_id: str) -> BaseException | None:
        """The host-side error (store, codec, blob) that stopped driving ``run_id`` here, if any."""
        return self._driver_errors.get(run_id)

    def _evict(self, live: _Live, *, release: bool) -> None:
        for task in live.inflight.values():
            task.cancel()
        live.inflight.clear()
        self._lives.pop(live.run_id, None)
        if release:
            self._release(live.run_id)

    def _load(self, live: _Live) -> None:
        """Rebuild the run's machine from its newest checkpoint (or from its input)."""
        rec = self._get(live.run_id)
        live.usage = dict(rec.usage)
        checkpoint = self.store.latest_checkpoint(live.run_id)
        if checkpoint is None:
            value = live.agent.convert_input(rec.input)
            live.machine = Machine(live.agent.run, value, live.agent.make_task(live.run_id))
            live.seq = 0
            live.payload = _START
            live.results = {}
            return
        seq, blob = checkpoint
        live.machine = Machine.set(blob)
        live.seq = seq
        live.payload = live.machine.pending
        live.results = {}
        for idx, (ok, data) in self.store.get_results(live.run_id, seq).items():
            live.results[idx] = (True, decode_value(data)) if ok else (False, decode_error(data))

    # -- stepping

    def _advance(self, live: _Live, how: Callable[[Any], Any], arg: Any) -> bool:
        """Step the machine once; checkpoint the next suspension or record the outcome.  False: finished."""
        if isinstance(arg, ModelCallBudgetExceeded):  # fails the run; the agent does not get to catch it
            if live.machine is not None:
                live.machine.discard()
            self._finish_failed(live, arg, [])
            return False
        recorder = StepRecorder(live.run_id)
        watchdog = self._watchdog
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
        if not isinstance(out, _REQUESTS):
            live.machine = None
            not_a_request = TypeError(
                f"AR103: agent {live.agent.name!r} suspended with {out!r}, which is not an agentrt request; "
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
            blob = live.machine.get()  # type: ignore[union-attr]
        except Exception as exc:  # CannotCrossAwait and friends: the agent holds something uncheckpointable
            self._finish_failed(live, exc, events)
            return False
        pending = summarize(out)
        self.store.save_checkpoint(live.run_id, self.owner, live.seq, blob, pending, events)
        self._emit("checkpoint", live.run_id, seq=live.seq, size_bytes=len(blob), request=pending)
        return True

    def _events(self, live: _Live, recorder: StepRecorder) -> list[EventRow]:
        rows: list[EventRow] = []
        for n, event in enumerate(recorder.events):
            rows.append((live.seq, n, event.kind, event.level, event.data))
            self._emit(event.kind, live.run_id, **{**event.data, "level": event.level})
            if event.kind == "emit" and self._on_emitted:
                for key in (event.data.get("type"), "*"):
                    handler = self._on_emitted.get(key) if isinstance(key, str) else None
                    if handler is not None:
                        with contextlib.suppress(Exception):
                            handler(event.obj)
        return rows

    def _finish_completed(self, live: _Live, value: Any, events: list[EventRow]) -> None:
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
        if self.store.finish_run(live.run_id, self.owner, "completed", output=output_json, events=events):
            self._emit("completed", live.run_id, output=output_json)
        self._lives.pop(live.run_id, None)
        self._release(live.run_id)
        self._touch()
        self._notify_parent(live.run_id, True, value)

    def _finish_failed(self, live: _Live, exc: BaseException, events: list[EventRow]) -> None:
        live.machine = None
        record = error_record(exc)
        try:
            blob = encode_error(exc)
        except Exception:
            blob = None
        if self.store.finish_run(
            live.run_id, self.owner, "failed", error=record, error_blob=blob, events=events
        ):
            self._emit("failed", live.run_id, error=record)
        self._lives.pop(live.run_id, None)
        self._release(live.run_id)
        self._touch()
        self._notify_parent(live.run_id, False, exc)

    def _notify_parent(self, run_id: str, ok: bool, value: Any) -> None:
        rec = self.store.get_run(run_id)
        if rec is None or rec.parent_id is None or rec.parent_seq is None:
            return
        idx = rec.parent_idx or 0
        try:
            blob = encode_value(value) if ok else encode_error(value)
        except Exception as exc:
            ok, blob = False, encode_error(exc)
        self._deliver(rec.parent_id, rec.parent_seq, idx, ok, blob)

    def _deliver(self, run_id: str, seq: int, idx: int, ok: bool, blob: bytes) -> None:
        """Journal a result that arrived from outside a driver (child run, timer) and wake the run."""
        if not self.store.put_result(run_id, seq, idx, ok, blob):
            return
        live = self._lives.get(run_id)
        if live is not None and live.seq == seq and idx not in live.results:
            live.results[idx] = (True, decode_value(blob)) if ok else (False, decode_error(blob))
        elif live is None and not self._answered(run_id, seq):
            return  # parked and still waiting on other members: leave it out of memory
        self._schedule(run_id)

    def _answered(self, run_id: str, seq: int) -> bool:
        """Whether a parked run's pending request (at ``seq``) now has what it needs to go on."""
        rec = self.store.get_run(run_id)
        if rec is None or rec.finished or rec.seq != seq:
            return rec is not None and not rec.finished
        pending = rec.pending or {}
        if pending.get("kind") != "gather":
            return True
        results = self.store.get_results(run_id, seq)
        if len(results) >= len(pending.get("requests", ())):
            return True
        return not pending.get("settled") and any(not ok for ok, _blob in results.values())

    # -- results

    def _ready(self, live: _Live) -> tuple[Callable[[Any], Any], Any] | None:
        """``(machine.step, value)`` or ``(machine.throw, exc)`` when the pending request is answered."""
        machine = live.machine
        assert machine is not None
        payload, results = live.payload, live.results
        for ok, value in results.values():  # a spent model-call budget ends the run, settled or not
            if not ok and isinstance(value, ModelCallBudgetExceeded):
                return machine.throw, value
        if isinstance(payload, Gather):
            n = len(payload.requests)
            if payload.settled:
                if len(results) < n:
                    return None
                values = [Fulfilled(v) if ok else Rejected(v) for ok, v in (results[i] for i in range(n))]
                return machine.step, values
            for i in range(n):
                if i in results and not results[i][0]:
                    return machine.throw, results[i][1]
            if len(results) < n:
                return None
            return machine.step, [results[i][1] for i in range(n)]
        if 0 not in results:
            return None
        ok, value = results[0]
        return (machine.step, value) if ok else (machine.throw, value)

    def _dispatch(self, live: _Live) -> None:
        members = _members(live.payload)
        gather = isinstance(live.payload, Gather)
        for idx, request in enumerate(members):
            if idx in live.results or idx in live.inflight:
                continue
            if isinstance(request, ToolCall):
                key = f"{live.run_id}:{live.seq}" + (f".{idx}" if gather else "")
                live.inflight[idx] = asyncio.ensure_future(self._call_tool(live, live.seq, idx, request, key))
            elif isinstance(request, ChildRun):
                self._start_child(live, idx, request, gather)
            elif isinstance(request, ModelCall):
                live.inflight[idx] = asyncio.ensure_future(self._call_model(live, live.seq, idx, request))
            elif isinstance(request, Sleep):
                self._arm_timer(live.run_id, live.seq, idx, request)
            # Ask: nothing to dispatch; the run waits for reply()

    def _journal(
        self, live: _Live, seq: int, idx: int, ok: bool, value: Any, usage: dict[str, int] | None = None
    ) -> None:
        try:
            blob = encode_value(value) if ok else encode_error(value)
        except Exception as exc:
            ok = False
            value = ToolError(
                type(exc).__name__,
                f"the result of the request could not be journaled: {exc}",
            )
            blob = encode_error(value)
        if not self.store.put_result(live.run_id, seq, idx, ok, blob, usage):
            return
        if usage:
            live.usage = add_usage(live.usage, usage)
        if live.seq == seq:
            # Deliver what a restart would deliver: the journaled copy, not the tool's own object.
            live.results[idx] = (True, decode_value(blob)) if ok else (False, decode_error(blob))

    async def _call_tool(self, live: _Live, seq: int, idx: int, request: ToolCall, key: str) -> None:
        try:
            tool = live.agent.tools.get(request.name)
            started = time.monotonic()
            self._emit("tool_started", live.run_id, tool=request.name, seq=seq, idx=idx, key=key)
            try:
                if not isinstance(tool, Tool):
                    raise ToolError(
                        "LookupError", f"agent {live.agent.name!r} has no tool {request.name!r} (seq {seq})"
                    )
                kwargs = dict(request.kwargs)
                if tool.takes_idempotency_key:
                    kwargs[IDEMPOTENCY_PARAM] = key
                if tool.is_async:
                    value = await tool.fn(**kwargs)
                else:
                    assert self._loop is not None
                    value = await self._loop.run_in_executor(self._pool, functools.partial(tool.fn, **kwargs))
                ok = True
            except asyncio.CancelledError as cancelled:
                if _cancelled_from_outside():
                    raise  # the runtime is stopping: nothing to journal, the call is made again on resume
                # Journaled as a failure, else the run would wait for this call forever.
                value = RuntimeError(f"tool {request.name!r} was cancelled from inside (seq {seq})")
                value.__cause__ = cancelled
                ok = False
            except Exception as exc:
                value, ok = exc, False
            failure = {} if ok else {"error": f"{type(value).__name__}: {value}"}
            self._emit(
                "tool_finished",
                live.run_id,
                tool=request.name,
                seq=seq,
                idx=idx,
                ok=ok,
                seconds=time.monotonic() - started,
                **failure,
            )
            self._journal(live, seq, idx, ok, value)
        finally:
            if live.inflight.get(idx) is asyncio.current_task():
                del live.inflight[idx]

    async def _call_model(self, live: _Live, seq: int, idx: int, call: ModelCall) -> None:
        """Answer one model request through the executors and journal the answer with its usage."""
        run_id = live.run_id
        made = 0

        def before_call(req: ExecutorRequest) -> None:
            nonlocal made
            journaled = live.usage.get("model_calls", 0)
            if journaled + live.model_calls >= self.max_model_calls:
                raise ModelCallBudgetExceeded(run_id, self.max_model_calls, call.src)
            live.model_calls += 1
            made += 1

        try:
            self._emit(
                "model_request", run_id, seq=seq, idx=idx, method=call.kind, src=call.src, model=call.model
            )
            started = time.monotonic()
            try:
                request = build_request(
                    call,
                    run_id=run_id,
                    seq=seq,
                    idx=idx,
                    agent=live.agent.name,
                    tools=live.agent.tools,
                    run_usage=Usage.of(live.usage) or Usage(),
                )
                outcome = await execute(
                    call,
                    request,
                    self.executors,
                    on_chunk=self._chunk,
                    on_result=self._result,
                    before_call=before_call,
                )
            except (LookupError, ModelCallBudgetExceeded) as exc:  # an unknown tool offered; the budget
                outcome = Outcome(False, exc, Usage(), made)
            except asyncio.CancelledError:
                if _cancelled_from_outside():
                    raise  # the runtime is stopping: nothing to journal, the call is made again on resume
                # The executor's own work was cancelled (not this task): an error the agent must see,
                # or the run would wait forever for an answer that is not coming.
                error = RuntimeError(f"the {call.kind} executor's call for {call.src!r} was cancelled")
                outcome = Outcome(False, error, Usage(), made)
            spent = outcome.usage.to_json()
            self._emit(
                "model_result",
                run_id,
                seq=seq,
                idx=idx,
                method=call.kind,
                src=call.src,
                ok=outcome.ok,
                calls=outcome.calls,
                usage=spent,
                seconds=time.monotonic() - started,
                **({} if outcome.ok else {"error": f"{type(outcome.value).__name__}: {outcome.value}"}),
            )
            delta = {"model_calls": outcome.calls, **spent} if outcome.calls else None
            self._journal(live, seq, idx, outcome.ok, outcome.value, delta)
        finally:
            live.model_calls -= made
            if live.inflight.get(idx) is asyncio.current_task():
                del live.inflight[idx]

    def _chunk(self, request: ExecutorRequest, chunk: str) -> None:
        self._emit(
            "model_chunk", request.run_id, seq=request.seq, idx=request.idx, src=request.src, chunk=chunk
        )
        if self._on_chunk is not None:
            with contextlib.suppress(Exception):
                self._on_chunk(chunk, request)

    def _result(self, request: ExecutorRequest, result: Any) -> None:
        if self._on_result is not None:
            with contextlib.suppress(Exception):
                self._on_result(request, result)

    def _start_child(self, live: _Live, idx: int, request: ChildRun, gather: bool) -> None:
        seq = live.seq
        child_agent = live.agent.tools.get(request.name)
        if not isinstance(child_agent, Agent):
            exc = ToolError("LookupError", f"agent {live.agent.name!r} has no sub-agent {request.name!r}")
            self._journal(live, seq, idx, False, exc)
            return
        child_id = f"{live.run_id}.{seq}" + (f".{idx}" if gather else "")
        rec = self.store.get_run(child_id)
        if rec is None:
            try:
                value = child_agent.convert_input(request.kwargs)
            except SchemaError as exc:
                self._journal(live, seq, idx, False, exc)
                return
            spec = self._spec_of(child_agent)
            self.store.create_run(
                NewRun(
                    child_id, spec, to_jsonable(value), parent_id=live.run_id, parent_seq=seq, parent_idx=idx
                )
            )
            self._remember(spec, child_agent)
            self._emit("child_started", child_id, parent=live.run_id, agent=child_agent.name)
            self._schedule(child_id)
        elif rec.status == "completed":
            self._journal(live, seq, idx, True, child_agent.convert_output(rec.output))
        elif rec.status == "failed":
            self._journal(live, seq, idx, False, self._failure(rec))
        else:
            self._remember(rec.agent, child_agent)
            self._schedule(child_id)

    def _arm_timer(self, run_id: str, seq: int, idx: int, request: Sleep) -> None:
        key = (run_id, seq, idx)
        if key in self._timers:
            return
        delay = request.until - time.time()
        if delay <= 0:
            self._timer_fired(key)
            return
        assert self._loop is not None
        self._timers[key] = self._loop.call_later(delay, self._timer_fired, key)

    def _timer_fired(self, key: tuple[str, int, int]) -> None:
        self._timers.pop(key, None)
        run_id, seq, idx = key
        self._deliver(run_id, seq, idx, True, encode_value(None))
        self._touch()

    def _park(self, live: _Live) -> None:
        """The run waits on something that is not a tool call: store it, drop it from memory."""
        members = [m for i, m in enumerate(_members(live.payload)) if i not in live.results]
        if any(isinstance(m, ChildRun) for m in members):
            waiting_on, wake_at = "child", None
        elif any(isinstance(m, Ask) for m in members):
            waiting_on, wake_at = "reply", None
        else:
            waiting_on = "timer"
            wake_at = min((m.until for m in members if isinstance(m, Sleep)), default=None)
        self.store.set_waiting(live.run_id, self.owner, waiting_on, wake_at, [])
        data: dict[str, Any] = {"waiting_on": waiting_on, "seq": live.seq}
        if waiting_on == "reply":
            data["prompt"] = jsonable_or_repr(live.payload.prompt) if isinstance(live.payload, Ask) else None
        if wake_at is not None:
            data["wake_at"] = wake_at
        self._emit("waiting", live.run_id, **data)
        live.machine = None
        live.results = {}
        self._lives.pop(live.run_id, None)
        self._release(live.run_id)


def _cancelled_from_outside() -> bool:
    """Whether the current task is being cancelled (``Runtime.close``), as opposed to a tool or executor
    whose own awaited work was cancelled and re-raised ``CancelledError``."""
    current = asyncio.current_task()
    return current is None or current.cancelling() > 0


def _describe_pending(rec: RunRecord) -> str:
    pending = rec.pending or {}
    kind = pending.get("kind")
    if kind is None:
        return "no pending request"
    if kind in ("tool", "agent"):
        return f"pending {kind} {pending.get('name')}"
    return f"pending {kind}"


def default_store_path() -> str:
    return os.environ.get("AGENTRT_STORE") or os.path.join(".agentrt", "agentrt.db")
