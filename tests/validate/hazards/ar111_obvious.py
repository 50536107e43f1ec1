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
