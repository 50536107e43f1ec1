"""``durable(agent)``: a pydantic-ai ``Agent`` as an agentrt agent (``pip install agentrt[pydantic-ai]``).

The agent runs unmodified: its own model and provider, tools, dependencies, output type and
validators, retries and usage limits.  agentrt adds one capability to each run
(``agent.run(..., capabilities=[...])``, pydantic-ai's public extension point) that makes

- every model request a journaled step (the capability's ``get_wrapper_model``: the agent's own
  model is called in the host, once; its ``ModelResponse`` is journaled),
- every function-tool call a journaled step (``wrap_tool_execute``: the tool runs in the host, with
  its live ``RunContext``, once; its result, or the ``ModelRetry`` it raised, is journaled),
- every approval (a ``requires_approval`` tool, or one that raises ``ApprovalRequired`` /
  ``CallDeferred``, with ``DeferredToolRequests`` in the agent's output type) an agentrt ask:
  the run waits, ``agentrt reply`` answers it, and the run goes on with pydantic-ai's
  ``deferred_tool_results``.

How the framework's loop survives a crash, and why it is not checkpointed frame by frame, is
:mod:`agentrt.adapters._session`.  Tool calls run one at a time (``parallel_execution_mode
('sequential')``) so that the calls come in the same order on every run.  Importing this module
imports pydantic-ai; ``import agentrt`` does not.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any  # Any: an agent's deps, outputs and tool results are its author's values

import attrs

from agentrt._codec import serializable
from agentrt._sdk.agent import Agent as AgentrtAgent
from agentrt.adapters._session import Session, durable_agent

try:
    import pydantic_core
    from pydantic import TypeAdapter
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
    from pydantic_ai.agent import EventStreamHandler
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
    from pydantic_ai.models import CompletedStreamedResponse, Model, ModelRequestParameters, StreamedResponse
    from pydantic_ai.models._request_timeout import open_durable_unit_stream
    from pydantic_ai.models.wrapper import WrapperModel
    from pydantic_ai.settings import ModelSettings
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.tools import RunContext, ToolDefinition
    from pydantic_ai.usage import RunUsage, UsageLimits
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError(
        f"agentrt.adapters.pydantic_ai needs pydantic-ai ({exc}); "
        "install it with: pip install 'agentrt[pydantic-ai]'"
    ) from exc

__all__ = ["PydanticAIInput", "PydanticAIOutput", "durable"]


@serializable
@attrs.frozen
class PydanticAIInput:
    """The input of a durable pydantic-ai agent: the user prompt, and its deps as JSON (or None)."""

    prompt: str
    deps: Any = None


@serializable
@attrs.frozen
class PydanticAIOutput:
    """The result: the agent's output as JSON (a pydantic model as its dump), and the run's usage."""

    output: Any
    usage: dict[str, int] = attrs.field(factory=dict)


@attrs.frozen
class _Options:
    agent: Agent[Any, Any]
    deps: Callable[[Any], Any] | None
    usage_limits: UsageLimits | None
    model_settings: ModelSettings | None
    stream: bool = False
    event_stream_handler: EventStreamHandler[Any] | None = None


#: pydantic-ai's events that go on the durable event stream: all but the text and argument deltas
#: (thousands per response; ``part_end`` carries each part whole).  Deltas reach the agent's
#: ``event_stream_handler`` live.
UNSTORED_EVENTS = frozenset({"part_delta"})


class _Events:
    """The ``event_stream_handler`` of a streamed durable run: each live event goes to the run's durable
    stream (``pydantic_ai.<event_kind>``, the event as JSON) and to the agent's own handler; events of
    journaled calls, met again while the framework replays its journal, go to neither (as in
    pydantic-ai's DBOS and Temporal integrations: a handler sees each event once)."""

    def __init__(self, session: Session, handler: EventStreamHandler[Any] | None) -> None:
        self._session = session
        self._handler = handler

    async def __call__(self, ctx: RunContext[Any], events: AsyncIterable[Any]) -> None:
        async def recorded() -> AsyncGenerator[Any]:
            async for event in events:
                if not self._session.live:  # judged per event: a tool's call is replayed, its result live
                    continue
                kind = getattr(event, "event_kind", type(event).__name__)
                if kind not in UNSTORED_EVENTS:
                    self._session.record_event(
                        {"type": f"pydantic_ai.{kind}", "event": pydantic_core.to_jsonable_python(event)}
                    )
                yield event

        if self._handler is not None:
            await self._handler(ctx, recorded())
        else:
            async for _ in recorded():
                pass


class _SeamModel(WrapperModel):
    """The agent's model, each request a seam: made once in the host, answered from the journal after."""

    def __init__(self, wrapped: Model, session: Session, events: _Events | None) -> None:
        super().__init__(wrapped)
        self._session = session
        self._events = events

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        async def call() -> ModelResponse:
            return await self.wrapped.request(messages, model_settings, model_request_parameters)

        response: ModelResponse = await self._session.seam("model", self.wrapped.model_name, None, call)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        """A streamed request, one seam: live, the stream is read to its end inside the seam's call, its
        events handed to the run's handler (:class:`_Events`) as they come, and the whole response is
        journaled; pydantic-ai then gets that response as an already completed stream (no events again)."""
        events = self._events

        async def call() -> ModelResponse:
            async with open_durable_unit_stream(
                self.wrapped, messages, model_settings, model_request_parameters, run_context
            ) as streamed:
                if events is not None and run_context is not None:
                    await events(run_context, streamed)
                async for _ in streamed:
                    pass
            return streamed.get()

        response: ModelResponse = await self._session.seam("model", self.wrapped.model_name, None, call)
        yield CompletedStreamedResponse(
            response, model_request_parameters=model_request_parameters, replay_events=events is None
        )


class _Seams(AbstractCapability[Any]):
    """The capability agentrt adds to each run: model requests and function-tool calls as seams."""

    def __init__(self, session: Session, run_id: str, events: _Events | None) -> None:
        super().__init__()
        self._session = session
        self._run_id = run_id
        self._events = events

    def get_wrapper_model(self, model: Model) -> Model | None:
        return _SeamModel(model, self._session, self._events)

    def get_default_run_id(self) -> str | None:
        return self._run_id

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        handler: Any,
    ) -> Any:
        if tool_def.kind == "output":  # validating the output: no call to make
            return await handler(args)

        async def execute() -> Any:
            return await handler(args)

        detail = {"tool_call_id": call.tool_call_id, "args": call.args_as_dict()}
        return await self._session.seam("tool", call.tool_name, detail, execute)


