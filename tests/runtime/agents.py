"""Agents and tools the runtime tests drive (module level, so runs are resumable anywhere)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import attrs

from agentrt import Task, agent, progress, tool, ui_tools
from agentrt.lowlevel import suspend

CALLS: list[tuple[str, str]] = []  # (tool, idempotency key) of every tool execution in this process
_lock = threading.Lock()


def calls_of(run_id: str) -> list[tuple[str, str]]:
    return [c for c in CALLS if c[1].startswith(run_id + ":") or c[1].startswith(run_id + ".")]


class QuotaExceeded(Exception):
    """A typed, importable tool error."""

    def __init__(self, service: str, limit: int) -> None:
        super().__init__(service, limit)
        self.service = service
        self.limit = limit


@tool
def add(a: int, b: int, idempotency_key: str = "") -> int:
    """Add two numbers."""
    with _lock:
        CALLS.append(("add", idempotency_key))
    return a + b


@tool
async def double(x: int, delay: float = 0.0, idempotency_key: str = "") -> int:
    """Double a number, after ``delay`` seconds."""
    CALLS.append(("double", idempotency_key))
    if delay:
        await asyncio.sleep(delay)
    return 2 * x


@tool
def fail_typed(service: str) -> int:
    raise QuotaExceeded(service, 3)


class _Local(Exception):
    pass


@tool
def fail_untyped(message: str) -> int:
    class Unimportable(Exception):  # defined in a function: cannot be rebuilt by name
        pass

    raise Unimportable(message)


CONCURRENCY = {"now": 0, "max": 0}


@tool
def slow_sync(seconds: float) -> float:
    with _lock:
        CONCURRENCY["now"] += 1
        CONCURRENCY["max"] = max(CONCURRENCY["max"], CONCURRENCY["now"])
    try:
        time.sleep(seconds)
    finally:
        with _lock:
            CONCURRENCY["now"] -= 1
    return seconds


@attrs.frozen
class N:
    n: int


@attrs.frozen
class Total:
    total: int
    notes: list[str] = attrs.field(factory=list)


async def run_sum(input: N, task: Task) -> Total:
    total = 0
    for i in range(input.n):
        total = await task.tools.add(a=total, b=i)
    return Total(total)


summer = agent(input=N, output=Total, tools=[add], run=run_sum, name="summer")


async def run_fanout(input: N, task: Task) -> Total:
    doubled = await task.gather([task.tools.double(x=i) for i in range(input.n)])
    total = await task.tools.add(a=sum(doubled), b=0)
    return Total(total)


fanout = agent(input=N, output=Total, tools=[add, double], run=run_fanout, name="fanout")


async def run_errors(input: N, task: Task) -> Total:
    notes = []
    try:
        await task.tools.fail_typed(service="github")
    except QuotaExceeded as exc:
        notes.append(f"typed {exc.service} {exc.limit}")
    try:
        await task.tools.fail_untyped(message="nope")
    except Exception as exc:
        notes.append(f"{type(exc).__name__} {exc}")
    settled = await task.gather_settled([task.tools.add(a=1, b=2), task.tools.fail_typed(service="x")])
    notes.append(
        f"{settled[0].status} {settled[0].value} {settled[1].status} {type(settled[1].error).__name__}"
    )
    try:
        await task.gather([task.tools.double(x=1, delay=0.2), task.tools.fail_typed(service="y")])
    except QuotaExceeded as exc:
        notes.append(f"gather failed fast {exc.service}")
    return Total(0, notes)


errors = agent(
    input=N, output=Total, tools=[add, double, fail_typed, fail_untyped], run=run_errors, name="errors"
)


async def run_uncaught(input: N, task: Task) -> Total:
    if input.n == 0:
        await task.tools.fail_typed(service="uncaught")
    await task.tools.fail_untyped(message="really nope")
    return Total(0)


uncaught = agent(input=N, output=Total, tools=[fail_typed, fail_untyped], run=run_uncaught, name="uncaught")


async def run_child(input: N, task: Task) -> Total:
    v = await task.tools.add(a=input.n, b=1000)
    return Total(v, [task.run_id])


child = agent(input=N, output=Total, tools=[add], run=run_child, name="child")


async def run_parent(input: N, task: Task) -> Total:
    first = await task.tools.child(n=input.n)
    both = await task.gather([task.tools.child(n=1), task.tools.child(n=2), task.tools.add(a=1, b=1)])
    return Total(first.total + both[0].total + both[1].total + both[2], first.notes + both[0].notes)


parent = agent(input=N, output=Total, tools=[add, child], run=run_parent, name="parent")


async def run_asker(input: N, task: Task) -> Total:
    await task.ui.notify(progress("about to ask", percent=10))
    task.console.info("asking", n=input.n)
    answer = await task.ui.ask({"question": "approve?", "n": input.n})
    task.emit(Total(input.n, ["emitted"]))
    if answer != "yes":
        return Total(0, [f"rejected: {answer}"])
    await task.sleep(0.05)
    return Total(input.n, ["approved"])


asker = agent(input=N, output=Total, tools=[*ui_tools], run=run_asker, name="asker")


async def run_ask_child(input: N, task: Task) -> Total:
    out = await task.tools.asker(n=input.n)
    return Total(out.total + 1, out.notes)


ask_parent = agent(input=N, output=Total, tools=[asker], run=run_ask_child, name="ask_parent")


def spin(seconds: float) -> int:
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


@attrs.frozen
class Secs:
    seconds: float


async def run_spinner(input: Secs, task: Task) -> Total:
    await task.tools.add(a=1, b=1)
    spin(input.seconds)  # computes for n seconds without yielding
    await task.tools.add(a=1, b=1)
    return Total(0)


spinner = agent(input=Secs, output=Total, tools=[add], run=run_spinner, name="spinner")


async def run_swallower(input: Secs, task: Task) -> Total:
    try:
        spin(input.seconds)
    except Exception:  # the budget interrupt is not an Exception: not swallowed here
        return Total(-1)
    return Total(0)


swallower = agent(input=Secs, output=Total, tools=[add], run=run_swallower, name="swallower")


async def run_foreign(input: N, task: Task) -> Total:
    await asyncio.sleep(0)
    return Total(0)


foreign = agent(input=N, output=Total, run=run_foreign, name="foreign")


async def run_raw(input: N, task: Task) -> Total:
    await suspend(("not", "a", "request"))
    return Total(0)


raw = agent(input=N, output=Total, run=run_raw, name="raw")


async def run_holds_lock(input: N, task: Task) -> Total:
    lock = threading.Lock()
    await task.tools.add(a=1, b=1)
    return Total(int(lock.locked()))


holds_lock = agent(input=N, output=Total, tools=[add], run=run_holds_lock, name="holds_lock")


async def run_bad_output(input: N, task: Task) -> Any:
    return {"total": "not a number"}


bad_output = agent(input=N, output=Total, run=run_bad_output, name="bad_output")


async def run_dict_output(input: N, task: Task) -> Any:
    return {"total": input.n}


dict_output = agent(input=N, output=Total, run=run_dict_output, name="dict_output")


async def run_sleeper(input: N, task: Task) -> Total:
    t0 = time.time()
    await task.sleep(input.n / 10)
    slept = await task.gather([task.sleep(0.01), task.tools.add(a=1, b=2)])
    return Total(int(time.time() - t0 >= input.n / 10) + slept[1])


sleeper = agent(input=N, output=Total, tools=[add], run=run_sleeper, name="sleeper")


async def run_slow_tools(input: N, task: Task) -> Total:
    values = await task.gather([task.tools.slow_sync(seconds=0.05) for _ in range(input.n)])
    return Total(len(values))


slow_tools = agent(input=N, output=Total, tools=[slow_sync], run=run_slow_tools, name="slow_tools")
