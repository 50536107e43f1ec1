"""`# agentrt: ignore[...]` on the binding line or on the await line silences a finding."""

import re
import threading
from typing import Any

from agentrt import suspend


async def silenced(s: str) -> Any:
    a = re.match("a", s)  # agentrt: ignore[AR103]  negative: AR103
    b = re.match("b", s)  # agentrt: ignore  negative: AR103
    c = threading.Lock()  # agentrt: ignore[AR105, AR112]  negative: AR112
    d = re.match("d", s)  # agentrt: ignore[AR105]  expect: AR103
    await suspend(1)
    return a, b, c, d


async def on_the_await_line(s: str) -> Any:
    m = re.match("a", s)  # negative: AR103
    await suspend(1)  # agentrt: ignore[AR103]
    return m
