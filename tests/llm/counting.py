"""A counting executor for tests that cross processes: every call is appended to a file.

``AGENTRT_TEST_MODEL_CALLS``: the JSONL file; ``AGENTRT_TEST_MODEL_DELAY``: seconds each call
takes (so a test can kill a process while a call is in flight).  Answers are deterministic.
"""

from __future__ import annotations

import asyncio
import json
import os

from agentrt.llm import (
    ExecutorRequest,
    Executors,
    GenerateResult,
    ModelToolCall,
    Scripted,
    ScriptedExecutors,
    Usage,
)


async def _generate_text(request: ExecutorRequest) -> GenerateResult:
    path = os.environ.get("AGENTRT_TEST_MODEL_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            # The shape of tests/cli's side-effect log, so its checks apply as they are.
            record = {"event": "start", "key": request.id, "src": request.src, "pid": os.getpid()}
            f.write(json.dumps(record) + "\n")
    await asyncio.sleep(float(os.environ.get("AGENTRT_TEST_MODEL_DELAY", "0") or 0))
    prompt = request.prompt or ""
    answer = f"<{request.seq}:{len(prompt)}>"
    return GenerateResult(output=answer, usage=Usage(len(prompt), len(answer), len(prompt) + len(answer)))


executors = Executors(generate_text=_generate_text)


async def _tool_loop(request: ExecutorRequest) -> GenerateResult:
    """For ``agents.looper``: first ask for ``add(a=2, b=3)``, then answer with what the tool said."""
    await _generate_text(request)  # log the call (and take the configured delay)
    last = request.messages[-1]
    if last["role"] == "user":
        call = ModelToolCall(f"call-{request.seq}", "add", {"a": 2, "b": 3})
        return GenerateResult(output="", usage=Usage(1, 1, 2), tool_calls=(call,))
    return GenerateResult(output=f"the sum is {last['content']}", usage=Usage(1, 1, 2))


tool_loop = Executors(generate_text=_tool_loop)


def scripted_everything() -> ScriptedExecutors:
    """Answers for ``agents.everything`` (a factory: ``--executors`` calls it)."""
    return ScriptedExecutors(
        {
            "plain": ["hi there"],
            "summary": [{"title": "T", "points": ["a"]}],
            "stream": [Scripted("one two three", usage=Usage(1, 3, 4))],
            "choose": [{"type": "Approve", "reason": "fine"}],
        }
    )


async def _planner(request: ExecutorRequest) -> GenerateResult:
    """For ``kinds_agents.planner`` (multi-turn), by turn: (1) ``lookup`` and ``add`` together,
    (2) ``add`` again, (3) ``submit`` what the tools said; each call logged and delayed as above."""
    await _generate_text(request)
    turn = 1 + sum(1 for m in request.messages if m["role"] == "assistant")
    results = [m["content"] for m in request.messages if m["role"] == "tool"]
    if turn == 1:
        calls = (
            ModelToolCall("t1-lookup", "lookup", {"word": "crash"}),
            ModelToolCall("t1-add", "add", {"a": 2, "b": 3}),
        )
    elif turn == 2:
        calls = (ModelToolCall("t2-add", "add", {"a": int(results[1]), "b": 10}),)
    else:
        calls = (ModelToolCall("t3-submit", "submit", {"word": results[0], "total": int(results[2])}),)
    return GenerateResult(output="", usage=Usage(1, 1, 2), tool_calls=calls)


planner = Executors(generate_text=_planner)
