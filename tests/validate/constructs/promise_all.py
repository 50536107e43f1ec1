"""`Promise.all` in Python is `asyncio.gather`: awaiting it hands the driver an asyncio
future, not an agentrt request (AR102).  The fix is `task.gather` (see task_gather.py)."""

# construct: `Promise.all` (and the `Promise.all([asyncFn(), ...])` descriptor leak)
# source: 001, 000
# status: reported
# expect: AR102
# runtime: ForeignAwaitable AR102

import asyncio
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def fetch(task: Task, which: str) -> Any:
    return await task.tools.fetch(which=which)


async def agent(task: Task) -> Any:
    a, b = await asyncio.gather(fetch(task, "a"), fetch(task, "b"))  # AR102
    return a, b


def main() -> Any:
    return run(agent, task("fetch"), event_loop=True)


if __name__ == "__main__":
    print(main())
