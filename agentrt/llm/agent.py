"""``llm_agent(...)``: an agent whose loop the model drives, written as ordinary durable agent code.

The model gets the system prompt, the input (as JSON) and the tools; it calls tools until it
answers (``mode="one-shot"``: its structured answer is the output) or until it calls the
injected ``submit`` tool (``mode="multi-turn"``: the ``submit`` arguments are the output,
validated against the output class, with the problem fed back as the tool's result when they
do not fit).

Nothing here is special to the runtime: :func:`_run_llm_agent` is a plain ``async def`` that
awaits ``task.llm.generate_text(...)`` for each model turn and ``task.gather_settled([...])``
for each batch of tool calls.  Each is a journaled step, so a run killed between turns resumes
at the turn it was in, without asking the model again for a turn already answered or running a
finished tool again.  The conversation so far is the frame's ``messages`` local (what
``agentrt dump`` shows); budgets (``max_model_calls``, ``with_token_budget``) apply as to any
model request.
"""

from __future__ import annotations

import functools
import json
import sys
import types
from collections.abc import Iterable, Mapping
from typing import Any  # Any: messages and tool results are JSON or user values

import attrs

from agentrt._codec import serializable
from agentrt.exceptions import MaxTurnsExceeded as MaxTurnsExceeded

__all__ = ["MODES", "SUBMIT", "LLMAgentSpec", "MaxTurnsExceeded", "llm_agent"]

MODES = ("one-shot", "multi-turn")

#: The name of the tool injected into multi-turn agents; calling it ends the run with its arguments.
SUBMIT = "submit"

_SUBMIT_INSTRUCTION = (
    f"When you have the final result, call the `{SUBMIT}` tool with it; the run ends when `{SUBMIT}` "
    "accepts it. Do not answer in plain text instead."
)


@serializable
@attrs.frozen
class LLMAgentSpec:
    """What the durable loop needs, as plain data (it is a local of the checkpointed frame)."""

    name: str
    system: str
    mode: str
    output: type
    tools: tuple[str, ...]
    model: str | None
    max_turns: int
    max_attempts: int
    metadata: dict[str, Any]


def _submitted(**output: Any) -> dict[str, Any]:
    """The ``submit`` tool's function.  The loop reads ``submit`` calls itself and never dispatches
    them; this exists so that ``submit`` is an ordinary tool of the agent (schema, traces)."""
    return output


def _input_text(value: Any) -> str:
    from agentrt._sdk.schema import to_jsonable

    return json.dumps(to_jsonable(value), ensure_ascii=False)


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    from agentrt._sdk.schema import jsonable_or_repr

    return json.dumps(jsonable_or_repr(value), ensure_ascii=False)


def _assistant(answer: Any) -> dict[str, Any]:
    """The model's turn as a chat message (text and tool calls), to send back on the next turn."""
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
        }
        for c in answer.tool_calls
    ]
    text = answer.output if isinstance(answer.output, str) and answer.output else None
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return message


def _check_submit(spec: LLMAgentSpec, arguments: Mapping[str, Any]) -> tuple[Any, str | None]:
    """``(output, None)`` if ``submit``'s arguments are a valid output, else ``(None, the problem)``."""
    from agentrt._sdk.schema import structure
    from agentrt.exceptions import SchemaError

    try:
        return structure(dict(arguments), spec.output, "output"), None
    except SchemaError as exc:
        return None, str(exc)


async def _run_llm_agent(spec: LLMAgentSpec, input: Any, task: Any) -> Any:
    """The model-driven loop.  Every await is a durable step; ``messages`` is the conversation."""
    multi = spec.mode == "multi-turn"
    offered = (*spec.tools, SUBMIT) if multi else spec.tools
    messages: list[dict[str, Any]] = [{"role": "user", "content": _input_text(input)}]
    for turn in range(1, spec.max_turns + 1):
        answer = await task.llm.generate_text(
            messages=messages,
            system=spec.system,
            model=spec.model,
            output=None if multi else spec.output,
            tools=offered or None,
            metadata=spec.metadata,
            src=spec.name,
            max_attempts=spec.max_attempts,
        )
        messages.append(_assistant(answer))
        if not answer.tool_calls:
            if not multi:
                return answer.output  # the structured answer, validated by the runtime
            messages.append({"role": "user", "content": _SUBMIT_INSTRUCTION})
            continue
        submitted = [c for c in answer.tool_calls if c.name == SUBMIT] if multi else []
        replies: dict[str, str] = {}
        for call in submitted:
            output, problem = _check_submit(spec, call.arguments)
            if problem is None:
                return output  # other calls of this turn are not run: the model has decided
            replies[call.id] = (
                f"error: submit refused: {problem}. Call {SUBMIT} again with an output that matches "
                "its schema."
            )
        known = [c for c in answer.tool_calls if c.name in spec.tools]
        for call in answer.tool_calls:
            if call.name != SUBMIT and call.name not in spec.tools:
                names = ", ".join((*spec.tools, SUBMIT) if multi else spec.tools) or "(none)"
                replies[call.id] = f"error: there is no tool {call.name!r}; the tools are {names}"
        # One turn's tool calls run together, each a durable tool call (or child run).
        outcomes = (
            await task.gather_settled([getattr(task.tools, c.name)(**c.arguments) for c in known])
            if known
            else []
        )
        for call, outcome in zip(known, outcomes, strict=True):
            if outcome.status == "fulfilled":
                replies[call.id] = _result_text(outcome.value)
            else:
                replies[call.id] = f"error: {type(outcome.error).__name__}: {outcome.error}"
        for call in answer.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": replies[call.id]})
        del answer, submitted, known, outcomes
        if turn == spec.max_turns:
            break
    raise MaxTurnsExceeded(spec.name, spec.max_turns, messages)


