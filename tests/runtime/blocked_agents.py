"""Agents whose next checkpoint is refused -- a ``with`` over a ``@contextlib.contextmanager`` across an
await -- and the fix the tests swap in.  ``run``'s own code never changes (it calls ``held()``), so its
checkpoints stay restorable after the fix, as after a fix in a helper module."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import attrs

import agentrt
from agentrt import Task, agent, tool

#: Every tool execution in this process: ``(tool, x, idempotency key)``.
CALLS: list[tuple[str, int, str]] = []
#: How many more times ``flaky`` fails before it works.
FLAKY = {"failures": 0}


@tool
def bump(x: int, idempotency_key: str = "") -> int:
    """Add one."""
    CALLS.append(("bump", x, idempotency_key))
    return x + 1


@tool
def flaky(x: int, idempotency_key: str = "") -> int:
    """Times ten, once it stops failing."""
    CALLS.append(("flaky", x, idempotency_key))
    if FLAKY["failures"] > 0:
        FLAKY["failures"] -= 1
        raise RuntimeError("flaky is down")
    return x * 10


@contextlib.contextmanager
def locked_section() -> Iterator[None]:  # the generator holds a lock while suspended: never checkpointable
    lock = threading.Lock()
    with lock:
        yield


@agentrt.serializable
@attrs.define
class Section:
    """The fix: a context manager whose exit crosses an await."""

    def __enter__(self) -> Section:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


HELD: dict[str, Callable[[], contextlib.AbstractContextManager[object]]] = {"cm": locked_section}


def held() -> contextlib.AbstractContextManager[object]:
    return HELD["cm"]()  # the tests swap in the fix


@attrs.frozen
class In:
    n: int


@attrs.frozen
class Out:
    total: int


async def run_blocking(input: In, task: Task) -> Out:
    a = await task.tools.bump(x=input.n)  # checkpoint 1; bump's result journaled there
    with held():
        b = await task.tools.bump(x=a)  # checkpoint 2: refused while held() is a @contextmanager
    return Out(total=b)


blocking = agent(input=In, output=Out, tools=[bump], run=run_blocking)


async def run_flaky(input: In, task: Task) -> Out:
    a = await task.tools.bump(x=input.n)  # checkpoint 1
    c = await task.tools.flaky(x=a)  # checkpoint 2: fails the run while flaky is down
    return Out(total=a + c)


flaky_agent = agent(input=In, output=Out, tools=[bump, flaky], run=run_flaky)
BLOCKING_LINE = run_blocking.__code__.co_firstlineno + 3  # the await inside the with