def _approval_prompt(requests: DeferredToolRequests) -> dict[str, Any]:
    """What the run asks a person: the calls waiting for approval, and the calls made elsewhere."""

    def calls(parts: list[ToolCallPart]) -> list[dict[str, Any]]:
        return [
            {"tool_call_id": p.tool_call_id, "tool_name": p.tool_name, "args": p.args_as_dict()}
            for p in parts
        ]

    return {
        "kind": "pydantic_ai.deferred_tool_requests",
        "approvals": calls(requests.approvals),
        "calls": calls(requests.calls),
        "reply": 'true (approve all), false (deny all), or {"approvals": {ID: true|false|"reason"}, '
        '"calls": {ID: result}}',
    }


def _deferred_results(requests: DeferredToolRequests, reply: Any) -> DeferredToolResults:
    """pydantic-ai's answer to ``requests`` from the ask's reply (see :func:`_approval_prompt`)."""
    if isinstance(reply, bool):
        if requests.calls:
            raise ValueError(
                "the run waits for the results of tools called elsewhere "
                f"({', '.join(p.tool_name for p in requests.calls)}); reply with "
                '{"calls": {ID: result}}, not a bare true/false'
            )
        return DeferredToolResults(approvals={p.tool_call_id: reply for p in requests.approvals})
    if not isinstance(reply, Mapping):
        raise TypeError(
            f"the reply to a pydantic-ai approval must be true, false or an object, got {reply!r}"
        )
    approvals: dict[str, Any] = {}
    for part in requests.approvals:
        given = reply.get("approvals", {}).get(part.tool_call_id)
        if given is None:
            raise ValueError(
                f"the reply does not approve or deny tool call {part.tool_call_id!r} ({part.tool_name})"
            )
        approvals[part.tool_call_id] = ToolDenied(given) if isinstance(given, str) else bool(given)
    results: dict[str, Any] = {}
    for part in requests.calls:
        if part.tool_call_id not in reply.get("calls", {}):
            raise ValueError(
                f"the reply has no result for tool call {part.tool_call_id!r} ({part.tool_name})"
            )
        results[part.tool_call_id] = reply["calls"][part.tool_call_id]
    return DeferredToolResults(approvals=approvals, calls=results)


