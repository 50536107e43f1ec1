"""A sibling module the hazard corpus imports from (not a corpus file itself)."""

from typing import Any

import attrs

from agentrt import serializable, suspend


async def fetch_remote(x: Any) -> Any:
    return await suspend(("remote", x))


async def remote_stream(n: int) -> Any:
    for i in range(n):
        yield await suspend(("item", i))


def ask(x: Any) -> Any:
    """A sync helper returning the trap: `await ask(x)` is `await suspend(x)`."""
    return suspend(x)


def shout(text: str) -> str:
    return text.upper()


class RemotePlain:
    def __init__(self) -> None:
        self.n = 0


@serializable
@attrs.define
class RemoteMarked:
    n: int = 0
