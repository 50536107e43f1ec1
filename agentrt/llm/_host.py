"""The host side of one model request: build the executor request, call, validate, retry with feedback.

The runtime calls :func:`execute` for each ``ModelCall`` member of a pending
request and journals the :class:`Outcome`; everything here is independent of
stores and scheduling, so it is tested on its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any  # Any: model results and emitted events are JSON or user values

import attrs

from agentrt._sdk.llm import ModelCall, TextResult, event_type_name
from agentrt._sdk.schema import _class_doc, object_schema, structure
from agentrt.exceptions import (
    DecisionExhausted,
    MissingExecutor,
    ModelAnswerError,
    SchemaError,
    StructuredOutputError,
)
from agentrt.llm._contract import (
    Attempt,
    EventSpec,
    ExecutorRequest,
    Executors,
    GenerateResult,
    Usage,
    normalize_decide_result,
    normalize_generate_result,
)

__all__ = ["Outcome", "build_request", "execute"]


@attrs.frozen
class Outcome:
    """What one request came to: ``value`` (a ``TextResult`` or an event) or ``error``, and its cost."""

    ok: bool
    value: Any
    usage: Usage
    calls: int


def build_request(
    call: ModelCall,
    *,
    run_id: str,
    seq: int,
    idx: int,
    agent: str,
    tools: Mapping[str, Any],
    run_usage: Usage,
) -> ExecutorRequest:
    """The executor's view of ``call``: plain data with JSON Schemas in place of classes and tool names."""
    schemas = []
    for name in call.tools:
        tool = tools.get(name)
        if tool is None or not hasattr(tool, "json_schema"):
            known = ", ".join(sorted(tools)) or "(none)"
            raise LookupError(
                f"request {call.src!r} offers tool {name!r} to the model, but agent {agent!r} has no "
                "such tool "
                f"(its tools: {known}); add it to agent(tools=[...])"
            )
        schemas.append(tool.json_schema())
    events = tuple(
        EventSpec(event_type_name(cls), _class_doc(cls) or "", object_schema(cls)) for cls in call.events
    )
    return ExecutorRequest(
        kind=call.kind,
        src=call.src,
        run_id=run_id,
        seq=seq,
        idx=idx,
        agent=agent,
        prompt=call.prompt,
        messages=call.messages,
        system=call.system,
        model=call.model,
        output_type=call.output,
        output_schema=object_schema(call.output) if call.output is not None else None,
        tools=tuple(schemas),
        metadata=dict(call.metadata),
        events=events,
        run_usage=run_usage,
        reasoning=call.reasoning,
    )


async def execute(
    call: ModelCall,
    request: ExecutorRequest,
    executors: Executors,
    *,
    on_chunk: Callable[[ExecutorRequest, str], None] | None = None,
    on_result: Callable[[ExecutorRequest, Any], None] | None = None,
    before_call: Callable[[ExecutorRequest], None] | None = None,
) -> Outcome:
    """Call the executor, validate its answer, retry refused answers with feedback (``call.max_attempts``).

    ``before_call`` runs before every model call (the runtime's ``max_model_calls``
    check; what it raises propagates).  An executor's exception, or exhausted
    attempts, is an ``Outcome`` with ``ok=False``: the agent gets it at its await.
    """
    fn = getattr(executors, call.kind)
    if fn is None:
        error = MissingExecutor(request.agent, call.kind, f"request {call.src!r} (run {request.run_id})")
        return Outcome(False, error, Usage(), 0)
    attempts: list[Attempt] = []
    used = Usage()
    calls = 0
    while True:
        req = attrs.evolve(request, attempts=tuple(attempts), run_usage=request.run_usage + used)
        if before_call is not None:
            before_call(req)
        calls += 1
        try:
            if call.kind == "stream_text":

                def chunk(text: str, req: ExecutorRequest = req) -> None:
                    if on_chunk is not None:
                        on_chunk(req, text)

                answer = await fn(req, chunk)
            else:
                answer = await fn(req)
            if call.kind == "decide":
                decided = normalize_decide_result(answer)
                used = used + (decided.usage or Usage())
                if on_result is not None:
                    on_result(req, decided)
                value, problem = _accept_event(call, decided.event)
                shown = decided.event
            else:
                result = normalize_generate_result(answer)
                used = used + (result.usage or Usage())
                if on_result is not None:
                    on_result(req, result)
                value, problem = _accept_text(call, result, calls)
                shown = result.output if not (problem and result.tool_calls) else _calls_shown(result)
        except Exception as exc:
            if isinstance(exc, ModelAnswerError) and exc.usage is not None:
                used = used + exc.usage  # a refused, cut or filtered answer was still paid for
            return Outcome(False, exc, used, calls)
        if problem is None:
            if isinstance(value, TextResult):
                value = attrs.evolve(value, usage=used)
            return Outcome(True, value, used, calls)
        attempts.append(Attempt(shown, problem))
        if len(attempts) >= call.max_attempts:
            record = [a.to_json() for a in attempts]
            if call.kind == "decide":
                names = [event_type_name(c) for c in call.events]
                return Outcome(False, DecisionExhausted(call.src, names, record), used, calls)
            assert call.output is not None
            return Outcome(
                False, StructuredOutputError(call.src, call.output.__qualname__, record), used, calls
            )


