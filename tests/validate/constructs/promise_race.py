"""`Promise.race` / `Promise.any` in Python are `asyncio.wait(..., FIRST_COMPLETED)` and
`asyncio.as_completed`: foreign awaitables inside agent code (AR102)."""

# construct: `Promise.race` / `Promise.any`
# source: 001, 000
# status: reported
# expect: AR102
# runtime: ForeignAwaitable AR102

import asyncio
from typing import Any

from agentrt import Task, suspend
from tests.validate.constructs._drive import run, task


async def probe(name: str) -> Any:
    return await suspend(name)


async def agent(task: Task) -> Any:
    done, _ = await asyncio.wait(  # AR102
        [asyncio.ensure_future(probe("f1")), asyncio.ensure_future(probe("f2"))],  # AR102, twice
        return_when=asyncio.FIRST_COMPLETED,
    )
    return done


def main() -> Any:
    return run(agent, task(), event_loop=True)


if __name__ == "__main__":
    print(main())
