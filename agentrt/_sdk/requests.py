"""The requests an agent hands to the runtime, and the values it gets back.

Every request is plain, frozen, checkpointable data, and awaitable: awaiting it
is exactly ``await suspend(request)`` (``__await__`` returns the trap generator
itself, so no extra frame sits in the suspended chain).  Holding a request in
a local across another await is fine -- it is only data until awaited.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Generic, TypeVar  # Any: request arguments and answers are the user's values

import attrs

from agentrt._codec import serializable
from agentrt.lowlevel import _suspend_iterator

__all__ = [
    "Ask",
    "ChildRun",
    "Fulfilled",
    "Gather",
    "Progress",
    "Rejected",
    "Request",
    "Sleep",
    "ToolCall",
    "progress",
]

T = TypeVar("T")


class _Awaitable:
    __slots__ = ()

    def __await__(self) -> Generator[Any, Any, Any]:
        return _suspend_iterator(self)


@serializable
@attrs.frozen(eq=True, hash=False)
class ToolCall(_Awaitable):
    """``task.tools.NAME(**kwargs)`` for a ``@tool`` function."""

    name: str
    kwargs: dict[str, Any] = attrs.field(factory=dict)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.name}({args})"


@serializable
@attrs.frozen(eq=True, hash=False)
class ChildRun(_Awaitable):
    """``task.tools.NAME(**input)`` for a sub-agent: the runtime starts a durable child run."""

    name: str
    kwargs: dict[str, Any] = attrs.field(factory=dict)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"agent {self.name}({args})"


@serializable
@attrs.frozen(eq=True, hash=False)
class Ask(_Awaitable):
    """``task.ui.ask(prompt)``: the run waits until a reply is delivered."""

    prompt: Any

    def __repr__(self) -> str:
        return f"ask({self.prompt!r})"


@serializable
@attrs.frozen
class Sleep(_Awaitable):
    """``task.sleep(seconds)``: a durable timer; ``until`` is wall-clock (``time.time()``)."""

    until: float
    seconds: float

    def __repr__(self) -> str:
        return f"sleep({self.seconds:g} s)"


#: What ``task.gather`` accepts as members.
MEMBER_TYPES = (ToolCall, ChildRun, Sleep)


@serializable
@attrs.frozen(eq=True, hash=False)
class Gather(_Awaitable):
    """``task.gather([...])`` / ``task.gather_settled([...])``: members run concurrently, results in order."""

    requests: tuple[Any, ...]
    settled: bool = False

    def __repr__(self) -> str:
        name = "gather_settled" if self.settled else "gather"
        return f"{name}([{', '.join(map(repr, self.requests))}])"


Request = ToolCall | ChildRun | Ask | Sleep | Gather
REQUEST_TYPES = (ToolCall, ChildRun, Ask, Sleep, Gather)


@serializable
@attrs.frozen
class Fulfilled(Generic[T]):
    """A member of ``gather_settled`` that returned ``value``."""

    value: T
    status: str = "fulfilled"


@serializable
@attrs.frozen
class Rejected:
    """A member of ``gather_settled`` that raised ``error``."""

    error: BaseException
    status: str = "rejected"


@serializable
@attrs.frozen
class Progress:
    """A progress event for ``task.ui.notify``."""

    message: str
    percent: float | None = None
    kind: str = "progress"


def progress(message: str, *, percent: float | None = None) -> Progress:
    """A progress event: ``await task.ui.notify(progress("Fetching issue..."))``."""
    return Progress(message, percent)
