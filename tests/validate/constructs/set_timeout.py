"""`setTimeout(async () => ...)`: in Python, a callback scheduled on the asyncio loop.  It
lives in the host's event loop, outside the checkpointed chain (AR102).  Use
`await task.sleep(seconds)`, a durable timer."""

# construct: descriptor leak: `setTimeout(async () => ...)`
# source: 001
# status: reported
# expect: AR102
# runtime: not run (the callback would run in the host's event loop, not the agent)

import asyncio
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


def remind() -> None:
    print("reminder")


async def agent(task: Task) -> str:
    asyncio.get_running_loop().call_later(60, remind)  # AR102
    await task.tools.work(step=1)
    return "scheduled"


def main() -> Any:
    return run(agent, task("work"), event_loop=True)


if __name__ == "__main__":
    print(main())