def _usage(usage: RunUsage) -> dict[str, int]:
    return {
        "requests": usage.requests,
        "tool_calls": usage.tool_calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
    }


def _deps(options: _Options, given: Any) -> Any:
    if options.deps is not None:
        return options.deps(given)
    deps_type = options.agent.deps_type
    if deps_type is type(None):
        return None
    return TypeAdapter(deps_type).validate_python(given)


async def _program(options: _Options, request: PydanticAIInput, session: Session) -> PydanticAIOutput:
    """One durable run: ``agent.run`` (again after each approval), in the host, under the seams."""
    agent = options.agent
    deps = _deps(options, request.deps)
    prompt: str | None = request.prompt
    history: list[ModelMessage] | None = None
    results: DeferredToolResults | None = None
    total = RunUsage()
    rounds = 0
    events = _Events(session, options.event_stream_handler) if options.stream else None
    with ToolManager.parallel_execution_mode("sequential"):
        while True:
            run_id = f"{session.run_id}.{rounds}"
            result = await agent.run(
                prompt,
                message_history=history,
                deferred_tool_results=results,
                deps=deps,
                usage_limits=options.usage_limits,
                model_settings=options.model_settings,
                conversation_id=session.run_id if history is None else None,
                capabilities=[_Seams(session, run_id, events)],
                event_stream_handler=events,
            )
            total = total + result.usage
            if not isinstance(result.output, DeferredToolRequests):
                return PydanticAIOutput(pydantic_core.to_jsonable_python(result.output), _usage(total))
            reply = await session.seam("ask", "deferred_tool_requests", _approval_prompt(result.output))
            results = _deferred_results(result.output, reply)
            history = result.all_messages()
            prompt = None
            rounds += 1


def durable(
    agent: Agent[Any, Any],
    *,
    name: str | None = None,
    deps: Callable[[Any], Any] | None = None,
    usage_limits: UsageLimits | None = None,
    model_settings: ModelSettings | None = None,
    stream: bool = False,
    event_stream_handler: EventStreamHandler[Any] | None = None,
) -> AgentrtAgent:
    """``agent`` as an agentrt agent: ``Runtime.start``, ``agentrt run MODULE:ATTR``, workers, serve.

    Define it at module level (``durable_support = durable(support_agent)``) so another process can
    find it.  Its input is :class:`PydanticAIInput` (``{"prompt": ..., "deps": ...}``); ``deps`` is
    converted to the agent's ``deps_type`` by pydantic, or built by ``deps(value)`` in the host
    (clients, connections: they are made again after a restart, never checkpointed).  Its output is
    :class:`PydanticAIOutput`.  ``usage_limits`` and ``model_settings`` are passed to every
    ``agent.run``.

    ``stream=True`` streams every model request (pydantic-ai's ``request_stream``) and puts the run's
    events on agentrt's durable event stream, as ``emit`` events of type ``pydantic_ai.<event_kind>``
    (``part_start``, ``part_end``, ``function_tool_call``, ``function_tool_result``, ``final_result``...;
    text deltas are not stored).  ``event_stream_handler`` (or the agent's own), called live with every
    event, deltas included, implies it.  Each event is delivered once: a journaled call's events are
    not produced again after a crash.
    """
    if not isinstance(agent, Agent):
        raise TypeError(f"agentrt.adapters.pydantic_ai.durable() takes a pydantic_ai.Agent, got {agent!r}")
    handler = event_stream_handler or agent.event_stream_handler
    options = _Options(agent, deps, usage_limits, model_settings, stream or handler is not None, handler)

    async def program(request: PydanticAIInput, session: Session) -> PydanticAIOutput:
        return await _program(options, request, session)

    agent_name = name or agent.name or "pydantic_ai_agent"
    return durable_agent(
        name=agent_name,
        description=f"the pydantic-ai agent {agent_name!r}, durable",
        input=PydanticAIInput,
        output=PydanticAIOutput,
        program=program,
        module=sys._getframe(1).f_globals.get("__name__", __name__),
    )
