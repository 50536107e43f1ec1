"""AR105: instances of classes not marked @agentrt.serializable (only classes resolved statically).

Portability (AR105p) for module-level classes, which a signed blob carries through the pickle
protocol (issue 24); an error for a class defined inside a function, which no blob can name."""

import dataclasses
import enum
from typing import Any

import attrs
import somewhere_else

from agentrt import serializable, suspend
from tests.validate.hazards import _helpers
from tests.validate.hazards._helpers import RemoteMarked, RemotePlain


class Plain:
    def __init__(self) -> None:
        self.n = 0


class Child(Plain):
    pass


@dataclasses.dataclass
class Record:
    n: int = 0


@serializable
@attrs.define
class Marked:
    n: int = 0


class MarkedChild(Marked):
    pass


class Oops(ValueError):
    pass


class Color(enum.Enum):
    RED = 1


class Unknown(somewhere_else.Base):
    pass


class Manager:
    def __enter__(self) -> "Manager":
        return self

    def __exit__(self, *exc: object) -> None:
        return None


async def unmarked() -> Any:
    a = Plain()  # expect: AR105p
    b = Child()  # expect: AR105p
    c = Record()  # expect: AR105p
    d = RemotePlain()  # expect: AR105p
    e = _helpers.RemotePlain()  # expect: AR105p
    await suspend(1)
    return a, b, c, d, e


async def fine() -> Any:
    a = Marked()  # negative: AR105
    b = MarkedChild()  # negative: AR105
    c = RemoteMarked()  # negative: AR105
    d = Oops("x")  # negative: AR105
    e = Color.RED  # negative: AR105
    f = Unknown()  # negative: AR105
    g = somewhere_else.Thing()  # negative: AR105
    await suspend(1)
    return a, b, c, d, e, f, g


async def local_class() -> Any:
    class Inner:
        pass

    x = Inner()  # expect: AR105
    await suspend(1)
    return x


async def held_by_with() -> None:
    with Manager():  # expect: AR105p
        await suspend(1)


async def dead_instance() -> Any:
    p = Plain()  # negative: AR105
    n = p.n
    await suspend(n)
    return n


class Worker:
    async def run(self) -> Any:  # expect: AR105p
        await suspend(1)
        return self


@serializable
@attrs.define
class MarkedWorker:
    n: int = 0

    async def run(self) -> Any:  # negative: AR105
        await suspend(1)
        return self.n

    @classmethod
    async def make(cls) -> Any:  # negative: AR105 AR106
        await suspend(1)
        return cls()
