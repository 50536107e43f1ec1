"""``generate_with_tools``: the model-calls-tools loop, as durable agent code.

The reference adapter runs this loop inside the executor (``metadata.maxSteps``), where a crash
loses every step.  Here it is an ordinary ``async def`` the agent awaits: each model call and
each batch of tool calls is its own journaled step, so a run killed in step 4 resumes in step 4
with steps 1-3 neither re-asked nor re-run.  (It is also the kind of cross-module async helper a
source-compiling runtime cannot checkpoint; agentrt restores its frame like any other.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any  # Any: tool results and messages are JSON or user values

from agentrt._sdk.llm import TextResult, Usage
from agentrt._sdk.schema import jsonable_or_repr
from agentrt._sdk.tools import tool_name
from agentrt.exceptions import ToolLoopExhausted as ToolLoopExhausted

__all__ = ["ToolLoopExhausted", "generate_with_tools"]


def _function(name: str, arguments: dict[str, Any]) -> dict[str, str]:
    return {"name": name, "arguments": json.dumps(arguments)}


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(jsonable_or_repr(value), ensure_ascii=False)


async def generate_with_tools(
    task: Any,
    prompt: str | None = None,
    *,
    tools: Iterable[Any],
    messages: Iterable[Mapping[str, Any]] | None = None,
    system: str | None = None,
    model: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    max_steps: int = 5,
    src: str = "generate_with_tools",
) -> TextResult:
    """Ask the model with ``tools`` offered; run the tools it asks for (concurrently, each a durable
    ``task.tools`` call), send back their results or errors, and repeat until it answers without
    tool calls -- at most ``max_steps`` model calls, then :class:`ToolLoopExhausted`.

    Returns the last answer; its ``usage`` is the sum over all steps.  ``tools`` are tools (or
    sub-agents) of the agent, by object or name.  A tool that raises, or a tool the model made
    up, is reported to the model as an error message rather than ending the run.
    """

    names = [t if isinstance(t, str) else tool_name(t) for t in tools]
    conversation: list[dict[str, Any]] = [dict(m) for m in (messages or ())]
    if prompt is not None:
        conversation.append({"role": "user", "content": prompt})
    used = Usage()
    for _step in range(max_steps):
        answer = await task.llm.generate_text(
            messages=conversation, system=system, model=model, tools=names, metadata=metadata, src=src
        )
        used = used + (answer.usage or Usage())
        if not answer.tool_calls:
            return TextResult(answer.output, used, (), answer.model, answer.attempts, answer.finish_reason)
        asked = [
            {"id": c.id, "type": "function", "function": _function(c.name, c.arguments)}
            for c in answer.tool_calls
        ]
        conversation.append({"role": "assistant", "content": answer.output or None, "tool_calls": asked})
        requests, unknown = [], {}
        for call in answer.tool_calls:
            if call.name in names:
                requests.append(getattr(task.tools, call.name)(**call.arguments))
            else:
                unknown[call.id] = f"error: there is no tool {call.name!r}; the tools are {', '.join(names)}"
        outcomes = iter(await task.gather_settled(requests) if requests else [])
        for call in answer.tool_calls:
            if call.id in unknown:
                content = unknown[call.id]
            else:
                outcome = next(outcomes)
                if outcome.status == "fulfilled":
                    content = _result_text(outcome.value)
                else:
                    content = f"error: {type(outcome.error).__name__}: {outcome.error}"
            conversation.append({"role": "tool", "tool_call_id": call.id, "content": content})
    raise ToolLoopExhausted(src, max_steps, conversation)


#: Read by the bind-time scan (``agentrt.llm._needs``): what calling this helper asks of the host.
generate_with_tools.__agentrt_needs__ = ("generate_text",)  # type: ignore[attr-defined]  # a marker attribute on a function
