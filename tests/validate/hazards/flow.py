"""Liveness edge cases: the finding follows the engine's liveness, binding by binding."""

import re
import threading
from typing import Any

from agentrt import suspend


async def exception_edge(s: str) -> Any:
    m = re.match("a", s)  # expect: AR103
    try:
        await suspend(1)
    except ValueError:
        return m
    return None


async def one_branch_rebinds(s: str, flag: bool) -> Any:
    m = re.match("a", s)  # expect: AR103
    if flag:
        m = None
    await suspend(1)
    return m


async def loop_carried(items: list[str]) -> Any:
    last = None
    for item in items:
        if await suspend(item) and last:  # the previous iteration's match is read after the await
            print(last.group(0))
        last = re.match("a", item)  # expect: AR103
    return None


async def overwritten_after_the_await(items: list[str]) -> Any:
    last = None
    for item in items:
        await suspend(item)  # `last` is rebound below before any read: dead here
        last = re.match("a", item)  # negative: AR103
    return last is None


async def dead_in_every_iteration(items: list[str]) -> Any:
    out = []
    for item in items:
        m = re.match("a", item)  # negative: AR103
        out.append(m.group(0) if m else None)
        await suspend(item)
    return out


async def walrus(s: str) -> Any:
    if (m := re.search("a", s)) is not None:  # expect: AR103
        await suspend(1)
        return m.group(0)
    return None


async def closure_cell(s: str) -> Any:
    m = re.match("a", s)  # expect: AR103

    def read() -> Any:
        return m

    await suspend(1)
    return read


def factory() -> Any:
    lock = threading.Lock()  # expect: AR112

    async def agent() -> Any:
        await suspend(1)
        with lock:
            return 1

    return agent


async def across_a_yield(s: str) -> Any:  # expect: AR107p
    m = re.match("a", s)  # expect: AR103
    yield 1
    yield m


async def parameter_rebound(cb: Any) -> Any:  # negative: AR106
    cb = cb()
    await suspend(1)
    return cb
