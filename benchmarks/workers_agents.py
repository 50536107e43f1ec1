"""The workflow of benchmarks/workers.py: ``chain`` makes ``steps`` sequential durable tool calls."""

from __future__ import annotations

import attrs

from agentrt import Task, agent, tool


@tool
def bump(x: int) -> int:
    return x + 1


@tool
def hold(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


@attrs.frozen
class Chain:
    steps: int = 10
    hold: float = 0.0


@attrs.frozen
class Count:
    n: int


async def run_chain(input: Chain, task: Task) -> Count:
    if input.hold:
        await task.tools.hold(seconds=input.hold)
    n = 0
    for _ in range(input.steps):
        n = await task.tools.bump(x=n)
    return Count(n)


chain = agent(input=Chain, output=Count, tools=[bump, hold], run=run_chain, name="chain")