def _accept_text(call: ModelCall, result: GenerateResult, calls: int) -> tuple[Any, str | None]:
    """``(TextResult, None)``, or ``(None, why the answer is refused)`` for a structured request."""
    output = result.output
    if call.output is not None and result.tool_calls and output in (None, "", {}):
        if not call.tools:  # nothing to run: not an answer, and the agent would get None
            names = ", ".join(sorted({c.name for c in result.tool_calls}))
            return None, (
                f"the answer calls tool(s) {names}, but this request offers no tools; answer with the "
                f"result itself, as JSON matching the {call.output.__qualname__} schema"
            )
        # The model called tools instead of answering: nothing to validate yet (the agent runs the
        # tools and asks again); the structured answer comes on a later turn.
        output = None
    elif call.output is None:
        if not isinstance(output, str):
            raise TypeError(
                f"the {call.kind} executor returned {type(output).__name__} as the output of text request "
                f"{call.src!r}; a text request's output must be a str"
            )
    else:
        if isinstance(output, (str, bytes)):
            try:
                output = json.loads(output)
            except ValueError as exc:
                return None, f"the answer is not JSON ({exc})"
        try:
            output = structure(output, call.output, "result")
        except SchemaError as exc:
            enveloped = isinstance(output, Mapping) and "result" in output
            if not (enveloped and set(output) <= {"result", "reasoning"}):
                return None, str(exc)
            try:  # an executor that forgot to unwrap the envelope
                output = structure(output["result"], call.output, "result")
            except SchemaError:
                return None, str(exc)
    text = TextResult(
        output=output,
        tool_calls=result.tool_calls,
        model=result.model,
        attempts=calls,
        finish_reason=result.finish_reason,
    )
    return text, None


def _calls_shown(result: GenerateResult) -> list[dict[str, Any]]:
    """A tool-call answer as the model is shown it when it is refused."""
    return [{"tool_call": c.name, "arguments": c.arguments} for c in result.tool_calls]


def _accept_event(call: ModelCall, event: Any) -> tuple[Any, str | None]:
    """``(event instance, None)`` or ``(None, why the choice is refused)``."""
    names = {event_type_name(cls): cls for cls in call.events}
    allowed = ", ".join(names)
    if isinstance(event, tuple(call.events)):
        return event, None
    several = isinstance(event, list) and len(event) > 1
    if several and all(isinstance(e, Mapping) for e in event):  # an executor's several choices at once
        chosen = ", ".join(str(e.get("type")) for e in event)
        return None, f"{len(event)} choices were made at once ({chosen}); choose exactly one of {allowed}"
    if isinstance(event, (str, bytes)):
        try:
            event = json.loads(event)
        except ValueError:
            return None, f"the answer is not a choice; call exactly one of the tools {allowed}"
    if not isinstance(event, Mapping) or not isinstance(event.get("type"), str):
        return None, f'the choice must be an object with a "type" among {allowed}'
    name = event["type"]
    cls = names.get(name)
    if cls is None:
        return None, f"{name!r} is not one of the allowed events ({allowed})"
    flat = {k: v for k, v in event.items() if k != "type"}
    try:
        return structure(flat, cls, name), None
    except SchemaError as exc:
        wrapped = event.get("payload")
        if not (isinstance(wrapped, Mapping) and set(event) <= {"type", "payload"}):
            return None, str(exc)
        try:  # {"type": NAME, "payload": {...}}
            return structure(wrapped, cls, name), None
        except SchemaError:
            return None, str(exc)
