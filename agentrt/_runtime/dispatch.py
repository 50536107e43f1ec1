"""Dispatch: carrying out the requests a suspended run is waiting on.

Four kinds of work, one per request kind the runtime itself performs:

- tools: async tools on the loop, sync tools in a bounded thread pool, each
  with the idempotency key ``RUN:SEQ[.IDX]``;
- model calls: through the runtime's executors, counted against
  ``max_model_calls``, journaled with their usage;
- sub-agents: a child run with a stable id ``RUN.SEQ[.IDX]``, whose outcome
  comes back through the host's ``deliver``;
- timers: ``call_later`` until the ``sleep`` is due.

``ask`` needs nothing: the run waits for ``Runtime.reply``.  Every result is
journaled (run, seq, idx) before it is handed to the live run, so what the
agent receives is what a restart would deliver: the journaled copy.

There is one table of request kinds, each with one handler (:meth:`Dispatcher.dispatch`); a kind
without one is an error, never silently ignored.  The dispatcher knows the runtime only through
:class:`DispatchHost`, and reaches the store only through the host's I/O seam
(:class:`~agentrt._runtime.storeio.StoreIO`).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, Protocol  # Any: a tool's arguments and result are the user's values

from agentrt._runtime.encoding import decode_result, encode_result, encode_result_with_copy
from agentrt._runtime.observation import Observation
from agentrt._runtime.pending import child_run_id, idempotency_key, members
from agentrt._runtime.state import LiveRun
from agentrt._runtime.storeio import StoreIO
from agentrt._runtime.threads import ToolThreads
from agentrt._runtime.tool_context import InContext, tool_context
from agentrt._sdk.agent import Agent
from agentrt._sdk.llm import ModelCall
from agentrt._sdk.requests import Ask, ChildRun, Gather, Sleep, ToolCall
from agentrt._sdk.schema import to_jsonable
from agentrt._sdk.tools import IDEMPOTENCY_PARAM, Tool
from agentrt.exceptions import ModelCallBudgetExceeded, SchemaError, ToolError
from agentrt.llm import ExecutorRequest, Executors, Outcome, Usage, build_request
from agentrt.llm import execute_request as execute
from agentrt.stores.base import Capability, LeaseLost, NewRun, RunRecord, Store, add_usage, capabilities

__all__ = ["DispatchHost", "Dispatcher", "cancelled_from_outside", "start_task"]


class DispatchHost(Protocol):
    """What the dispatcher needs from the runtime that owns it."""

    store: Store
    #: Every store call goes through it (never on the event loop).
    io: StoreIO
    observation: Observation
    #: Agent spec -> how many of its runs may be driven at once across the store's workers.
    agent_limits: Mapping[str, int]

    async def schedule(self, run_id: str) -> None:
        """Make sure ``run_id`` is driven (a new or resumed child run)."""

    async def deliver(self, run_id: str, seq: int, idx: int, ok: bool, blob: bytes) -> None:
        """Journal a result that arrived from outside a driver and wake the run."""

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run ``coro`` as a task the host cancels when it closes (a timer's delivery)."""

    def touch(self) -> None:
        """Wake whoever waits for a change (``wait``, ``settle``)."""

    def register_agent(self, agent: Agent, spec: str | None = None) -> str:
        """Remember ``agent`` (under ``spec``, else its own) and return its spec."""

    def failure(self, rec: RunRecord) -> BaseException:
        """The exception a failed run ended with."""

    @property
    def owner(self) -> str:
        """The lease owner whose epoch fences this runtime's writes."""
        ...


def _eager_task(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    """A task that runs ``coro`` at once, up to its first real wait (Python 3.12+: ``eager_start``)."""
    return asyncio.Task(coro, loop=asyncio.get_running_loop(), eager_start=True)


#: How a tool call is started: eagerly where asyncio can (3.12+), so a call that does not wait (an
#: ``async def`` tool that returns without awaiting, an ``@tool(inline=True)`` function) is made and
#: journaled within ``dispatch`` -- no task switch and no loop turn between the step and its result.
#: Before 3.12, a task that starts at the loop's next turn.
start_task: Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]] = (
    _eager_task if hasattr(asyncio, "eager_task_factory") else asyncio.ensure_future
)


def cancelled_from_outside() -> bool:
    """Whether the current task is being cancelled (``Runtime.close``), as opposed to a tool or executor
    whose own awaited work was cancelled and re-raised ``CancelledError``."""
    current = asyncio.current_task()
    return current is None or current.cancelling() > 0


