"""``durable(agent)``: an OpenAI Agents SDK ``Agent`` as an agentrt agent (``agentrt[openai-agents]``).

``Runner.run``'s loop runs unmodified, in the host (:mod:`agentrt.adapters._session`), on a copy of
the agent graph (the starting agent, its handoff targets and their tools, made with
``Agent.clone``) in which

- every model call is a journaled step: the run's ``model_provider`` is wrapped, so each agent's
  model, by name, comes from the provider the user gave (``RunConfig.model_provider``), called once;
- every function tool (``@function_tool``, ``agent.as_tool``) is a journaled step, run with its
  live ``ToolContext``;
- every handoff invocation (and its ``on_handoff`` callback) is a journaled step;
- every input and output guardrail function is a journaled step, run before the model call
  (``run_in_parallel=False``: two calls in flight at once would have no order to replay);
- every pending tool approval (``needs_approval``) is an agentrt ask: the run waits, ``agentrt
  reply`` answers it, and the run goes on from ``result.to_state()`` with the approvals;
- with ``durable(..., session=factory)``, the run's ``Session`` (conversation memory: ``SQLiteSession``
  or any other implementation of the SDK's protocol) is the one ``factory(session_id)`` returns, and
  each of its ``get_items`` / ``add_items`` / ``pop_item`` / ``clear_session`` calls is a journaled
  step: after a crash the framework reads the history it read before, and items journaled as added
  are not added again.

Function tools run one at a time (``ToolExecutionConfig(max_function_tool_concurrency=1)``), so
the calls come in the same order on every run.  An agent whose ``model`` is a ``Model`` instance
is refused (its calls could not be journaled): give a model name and a ``model_provider``.
Importing this module imports the Agents SDK; ``import agentrt`` does not.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any  # Any: the run context, outputs and tool results are the author's values

import attrs

from agentrt._codec import serializable
from agentrt._sdk.agent import Agent as AgentrtAgent
from agentrt.adapters._session import Session, durable_agent

try:
    import pydantic_core
    from agents import Agent, FunctionTool, Handoff, Runner
    from agents.guardrail import InputGuardrail, OutputGuardrail
    from agents.items import ModelResponse, ToolApprovalItem
    from agents.memory import OpenAIConversationsSession, SessionABC
    from agents.memory import Session as AgentsSession
    from agents.models.interface import Model, ModelProvider
    from agents.models.multi_provider import MultiProvider
    from agents.run_config import RunConfig, ToolExecutionConfig
    from agents.stream_events import AgentUpdatedStreamEvent, RunItemStreamEvent
    from openai.types.responses import ResponseCompletedEvent, ResponseOutputItemDoneEvent
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError(
        f"agentrt.adapters.openai_agents needs the OpenAI Agents SDK ({exc}); "
        "install it with: pip install 'agentrt[openai-agents]'"
    ) from exc

__all__ = ["OpenAIAgentsInput", "OpenAIAgentsOutput", "durable"]


@serializable
@attrs.frozen
class OpenAIAgentsInput:
    """The input of a durable Agents SDK agent: the user's input, the run context as JSON (or None), and
    the conversation (``Session``) it belongs to when the agent was made durable with ``session=``
    (None: the run's own id)."""

    input: str
    context: Any = None
    session_id: str | None = None


@serializable
@attrs.frozen
class OpenAIAgentsOutput:
    """The result: ``final_output`` as JSON, and the name of the agent that produced it."""

    output: Any
    last_agent: str


class _SeamModel(Model):
    """An agent's model, each call a seam: made once in the host, answered from the journal after."""

    def __init__(self, wrapped: Model, session: Session, name: str) -> None:
        self._wrapped = wrapped
        self._session = session
        self._name = name

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        async def call() -> ModelResponse:
            return await self._wrapped.get_response(*args, **kwargs)

        response: ModelResponse = await self._session.seam("model", self._name, None, call)
        return response

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """A streamed call, one seam: live, the model's events are passed on as they come and its
        ``response.completed`` event is journaled; answered from the journal, that one event is all the
        SDK's streamed loop gets (it builds the turn's response from it)."""
        events: asyncio.Queue[Any] = asyncio.Queue()

        async def call() -> Any:
            completed: Any = None
            items: list[Any] = []
            async for event in self._wrapped.stream_response(*args, **kwargs):
                events.put_nowait(event)
                if isinstance(event, ResponseOutputItemDoneEvent):
                    items.append(event.item)
                elif isinstance(event, ResponseCompletedEvent):
                    completed = event
            if completed is not None and not completed.response.output and items:
                # as the SDK does for streams whose completed response leaves its output out
                completed = completed.model_copy(
                    update={"response": completed.response.model_copy(update={"output": items})}
                )
            return completed

        seam = asyncio.ensure_future(self._session.seam("model", self._name, None, call))
        passed = False
        try:
            while True:
                getter = asyncio.ensure_future(events.get())
                await asyncio.wait({seam, getter}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    break
                passed = True
                yield getter.result()
            while not events.empty():
                passed = True
                yield events.get_nowait()
            completed = seam.result()
            if not passed and completed is not None:
                yield completed
        finally:
            if not seam.done():
                seam.cancel()


class _SeamProvider(ModelProvider):
    def __init__(self, wrapped: ModelProvider, session: Session) -> None:
        self._wrapped = wrapped
        self._session = session

    def get_model(self, model_name: str | None) -> Model:
        return _SeamModel(self._wrapped.get_model(model_name), self._session, model_name or "default")


class _Graph:
    """The copy of an agent graph whose calls are seams (see the module docstring)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.clones: dict[int, Agent[Any]] = {}
        self.by_name: dict[str, Agent[Any]] = {}

    def agent(self, original: Agent[Any]) -> Agent[Any]:
        done = self.clones.get(id(original))
        if done is not None:
            return done
        clone = original.clone()
        self.clones[id(original)] = clone
        self.by_name.setdefault(original.name, clone)
        clone.tools = [self._tool(t) if isinstance(t, FunctionTool) else t for t in original.tools]
        clone.handoffs = [
            self.agent(h) if isinstance(h, Agent) else self._handoff(h) for h in original.handoffs
        ]
        clone.input_guardrails = [self._guardrail(g) for g in original.input_guardrails]
        clone.output_guardrails = [self._guardrail(g) for g in original.output_guardrails]
        return clone

    def _tool(self, original: FunctionTool) -> FunctionTool:
        session = self.session
        invoke = original.on_invoke_tool

        async def on_invoke_tool(ctx: Any, arguments: str) -> Any:
            async def call() -> Any:
                return await invoke(ctx, arguments)

            detail = {"call_id": getattr(ctx, "tool_call_id", None), "arguments": arguments}
            return await session.seam("tool", original.name, detail, call)

        tool = copy.copy(original)
        tool.on_invoke_tool = on_invoke_tool
        return tool

    def _handoff(self, original: Handoff[Any, Any]) -> Handoff[Any, Any]:
        session = self.session
        invoke = original.on_invoke_handoff
        ref = getattr(original, "_agent_ref", None)
        target = ref() if ref is not None else None
        if isinstance(target, Agent):
            self.agent(target)

        async def on_invoke_handoff(ctx: Any, arguments: str) -> Agent[Any]:
            async def call() -> str:
                reached = await invoke(ctx, arguments)
                self.agent(reached)
                return str(reached.name)

            name = await session.seam("handoff", original.tool_name, arguments, call)
            return self.by_name[name]

        handoff = copy.copy(original)
        handoff.on_invoke_handoff = on_invoke_handoff
        return handoff

    def _guardrail(self, original: Any) -> Any:
        session = self.session
        function = original.guardrail_function
        name = original.get_name() if hasattr(original, "get_name") else str(original.name)

        async def guardrail_function(ctx: Any, agent: Any, data: Any) -> Any:
            async def call() -> Any:
                value = function(ctx, agent, data)
                return await value if hasattr(value, "__await__") else value

            return await session.seam("guardrail", name, None, call)

        changes: dict[str, Any] = {"guardrail_function": guardrail_function}
        if isinstance(original, InputGuardrail):
            changes["run_in_parallel"] = False
        elif not isinstance(original, OutputGuardrail):  # pragma: no cover - the SDK's two kinds
            raise TypeError(f"unknown guardrail {original!r}")
        return dataclasses.replace(original, **changes)


class _SeamSession(SessionABC):
    """The run's ``Session``, each call a seam: made once in the host, answered from the journal after."""

    def __init__(self, wrapped: AgentsSession, session: Session) -> None:
        self._wrapped = wrapped
        self._session = session
        self.session_id = wrapped.session_id
        self.session_settings = getattr(wrapped, "session_settings", None)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        items: list[Any] = await self._session.seam(
            "session", "get_items", limit, lambda: self._wrapped.get_items(limit)
        )
        return items

    async def add_items(self, items: list[Any]) -> None:
        await self._session.seam("session", "add_items", len(items), lambda: self._wrapped.add_items(items))

    async def pop_item(self) -> Any:
        return await self._session.seam("session", "pop_item", None, self._wrapped.pop_item)

    async def clear_session(self) -> None:
        await self._session.seam("session", "clear_session", None, self._wrapped.clear_session)

    def close(self) -> None:
        """The session the factory made for this run is closed when the run's session in this process ends
        (``SQLiteSession.close``, if it has one)."""
        close = getattr(self._wrapped, "close", None)
        if callable(close):
            close()


@attrs.frozen
class _Options:
    agent: Agent[Any]
    context: Callable[[Any], Any] | None
    run_config: RunConfig | None
    max_turns: int | None
    session: Callable[[str], AgentsSession] | None = None
    stream: bool = False


def _stream_event(event: Any) -> Any:
    """A stream event as stored on the durable event stream (None: not stored, a raw model event)."""
    if isinstance(event, RunItemStreamEvent):
        return {
            "type": f"openai_agents.{event.name}",
            "agent": event.item.agent.name,
            "item": pydantic_core.to_jsonable_python(event.item.raw_item, fallback=repr),
        }
    if isinstance(event, AgentUpdatedStreamEvent):
        return {"type": "openai_agents.agent_updated", "agent": event.new_agent.name}
    return None


async def _streamed(session: Session, result: Any) -> Any:
    """Drain a ``Runner.run_streamed`` result.  Its run items and agent changes are recorded for the
    durable event stream when the SDK's loop produces them (it queues them from its own task), so
    that the events of journaled calls, produced again while the loop replays its journal, are not
    recorded twice."""
    queue = result._event_queue  # the SDK's queue between its loop's task and stream_events()
    put = queue.put_nowait

    def put_nowait(item: Any) -> None:
        stored = _stream_event(item)
        if stored is not None:
            session.record_event(stored)
        put(item)

    queue.put_nowait = put_nowait
    async for _ in result.stream_events():
        pass
    return result


def _approval_prompt(items: list[ToolApprovalItem]) -> dict[str, Any]:
    return {
        "kind": "openai_agents.tool_approvals",
        "approvals": [
            {
                "call_id": _call_id(item),
                "tool_name": item.tool_name or getattr(item.raw_item, "name", None),
                "arguments": getattr(item.raw_item, "arguments", None),
            }
            for item in items
        ],
        "reply": 'true (approve all), false (reject all), or {"approvals": {CALL_ID: true|false|"message"}}',
    }


def _call_id(item: ToolApprovalItem) -> str:
    raw = item.raw_item
    value = raw.get("call_id") if isinstance(raw, Mapping) else getattr(raw, "call_id", None)
    return str(value)


def _decide(state: Any, items: list[ToolApprovalItem], reply: Any) -> None:
    for item in items:
        if isinstance(reply, bool):
            given: Any = reply
        elif isinstance(reply, Mapping) and _call_id(item) in reply.get("approvals", {}):
            given = reply["approvals"][_call_id(item)]
        else:
            raise ValueError(f"the reply does not approve or reject tool call {_call_id(item)!r}: {reply!r}")
        if given is True:
            state.approve(item)
        else:
            state.reject(item, rejection_message=given if isinstance(given, str) else None)


def _run_config(options: _Options, session: Session) -> RunConfig:
    base = options.run_config or RunConfig(tracing_disabled=True)
    execution = dataclasses.replace(
        base.tool_execution or ToolExecutionConfig(), max_function_tool_concurrency=1
    )
    if isinstance(base.model, Model):
        raise TypeError(
            "durable(..., run_config=RunConfig(model=<a Model instance>)): its calls could not be "
            "journaled; give a model name and RunConfig(model_provider=...)"
        )
    provider = _SeamProvider(base.model_provider or MultiProvider(), session)
    return dataclasses.replace(base, model_provider=provider, tool_execution=execution)


async def _program(options: _Options, request: OpenAIAgentsInput, session: Session) -> OpenAIAgentsOutput:
    """One durable run: ``Runner.run`` (again after each approval), in the host, under the seams."""
    graph = _Graph(session)
    starting = graph.agent(options.agent)
    context = options.context(request.context) if options.context is not None else request.context
    run_config = _run_config(options, session)
    turns: dict[str, Any] = {} if options.max_turns is None else {"max_turns": options.max_turns}
    if options.session is not None:
        memory = options.session(request.session_id or session.run_id)
        if isinstance(memory, OpenAIConversationsSession):
            raise TypeError(
                "durable(..., session=...): an OpenAIConversationsSession keeps the conversation on OpenAI's "
                "servers, where its calls cannot be journaled; use SQLiteSession or another Session"
            )
        turns["session"] = _SeamSession(memory, session)

    async def run(given: Any) -> Any:
        if options.stream:
            streamed = Runner.run_streamed(starting, given, context=context, run_config=run_config, **turns)
            return await _streamed(session, streamed)
        return await Runner.run(starting, given, context=context, run_config=run_config, **turns)

    try:
        result = await run(request.input)
        while result.interruptions:
            items = list(result.interruptions)
            reply = await session.seam("ask", "tool_approvals", _approval_prompt(items))
            state = result.to_state()
            _decide(state, items, reply)
            result = await run(state)
    finally:
        close = getattr(turns.get("session"), "close", None)
        if close is not None:
            close()
    return OpenAIAgentsOutput(pydantic_core.to_jsonable_python(result.final_output), result.last_agent.name)


def _refuse_model_instances(agent: Agent[Any], seen: set[int]) -> None:
    if id(agent) in seen:
        return
    seen.add(id(agent))
    if isinstance(agent.model, Model):
        raise TypeError(
            f"agent {agent.name!r} has a Model instance as its model: its calls could not be journaled; "
            "give it a model name and pass durable(..., run_config=RunConfig(model_provider=...))"
        )
    for h in agent.handoffs:
        ref = getattr(h, "_agent_ref", None)
        target = h if isinstance(h, Agent) else (ref() if ref is not None else None)
        if isinstance(target, Agent):
            _refuse_model_instances(target, seen)


def durable(
    agent: Agent[Any],
    *,
    name: str | None = None,
    context: Callable[[Any], Any] | None = None,
    run_config: RunConfig | None = None,
    max_turns: int | None = None,
    session: Callable[[str], AgentsSession] | None = None,
    stream: bool = False,
) -> AgentrtAgent:
    """``agent`` as an agentrt agent: ``Runtime.start``, ``agentrt run MODULE:ATTR``, workers, serve.

    Define it at module level so another process can find it.  Its input is
    :class:`OpenAIAgentsInput` (``{"input": ..., "context": ...}``); ``context(value)`` builds the run
    context in the host (made again after a restart, never checkpointed), else the JSON is the
    context.  ``run_config`` (its ``model_provider`` answers the model names; tracing is off unless
    you pass one) and ``max_turns`` go to every ``Runner.run``.  Its output is
    :class:`OpenAIAgentsOutput`.

    ``session(session_id)`` builds the run's ``Session`` in the host (``SQLiteSession(session_id,
    "conversations.db")``: the conversation memory ``Runner.run(..., session=...)`` reads and extends),
    for the input's ``session_id`` (the run's id when it has none); its calls are journaled steps.  It
    is made for the run (again in each process that continues it) and closed (``close()``, when it has
    one) when the framework's run ends there.

    ``stream=True`` runs the agent with ``Runner.run_streamed``: model calls are streamed (each one
    journaled step) and the run's items and agent changes go on agentrt's durable event stream as
    ``emit`` events of type ``openai_agents.<name>`` (``tool_called``, ``tool_output``,
    ``message_output_created``, ``handoff_requested``, ``handoff_occured``, ``agent_updated``...; the
    raw model events, text deltas, are not stored), each once across a crash.
    """
    if not isinstance(agent, Agent):
        raise TypeError(f"agentrt.adapters.openai_agents.durable() takes an agents.Agent, got {agent!r}")
    _refuse_model_instances(agent, set())
    if session is not None and not callable(session):
        raise TypeError(
            "durable(..., session=...) takes a function of the session id that returns the Session "
            '(session=lambda sid: SQLiteSession(sid, "conversations.db")), not a Session: a run may go on '
            "in another process"
        )
    options = _Options(agent, context, run_config, max_turns, session, stream)

    async def program(request: OpenAIAgentsInput, session: Session) -> OpenAIAgentsOutput:
        return await _program(options, request, session)

    agent_name = name or agent.name
    return durable_agent(
        name=agent_name,
        description=f"the OpenAI Agents SDK agent {agent.name!r}, durable",
        input=OpenAIAgentsInput,
        output=OpenAIAgentsOutput,
        program=program,
        module=sys._getframe(1).f_globals.get("__name__", __name__),
    )
