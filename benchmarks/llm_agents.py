"""The agents and executors that benchmarks/llm.py drives (module level: checkpoints name a real module).

``ask_loop`` makes ``n`` sequential ``task.llm.generate_text`` calls; ``tool_loop`` makes ``n``
sequential ``task.tools.answer`` calls, the same shape with a tool in place of the model.  The
executors are plain async functions answering a short text with usage: ``instant_generate`` at
once, ``fast_generate`` after ``FAST_MODEL_SECONDS`` (a fast model); the tool sleeps ``delay``
seconds so that it costs what the executor costs.  ``GatedCounter`` counts the calls it answers
and can hold one call back, so the resume check can close a runtime with a call in flight.
"""

from __future__ import annotations

import asyncio

import attrs

from agentrt import Task, agent, tool
from agentrt.llm import ExecutorRequest, GenerateResult, Usage

FAST_MODEL_SECONDS = 0.005
ANSWER = "ok, done."
USAGE = Usage(input_tokens=4, output_tokens=3, total_tokens=7)


@attrs.frozen
class LoopInput:
    n: int
    delay: float = 0.0  # seconds each tool call takes (tool_loop only; executors have their own)


@attrs.frozen
class LoopOutput:
    calls: int
    chars: int
    last: str


# --------------------------------------------------------------------------- executors


async def instant_generate(request: ExecutorRequest) -> GenerateResult:
    """A zero-latency model: a short answer with usage, at once."""
    return GenerateResult(output=ANSWER, usage=USAGE)


async def fast_generate(request: ExecutorRequest) -> GenerateResult:
    """A fast model: the same answer after ``FAST_MODEL_SECONDS``."""
    await asyncio.sleep(FAST_MODEL_SECONDS)
    return GenerateResult(output=ANSWER, usage=USAGE)


class GatedCounter:
    """A zero-latency executor that records each request id it answers.

    With ``hold_at=k``, the k-th call (1-based) sets ``held`` and then waits forever: the
    answers of calls 1..k-1 are journaled by then (calls are sequential), and call k is in
    flight when the runtime is closed.
    """

    def __init__(self, hold_at: int | None = None) -> None:
        self.hold_at = hold_at
        self.calls: list[str] = []
        self.held = asyncio.Event()

    async def generate_text(self, request: ExecutorRequest) -> GenerateResult:
        self.calls.append(request.id)
        if self.hold_at is not None and len(self.calls) == self.hold_at:
            self.held.set()
            await asyncio.Event().wait()  # cancelled when the runtime closes
        return GenerateResult(output=f"answer {request.seq}", usage=USAGE)


# --------------------------------------------------------------------------- agents


@tool
async def answer(i: int, delay: float = 0.0) -> str:
    """Answer like the executor does: a short text, after ``delay`` seconds.

    Args:
        i: The call's number.
        delay: Seconds to wait first.
    """
    if delay:
        await asyncio.sleep(delay)
    return ANSWER


async def ask_loop_run(input: LoopInput, task: Task) -> LoopOutput:
    chars = 0
    last = ""
    for i in range(input.n):
        result = await task.llm.generate_text(prompt=f"Step {i}: say ok.", src="step")
        last = result.output
        chars += len(last)
    return LoopOutput(input.n, chars, last)


ask_loop = agent(input=LoopInput, output=LoopOutput, run=ask_loop_run, name="ask_loop")


async def tool_loop_run(input: LoopInput, task: Task) -> LoopOutput:
    chars = 0
    last = ""
    for i in range(input.n):
        last = await task.tools.answer(i=i, delay=input.delay)
        chars += len(last)
    return LoopOutput(input.n, chars, last)


tool_loop = agent(input=LoopInput, output=LoopOutput, tools=[answer], run=tool_loop_run, name="tool_loop")
