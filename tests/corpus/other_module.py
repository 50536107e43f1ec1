"""Async helpers, a serializable class and an async generator living in a module other
than the agents that use them (cross-module frames in the suspended chain)."""

import attrs

from tests.corpus.protocol import add, ask, serializable


async def remote_double(x):
    a = await ask(x)
    return a * 2


async def remote_level(x, callback):
    """A middle frame that calls back into a coroutine function from the caller's module."""
    a = await ask(("remote-in", x))
    r = await callback(x + 1)
    b = await ask(("remote-out", r))
    return (a, r, b)


@serializable
@attrs.define
class RemoteCounter:
    n: int = 0

    async def bump(self, k):
        self.n += await add(k, 0)
        return self.n


async def remote_agen(n):
    for i in range(n):
        yield await add(i, 100)
