"""Fixed helpers the generated agents use: a generator with a finally, context managers, an
async generator and an async iterator class.  Module-level and ``@serializable`` so a checkpoint
names them by reference; the fresh-process worker imports this module."""

from __future__ import annotations

from tests.corpus.protocol import ask, serializable


def gen(n, log, tag):
    """A generator suspended inside try/finally: closing it logs ``("gfin", tag)``."""
    try:
        for i in range(n):
            got = yield i * 3 + tag
            if got is not None:
                log.append(("gsent", tag, got))
    finally:
        log.append(("gfin", tag))


@serializable
class Ctx:
    def __init__(self, log, tag):
        self.log = log
        self.tag = tag

    def __enter__(self):
        self.log.append(("enter", self.tag))
        return self.tag

    def __exit__(self, kind, value, tb):
        self.log.append(("exit", self.tag, kind.__name__ if kind else None))
        return kind is KeyError  # suppresses KeyError only


@serializable
class ACtx:
    def __init__(self, log, tag):
        self.log = log
        self.tag = tag

    async def __aenter__(self):
        self.log.append(("aenter", await ask(self.tag)))
        return self.tag

    async def __aexit__(self, kind, value, tb):
        self.log.append(("aexit", await ask(self.tag), kind.__name__ if kind else None))
        return False


async def agen(n, log):
    try:
        for i in range(n):
            got = await ask(i * 2)
            yield got + 1
    finally:
        log.append("agfin")


@serializable
class ACount:
    """A class-based async iterator whose ``__anext__`` suspends."""

    def __init__(self, n):
        self.n = n

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.n <= 0:
            raise StopAsyncIteration
        self.n -= 1
        return await ask(self.n)
