"""A promise held in a local across an await: in Python, an asyncio Task or Future.
It belongs to the event loop and cannot be checkpointed (AR101), and scheduling it
from agent code is itself a foreign operation (AR102)."""

# construct: a `Promise` held in a local across an `await`
# source: 001, 000
# status: reported
# expect: AR101, AR102
# runtime: CannotCrossAwait AR101

import asyncio
from typing import Any

from agentrt import Task, suspend
from tests.validate.constructs._drive import run, task


async def fetch_something() -> Any:
    return await suspend("something")


async def agent(task: Task) -> Any:
    pending = asyncio.ensure_future(fetch_something())  # AR102 here, AR101 for `pending`
    await task.sleep(1)
    return pending.done()


def main() -> Any:
    return run(agent, task(), event_loop=True)


if __name__ == "__main__":
    print(main())
