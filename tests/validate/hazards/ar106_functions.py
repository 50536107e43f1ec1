"""AR106: bound methods of resources (error) and of instances of unmarked importable classes
(portability: a signed blob carries them); functions by reference (portability)."""

import functools
import json
from collections.abc import Callable
from typing import Any

from agentrt import serializable, suspend
from tests.validate.hazards._helpers import RemoteMarked, shout


class Plain:
    def method(self) -> int:
        return 1


def module_level(x: int) -> int:
    return x


async def bound_methods(path: str) -> Any:
    m = Plain().method  # expect: AR106p
    read = open(path).read  # noqa: SIM115 - expect: AR106
    p = functools.partial(m)  # expect: AR106p
    await suspend(1)
    return m(), read(), p()


async def by_reference(cb: Callable[[int], int], other: Any) -> Any:  # expect: AR106p AR106p
    f = module_level  # expect: AR106p
    g = shout  # expect: AR106p
    h = functools.partial(module_level, 1)  # expect: AR106p
    b = len  # expect: AR106p
    table = {"f": module_level}  # expect: AR106p
    await suspend(1)
    return cb(1), other(), f(1), g("x"), h(), b("x"), table


async def fine(items: list[int]) -> Any:
    lam = lambda x: x + 1  # noqa: E731  negative: AR106

    def nested(x: int) -> int:
        return x * 2

    method = RemoteMarked().__repr__  # negative: AR106
    j = json  # negative: AR106
    dead = module_level  # negative: AR106
    dead(1)
    await suspend(1)
    return lam(1), nested(2), method(), j.dumps(items)


@serializable
class Holder:
    def method(self) -> int:
        return 1


async def serializable_bound() -> Any:
    m = Holder().method  # negative: AR106
    await suspend(1)
    return m()
