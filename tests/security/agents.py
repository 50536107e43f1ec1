"""Agents whose checkpoints the adversarial tests forge (imported by the attack subprocesses)."""

from __future__ import annotations

from typing import Any

from agentrt import serializable
from agentrt.lowlevel import suspend


def touch(path: str) -> None:
    with open(path, "w") as f:
        f.write("ran")


async def plain(marker: str) -> Any:
    note = "hello"
    got = await suspend(note)
    return got


async def touching(marker: str) -> Any:
    """Writes the marker as soon as it starts: any code path that starts it ran agent code."""
    touch(marker)
    return await suspend("started")


async def loop(items: list[int]) -> Any:
    total = 0
    for item in items:
        total += await suspend(item)
    return total


def pair(a: Any, b: Any) -> tuple[Any, Any]:
    return a, b


async def half_built_call(marker: str) -> Any:
    first = [1, 2]
    return pair(first, await suspend("in the middle of a call"))


async def with_finally(marker: str) -> Any:
    try:
        return await suspend("waiting")
    finally:
        touch(marker)


async def inner() -> Any:
    return await suspend("inner")


async def outer(marker: str) -> Any:
    try:
        return await inner()
    finally:
        touch(marker)


class Guard:
    """A context manager a checkpoint can hold (``@serializable``)."""

    def __init__(self) -> None:
        self.entered = 0

    def __enter__(self) -> Guard:
        self.entered += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.entered -= 1


serializable(Guard)


def numbers(n: int) -> Any:
    # not `yield from range(n)`: a generator waiting in a plain iterator cannot be checkpointed
    for i in range(n):  # noqa: UP028
        yield i


async def mixed(marker: str) -> Any:
    seen = []
    with Guard() as guard:
        for i, value in enumerate(numbers(3)):
            seen.append(pair(value, await suspend(i)))
    return seen, guard.entered
