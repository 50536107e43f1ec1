"""AR108: `async for` over a foreign async iterator whose body suspends."""

import asyncio
from typing import Any

import streaming_lib

from agentrt import suspend
from tests.validate.hazards._helpers import remote_stream


async def agent_stream(n: int) -> Any:  # expect: AR107p
    for i in range(n):
        yield await suspend(i)


async def socket_lines(host: str) -> int:
    reader, writer = await asyncio.open_connection(host, 80)  # expect: AR102
    writer.close()
    count = 0
    async for line in reader:  # expect: AR108
        await suspend(line)
        count += 1
    return count


async def library_stream() -> list[Any]:
    out = []
    async for chunk in streaming_lib.stream("x"):  # expect: AR108
        out.append(await suspend(chunk))
    return out


async def library_stream_no_await() -> list[Any]:
    return [chunk async for chunk in streaming_lib.stream("x")] + [
        await suspend(c)  # negative: AR108
        for c in "ab"
    ]


async def stream_without_suspension() -> list[Any]:
    out = []
    async for chunk in streaming_lib.stream("y"):  # expect: AR102
        out.append(chunk)
    return out


async def agent_code_streams(n: int) -> list[Any]:
    out = []
    async for x in agent_stream(n):  # negative: AR108
        out.append(await suspend(x))
    async for y in remote_stream(n):  # expect: AR109p  negative: AR108
        out.append(await suspend(y))
    async for z in (v async for v in agent_stream(n)):  # negative: AR108
        out.append(await suspend(z))
    return out
