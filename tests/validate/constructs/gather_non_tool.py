"""`task.gather` takes tool calls, sub-agents and sleeps only ("inputs must be tool-call
expressions"): an asyncio awaitable in agent code is AR102 statically, and
`task.gather` refuses it with a TypeError at run time."""

# construct: `task.gather` inputs must be tool calls (not arbitrary promises)
# source: 000
# status: reported
# expect: AR102
# runtime: TypeError

import asyncio
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task) -> Any:
    return await task.gather([task.tools.fetch(n=1), asyncio.sleep(1)])  # AR102


def main() -> Any:
    return run(agent, task("fetch"))


if __name__ == "__main__":
    print(main())
