"""AR101: asyncio futures and tasks (error), agent coroutines not awaited yet (portability)."""

import asyncio
from typing import Any

from agentrt import suspend


async def helper(x: Any) -> Any:
    return await suspend(x)


async def task_live() -> Any:
    t = asyncio.create_task(helper(1))  # expect: AR101 AR102
    await suspend("between")
    return await t  # expect: AR102


async def future_from_loop() -> Any:
    loop = asyncio.get_running_loop()
    fut = loop.create_future()  # expect: AR101
    await suspend("between")
    fut.set_result(1)
    return fut.result()


async def ensure_future_in_list() -> Any:
    pending = [asyncio.ensure_future(helper(i)) for i in range(2)]  # expect: AR101 AR102
    await suspend("between")
    return [p.done() for p in pending]


async def coroutine_live() -> Any:
    later = helper(2)  # expect: AR101p
    first = await helper(1)
    return first, await later


async def task_dead() -> Any:
    t = asyncio.create_task(helper(1))  # expect: AR102  negative: AR101
    return await t  # expect: AR102


async def coroutine_dead() -> Any:
    c = helper(3)  # negative: AR101
    return await c


async def future_used_up() -> Any:
    fut = asyncio.get_running_loop().create_future()  # negative: AR101
    fut.cancel()
    await suspend("after")
    return None
