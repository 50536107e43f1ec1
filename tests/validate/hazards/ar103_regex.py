"""AR103: re.Match live (error), re.Pattern live (portability)."""

import re
from re import fullmatch
from typing import Any

from agentrt import suspend

WORD = re.compile(r"\w+")


async def match_live(s: str) -> Any:
    m = re.match("a", s)  # expect: AR103
    await suspend(1)
    return m


async def search_and_fullmatch(s: str) -> Any:
    a = re.search("a", s)  # expect: AR103
    b = fullmatch("a", s)  # expect: AR103
    await suspend(1)
    return a, b


async def pattern_methods(s: str) -> Any:
    m = WORD.match(s)  # expect: AR103
    local = re.compile("b")  # expect: AR103p
    n = local.search(s)  # expect: AR103
    await suspend(1)
    return m, n, local


async def finditer_loop(s: str) -> None:
    for m in re.finditer("a", s):  # expect: AR103
        await suspend(m.start())  # negative: AR103


async def finditer_live(s: str) -> Any:
    it = re.finditer("a", s)  # expect: AR103
    await suspend(1)
    return list(it)


async def match_dead(s: str) -> Any:
    m = re.match("a", s)  # negative: AR103
    text = m.group(0) if m else ""
    await suspend(text)
    return text


async def match_rebound(s: str) -> Any:
    m = re.match("a", s)  # negative: AR103
    m = m.group(0) if m else ""
    await suspend(1)
    return m


async def pattern_dead(lines: list[str]) -> Any:
    pattern = re.compile("x")  # negative: AR103
    kept = []
    for line in lines:
        if pattern.match(line):
            kept.append(line)
    await suspend(kept)
    return kept