#: Read by the bind-time scan: what an llm_agent asks of the host.
_run_llm_agent.__agentrt_needs__ = ("generate_text",)  # type: ignore[attr-defined]  # a marker attribute on a function


def llm_agent(
    *,
    system: str,
    input: type,
    output: type,
    tools: Iterable[Any] = (),
    mode: str = "one-shot",
    model: str | None = None,
    max_turns: int = 20,
    name: str | None = None,
    description: str | None = None,
    max_attempts: int = 3,
    metadata: Mapping[str, Any] | None = None,
) -> Any:
    """An agent the model drives: ``system`` prompt, ``tools`` (``@tool`` functions and other agents),
    ``input`` / ``output`` attrs classes.

    - ``mode="one-shot"``: the model answers with an ``output`` instance (structured output,
      validated, refused answers fed back up to ``max_attempts``); the tools it calls first are
      run and their results sent back.
    - ``mode="multi-turn"``: the model works in turns, calling tools, until it calls the injected
      ``submit`` tool (its parameters are the output schema); arguments that do not fit are
      refused with the problem as the tool's result, and the model tries again.  The model is
      asked to call a tool every turn (``tool_choice: "required"`` for OpenAI-compatible
      executors; override with ``metadata={"openai": {...}}``); a turn of plain text is answered
      with a reminder to submit.

    At most ``max_turns`` model turns, then :class:`MaxTurnsExceeded`.  The tool calls of one turn
    run together.  ``model`` is an alias or a provider's model name; ``metadata`` goes to the
    executor with each request.  The result is an ordinary :class:`~agentrt.Agent`: start it from
    the CLI (``MODULE:ATTR``), list it in another agent's tools, list agents in its tools.
    Give ``name=`` when a module defines more than one agent: it is the agent's tool name and
    the ``src`` of its model requests (what scripted executors key on).
    """
    from agentrt._sdk.agent import agent
    from agentrt._sdk.schema import object_schema
    from agentrt._sdk.tools import Tool

    if mode not in MODES:
        raise ValueError(f"llm_agent(mode={mode!r}): the modes are 'one-shot' and 'multi-turn'")
    if not isinstance(system, str) or not system.strip():
        raise TypeError("llm_agent(system=...) must be a non-empty str: the model's instructions")
    if not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError(f"llm_agent(max_turns={max_turns!r}) must be an int >= 1")
    caller = sys._getframe(1)
    module = caller.f_globals.get("__name__", __name__)
    made = agent(
        input=input,
        output=output,
        run=_placeholder,
        tools=tools,
        name=name or module.rsplit(".", 1)[-1],
        description=description if description is not None else system.strip().split("\n")[0][:300],
    )
    user_tools = tuple(made.tools)
    by_name = dict(made.tools)
    meta = dict(metadata or {})
    prompt = system
    if mode == "multi-turn":
        if SUBMIT in by_name:
            raise ValueError(
                f"llm_agent(tools=[...]) has a tool named {SUBMIT!r}, which multi-turn mode injects; "
                "rename it with @tool(name=...)"
            )
        by_name[SUBMIT] = Tool(
            fn=_submitted,
            name=SUBMIT,
            description="Submit the final result; the run ends when it is accepted.",
            parameters=object_schema(output),
            is_async=False,
            takes_idempotency_key=False,
        )
        openai = dict(meta.get("openai") or {})
        openai.setdefault("tool_choice", "required")
        meta["openai"] = openai
        prompt = f"{system.rstrip()}\n\n{_SUBMIT_INSTRUCTION}"
    spec = LLMAgentSpec(
        name=made.name,
        system=prompt,
        mode=mode,
        output=output,
        tools=user_tools,
        model=model,
        max_turns=max_turns,
        max_attempts=max_attempts,
        metadata=meta,
    )
    # The run is a partial of one module-level coroutine function: the checkpointed frame is
    # ``_run_llm_agent``'s, found by reference, and holds this agent's spec as plain data.
    run: Any = functools.partial(_run_llm_agent, spec)
    run.__module__ = module  # agent_spec() looks for the agent in its run's module
    run.__name__ = run.__qualname__ = made.name
    run.__wrapped__ = _run_llm_agent  # the bind-time scan reads this code
    run.__doc__ = made.description
    run.__agentrt_site__ = (f"llm_agent {made.name!r}", caller.f_code.co_filename, caller.f_lineno)
    return attrs.evolve(made, run=run, tools=types.MappingProxyType(by_name))


async def _placeholder(input: Any, task: Any) -> Any:  # pragma: no cover - replaced before use
    raise AssertionError("llm_agent's placeholder run was called")
