"""AR111: values no serializer holds, where it is obvious from the source."""

import inspect
import sys
from typing import Any

from agentrt import suspend


async def frames(data: bytes) -> Any:
    frame = sys._getframe()  # expect: AR111
    current = inspect.currentframe()  # expect: AR111
    view = memoryview(data)  # expect: AR111
    await suspend(1)
    return frame, current, view


async def frames_dead(data: bytes) -> Any:
    view = memoryview(data)  # negative: AR111
    first = view[0]
    await suspend(first)
    return first


async def ticks(log: list[str]) -> Any:  # expect: AR107p
    try:
        while True:
            yield await suspend("tick")
    finally:
        log.append(await suspend("cleanup"))  # the cleanup suspends


async def quiet_ticks() -> Any:  # expect: AR107p
    try:
        while True:
            yield await suspend("tick")
    finally:
        pass


async def closes_while_cleanup_suspends() -> Any:
    log: list[str] = []
    ticker = ticks(log)
    first = await anext(ticker)
    await ticker.aclose()  # expect: AR111
    return first, log


async def closes_quiet_generator() -> Any:
    ticker = quiet_ticks()
    first = await anext(ticker)
    await ticker.aclose()  # negative: AR111
    return first