class Dispatcher:
    """Runs the tools, model calls, child runs and timers of the runs one runtime drives."""

    def __init__(
        self,
        host: DispatchHost,
        *,
        executors: Executors,
        max_model_calls: int,
        max_workers: int,
    ) -> None:
        self.host = host
        self.executors = executors
        self.max_model_calls = max_model_calls
        self._pool = ToolThreads(max_workers, thread_name_prefix="agentrt-tool")
        self._timers: dict[tuple[str, int, int], asyncio.TimerHandle] = {}
        #: The table of request kinds: each kind the runtime carries out, and its one handler.
        self._handlers: dict[type, Callable[[LiveRun, int, Any, bool], Awaitable[None]]] = {
            ToolCall: self._start_tool,
            ModelCall: self._start_model,
            ChildRun: self._start_child,
            Sleep: self._arm_timer,
            Ask: self._await_reply,
        }
        #: whether the store journals a result in the transaction of the next checkpoint
        self._defers = Capability.JOURNAL_WITH_CHECKPOINT in capabilities(host.store)

    @property
    def timers_armed(self) -> bool:
        """Whether a timer of some run is still due in this process."""
        return bool(self._timers)

    def close(self) -> None:
        """Cancel every timer and stop the thread pool (calls in flight are not waited for)."""
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def handler(self, request: object) -> Callable[[LiveRun, int, Any, bool], Awaitable[None]]:
        """The handler of ``request``'s kind (looked up along its classes); ``TypeError`` if none."""
        for cls in type(request).__mro__:
            handler = self._handlers.get(cls)
            if handler is not None:
                return handler
        else:
            raise TypeError(
                f"agentrt cannot carry out a {type(request).__name__} request ({request!r}): no handler "
                f"in the dispatcher's table ({', '.join(sorted(k.__name__ for k in self._handlers))})"
            )

    async def dispatch(self, live: LiveRun) -> None:
        """Start whatever the run's pending request needs that is neither answered nor in flight."""
        gather = isinstance(live.payload, Gather)
        for idx, request in enumerate(members(live.payload)):
            if idx in live.results or idx in live.inflight:
                continue
            await self.handler(request)(live, idx, request, gather)

    async def _start_tool(self, live: LiveRun, idx: int, request: ToolCall, gather: bool) -> None:
        key = idempotency_key(live.run_id, live.seq, idx, gather)
        task = start_task(self._call_tool(live, live.seq, idx, request, key))
        if not task.done():  # a call that finished at once is journaled already: nothing in flight
            live.inflight[idx] = task

    async def _start_model(self, live: LiveRun, idx: int, request: ModelCall, gather: bool) -> None:
        live.inflight[idx] = asyncio.ensure_future(self._call_model(live, live.seq, idx, request))

    async def _await_reply(self, live: LiveRun, idx: int, request: Ask, gather: bool) -> None:
        """Nothing to dispatch: the run waits for ``Runtime.reply``."""

    async def call(self, live: LiveRun) -> None:
        """Make the run's one tool call in its driver's task, and journal it: no task of its own and
        no switch between tasks when it finishes.  While it runs, ``live.inflight[0]`` is a future
        that completes with it, which is what ``Runtime.drain`` waits for; cancelling the driver
        cancels the call, as cancelling its task did."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        live.inflight[0] = done
        try:
            await self._call_tool(
                live, live.seq, 0, live.payload, idempotency_key(live.run_id, live.seq, 0, False)
            )
        finally:
            if live.inflight.get(0) is done:
                del live.inflight[0]
            if not done.done():
                done.set_result(None)

    # ------------------------------------------------------------------ journal

    async def journal(
        self, live: LiveRun, seq: int, idx: int, ok: bool, value: Any, usage: dict[str, int] | None = None
    ) -> None:
        """Journal the result of member ``idx`` at ``seq``, then hand the journaled copy to the live run."""
        store = self.host.store
        copy: tuple[bool, Any] | None = None  # the journaled copy, when it comes without decoding
        try:
            blob, copy = encode_result_with_copy(store, live.run_id, seq, idx, ok, value)
        except Exception as exc:
            ok = False
            value = ToolError(
                type(exc).__name__,
                f"the result of the request could not be journaled: {exc}",
            )
            blob = encode_result(store, live.run_id, seq, idx, False, value)
        if usage is None and live.seq == seq and isinstance(live.payload, ToolCall) and self._defers:
            # The result that answers the run's one pending call: journaled by the transaction of the
            # checkpoint it leads to (one commit per step).  Until that commits, a crash makes the call
            # again on resume, as a crash between the tool's return and its own commit did before.
            live.unjournaled.append((seq, idx, ok, blob))
            live.results[idx] = copy or decode_result(store, live.run_id, seq, idx, ok, blob)
            return
        try:
            new = await self.host.io(
                store.put_result,
                live.run_id,
                seq,
                idx,
                ok,
                blob,
                usage,
                owner=self.host.owner,
                epoch=live.epoch,
            )
        except LeaseLost as exc:  # another worker drives the run now: this result must not land
            live.lease_lost = exc
            return
        if not new:
            # A result is journaled already (written by an earlier driver before it lost the run):
            # go on with that one, never run the call again.
            stored = (await self.host.io(store.get_results, live.run_id, seq)).get(idx)
            if stored is not None and live.seq == seq:
                live.results[idx] = decode_result(store, live.run_id, seq, idx, *stored)
            return
        if usage:
            live.usage = add_usage(live.usage, usage)
        if live.seq == seq:
            # Deliver what a restart would deliver: the journaled copy, not the tool's own object.
            live.results[idx] = copy or decode_result(store, live.run_id, seq, idx, ok, blob)

    # ------------------------------------------------------------------ tools

    async def _call_tool(self, live: LiveRun, seq: int, idx: int, request: ToolCall, key: str) -> None:
        emit = self.host.observation.emit
        try:
            tool = live.agent.tools.get(request.name)
            started = time.monotonic()
            emit("tool_started", live.run_id, tool=request.name, seq=seq, idx=idx, key=key)
            value: Any  # the tool's own return value, or the exception it raised
            try:
                if not isinstance(tool, Tool):
                    raise ToolError(
                        "LookupError", f"agent {live.agent.name!r} has no tool {request.name!r} (seq {seq})"
                    )
                kwargs = dict(request.kwargs)
                if tool.takes_idempotency_key:
                    kwargs[IDEMPOTENCY_PARAM] = key
                if tool.attempts > 1 or tool.timeout is not None:
                    value = await self._attempts(live, tool, kwargs, seq, idx)
                elif tool.is_async:  # the common policy (one attempt, no timeout), without its frames
                    context = tool_context(live)
                    value = await InContext(context, context.run(tool.fn, **kwargs))
                elif tool.inline:
                    value = tool_context(live).run(tool.fn, **kwargs)
                else:
                    value = await self._in_pool(tool, kwargs, tool_context(live))
                ok = True
            except asyncio.CancelledError as cancelled:
                if cancelled_from_outside():
                    raise  # the runtime is stopping: nothing to journal, the call is made again on resume
                # Journaled as a failure, else the run would wait for this call forever.
                value = RuntimeError(f"tool {request.name!r} was cancelled from inside (seq {seq})")
                value.__cause__ = cancelled
                ok = False
            except Exception as exc:
                value, ok = exc, False
            failure = {} if ok else {"error": f"{type(value).__name__}: {value}"}
            emit(
                "tool_finished",
                live.run_id,
                tool=request.name,
                seq=seq,
                idx=idx,
                ok=ok,
                seconds=round(time.monotonic() - started, 6),  # to the microsecond: shorter to write
                **failure,
            )
            await self.journal(live, seq, idx, ok, value)
        finally:
            if live.inflight.get(idx) is asyncio.current_task():
                del live.inflight[idx]

    # ------------------------------------------------------------------ model calls

    async def _call_model(self, live: LiveRun, seq: int, idx: int, call: ModelCall) -> None:
        """Answer one model request through the executors and journal the answer with its usage."""
        run_id = live.run_id
        observation = self.host.observation
        made = 0

        def before_call(req: ExecutorRequest) -> None:
            nonlocal made
            journaled = live.usage.get("model_calls", 0)
            if journaled + live.model_calls >= self.max_model_calls:
                raise ModelCallBudgetExceeded(run_id, self.max_model_calls, call.src)
            live.model_calls += 1
            made += 1

        try:
            observation.emit(
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
                    on_chunk=observation.chunk,
                    on_result=observation.result,
                    before_call=before_call,
                )
            except (LookupError, ModelCallBudgetExceeded) as exc:  # an unknown tool offered; the budget
                outcome = Outcome(False, exc, Usage(), made)
            except asyncio.CancelledError:
                if cancelled_from_outside():
                    raise  # the runtime is stopping: nothing to journal, the call is made again on resume
                # The executor's own work was cancelled (not this task): an error the agent must see,
                # or the run would wait forever for an answer that is not coming.
                error = RuntimeError(f"the {call.kind} executor's call for {call.src!r} was cancelled")
                outcome = Outcome(False, error, Usage(), made)
            spent = outcome.usage.to_json()
            observation.emit(
                "model_result",
                run_id,
                seq=seq,
                idx=idx,
                method=call.kind,
                src=call.src,
                ok=outcome.ok,
                calls=outcome.calls,
                usage=spent,
                seconds=round(time.monotonic() - started, 6),  # to the microsecond: shorter to write
                **({} if outcome.ok else {"error": f"{type(outcome.value).__name__}: {outcome.value}"}),
            )
            delta = {"model_calls": outcome.calls, **spent} if outcome.calls else None
            await self.journal(live, seq, idx, outcome.ok, outcome.value, delta)
        finally:
            live.model_calls -= made
            if live.inflight.get(idx) is asyncio.current_task():
                del live.inflight[idx]

    async def _attempts(self, live: LiveRun, tool: Tool, kwargs: dict[str, Any], seq: int, idx: int) -> Any:
        """Call ``tool`` under its run policy (timeout per attempt, retries with backoff)."""
        attempt = 1
        while True:
            try:
                return await self._once(tool, kwargs, tool_context(live))
            except Exception as exc:
                if attempt >= tool.attempts or not isinstance(exc, tool.retry_on):
                    raise
                delay = min(tool.backoff * 2 ** (attempt - 1), 300.0)
                self.host.observation.emit(
                    "tool_retry",
                    live.run_id,
                    tool=tool.name,
                    seq=seq,
                    idx=idx,
                    attempt=attempt,
                    error=f"{type(exc).__name__}: {exc}",
                    delay=delay,
                )
                attempt += 1
                if delay:
                    await asyncio.sleep(delay)

    def _in_pool(
        self, tool: Tool, kwargs: dict[str, Any], context: contextvars.Context
    ) -> asyncio.Future[Any]:
        """A sync tool's call on the thread pool, inside ``context`` (a future the loop can await)."""
        call = functools.partial(context.run, tool.fn, **kwargs)
        return asyncio.get_running_loop().run_in_executor(self._pool, call)

    async def _once(self, tool: Tool, kwargs: dict[str, Any], context: contextvars.Context) -> Any:
        """One attempt, inside ``context`` (``tool_context``: a copy of the run's context)."""
        if tool.is_async:
            call: Any = InContext(context, context.run(tool.fn, **kwargs))
        elif tool.inline:  # @tool(inline=True): on the loop's thread, no hop to the pool
            return context.run(tool.fn, **kwargs)
        else:
            call = self._in_pool(tool, kwargs, context)
        if tool.timeout is None:
            return await call
        try:
            return await asyncio.wait_for(call, tool.timeout)
        except TimeoutError:
            raise TimeoutError(
                f"tool {tool.name!r} took longer than its timeout of {tool.timeout:g} s"
            ) from None

    # ------------------------------------------------------------------ child runs

    async def _start_child(self, live: LiveRun, idx: int, request: ChildRun, gather: bool) -> None:
        host = self.host
        seq = live.seq
        child_agent = live.agent.tools.get(request.name)
        if not isinstance(child_agent, Agent):
            exc = ToolError("LookupError", f"agent {live.agent.name!r} has no sub-agent {request.name!r}")
            await self.journal(live, seq, idx, False, exc)
            return
        child_id = child_run_id(live.run_id, seq, idx, gather)
        rec = await host.io(host.store.get_run, child_id)
        if rec is None:
            try:
                value = child_agent.convert_input(request.kwargs)
            except SchemaError as exc:
                await self.journal(live, seq, idx, False, exc)
                return
            spec = host.register_agent(child_agent)
            await host.io(
                host.store.create_run,
                NewRun(
                    child_id,
                    spec,
                    to_jsonable(value),
                    parent_id=live.run_id,
                    parent_seq=seq,
                    parent_idx=idx,
                    # A limited agent's sub-runs wait for a claim (which counts that agent's runs).
                    status="queued" if spec in host.agent_limits else "running",
                    deadline=live.deadline,  # a sub-run ends no later than its parent
                ),
            )
            host.observation.emit("child_started", child_id, parent=live.run_id, agent=child_agent.name)
            await host.schedule(child_id)
        elif rec.status == "completed":
            await self.journal(live, seq, idx, True, child_agent.convert_output(rec.output))
        elif rec.status in ("failed", "cancelled"):
            await self.journal(live, seq, idx, False, host.failure(rec))
        else:
            host.register_agent(child_agent, rec.agent)
            await host.schedule(child_id)

    # ------------------------------------------------------------------ timers

    async def _arm_timer(self, live: LiveRun, idx: int, request: Sleep, gather: bool) -> None:
        key = (live.run_id, live.seq, idx)
        if key in self._timers:
            return
        delay = request.until - time.time()
        if delay <= 0:  # due already: delivered before the driver decides to park
            await self._deliver_timer(key)
            return
        self._timers[key] = asyncio.get_running_loop().call_later(delay, self._timer_fired, key)

    def _timer_fired(self, key: tuple[str, int, int]) -> None:
        self._timers.pop(key, None)
        self.host.spawn(self._deliver_timer(key))

    async def _deliver_timer(self, key: tuple[str, int, int]) -> None:
        run_id, seq, idx = key
        try:
            await self.host.deliver(
                run_id, seq, idx, True, encode_result(self.host.store, run_id, seq, idx, True, None)
            )
        finally:
            self.host.touch()
