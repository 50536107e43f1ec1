"""AR102: foreign awaitables and asyncio scheduling inside agent code."""

import asyncio
from typing import Any

import aiohttp

from agentrt import Task, suspend
from tests.validate.hazards._helpers import ask


async def sleeper() -> None:
    await asyncio.sleep(1)  # expect: AR102


async def gatherer() -> Any:
    return await asyncio.gather(suspend(1), suspend(2))  # expect: AR102


async def waiter(x: Any) -> Any:
    return await asyncio.wait_for(x, timeout=3)  # expect: AR102


async def task_group() -> None:
    async with asyncio.TaskGroup() as tg:  # expect: AR102
        tg.create_task(sleeper())  # expect: AR102


async def http(url: str) -> Any:
    async with aiohttp.ClientSession() as session:  # expect: AR102 AR112
        return await session.get(url)  # expect: AR102


async def scheduled() -> None:
    asyncio.get_running_loop().call_later(1, print)  # expect: AR102
    await suspend("x")


async def fine(task: Task) -> Any:
    a = await suspend(1)  # negative: AR102
    b = await task.gather([task.tools.fetch(n=1)])  # negative: AR102
    c = await ask(3)  # negative: AR102
    d = await sleeper_free()  # negative: AR102
    await task.sleep(1)  # negative: AR102
    return a, b, c, d


async def sleeper_free() -> int:
    return 1
