"""Module-level definitions the codec tests checkpoint (blobs name them by module:qualname)."""

from __future__ import annotations

import collections
import dataclasses
import enum
import functools
from collections.abc import Callable
from typing import Any

import attrs

from agentrt._codec import serializable


@serializable
@attrs.define
class Point:
    x: int
    y: int = 0
    tags: list[str] = attrs.field(factory=list)

    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)


@serializable
@attrs.frozen
class FrozenPoint:
    x: int
    y: int


@attrs.define(slots=True)
@serializable  # below attrs: the mark must survive attrs rebuilding the slotted class
class SlottedBelow:
    a: Any


@serializable
@attrs.define(slots=False)
class DictAttrs:
    a: Any
    b: Any = None


@serializable
@dataclasses.dataclass
class DC:
    name: str
    items: list[Any] = dataclasses.field(default_factory=list)


@serializable
@dataclasses.dataclass(frozen=True, slots=True)
class FrozenSlotsDC:
    a: int
    b: str


@serializable
@dataclasses.dataclass(slots=True)
class SlotsDC:
    a: Any
    b: Any = None


@serializable
class WithState:
    def __init__(self, value: Any) -> None:
        self.value = value
        self.cache = "derived"

    def __getstate__(self) -> dict[str, Any]:
        return {"value": self.value}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.value = state["value"]
        self.cache = "restored"


@serializable
class Slotted:
    __slots__ = ("__weakref__", "a", "b")

    def __init__(self, a: Any, b: Any) -> None:
        self.a = a
        self.b = b


@serializable
class Node:
    """A plain class (no attrs) that may point at itself."""

    def __init__(self, value: Any, next: Any = None) -> None:
        self.value = value
        self.next = next

    def get(self) -> Any:
        return self.value


@serializable
class Child(Node):
    """Inherits the mark from Node."""


@serializable
class Bag(dict):  # type: ignore[type-arg]
    """A dict subclass with an attribute."""


@serializable
class Pair(tuple):  # type: ignore[type-arg]
    pass


@serializable
class Name(str):
    pass


class NotMarked:
    def __init__(self) -> None:
        self.x = 1

    def method(self) -> int:
        return self.x


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Perm(enum.Flag):
    R = 4
    W = 2
    X = 1


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class AppError(ValueError):
    pass


class RichError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def top_level(a: int, b: int = 2) -> int:
    return a + b


async def agent_fn(x: int) -> int:
    return x


LAMBDA = lambda q: q * 2  # noqa: E731 - a module-level lambda is found by code identity


def make_counter() -> Any:
    count = 0

    def inc() -> int:
        nonlocal count
        count += 1
        return count

    return inc


def make_pair() -> tuple[Any, Any]:
    """Two closures sharing one cell."""
    shared = []

    def push(v: Any) -> None:
        shared.append(v)

    def peek() -> Any:
        return list(shared)

    return push, peek


def make_recursive() -> Any:
    def fact(k: int) -> int:
        return 1 if k <= 1 else k * fact(k - 1)

    return fact


def make_empty_cell() -> Any:
    def uses_later() -> Any:
        return later

    if False:
        later = 1
    return uses_later


def make_with_defaults() -> Any:
    def inner(a: Any, b: Any = [1, 2], *, c: Any = "kw") -> Any:  # noqa: B006 - the default is the point
        return (a, b, c)

    inner.marker = "attr"  # type: ignore[attr-defined]
    return inner


def make_lambda(k: int) -> Any:
    return lambda v: v + k


def decorator(fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


@decorator
def decorated(a: int) -> int:
    return a * 10


class Holder:
    @staticmethod
    def static(a: int) -> int:
        return a + 1

    @classmethod
    def create(cls) -> str:
        return cls.__name__

    class Inner:
        def deep(self) -> Any:
            return lambda: "deep lambda"


DEQUE = collections.deque([1, 2], maxlen=5)


@dataclasses.dataclass
class FunctionTool:
    """A library's tool object (tests/codec/class_path_subjects.py): only closures of this module
    hold the decorated function, as the OpenAI Agents SDK's ``function_tool`` keeps it."""

    name: str
    on_invoke_tool: Callable[..., Any]


def function_tool(func: Callable[..., Any]) -> FunctionTool:
    async def _on_invoke_tool_impl(argument: str) -> Any:
        return await func(argument)

    async def _on_invoke_tool(argument: str) -> Any:
        return await _on_invoke_tool_impl(argument)

    return FunctionTool(func.__name__, _on_invoke_tool)
