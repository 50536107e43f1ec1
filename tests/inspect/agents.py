"""Agents whose checkpoints the dump / diff / fork tests read.

Golden outputs depend on the line numbers and bytecode of this file: after editing
it, regenerate them with ``python -m tests.inspect.make_golden`` on every Python.
"""

from __future__ import annotations

import attrs

from agentrt import Task, agent, serializable, tool, ui_tools
from agentrt.lowlevel import suspend


@serializable
@attrs.define
class Ledger:
    """A context manager the chain holds open across awaits (its bound __exit__ is on the stack)."""

    name: str
    entries: list[str] = attrs.Factory(list)
    open: bool = False

    def __enter__(self) -> Ledger:
        self.open = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.open = False


def record(label, *values):
    return (label, *values)


async def lookup(key, notes):
    notes.append(f"looking up {key}")
    try:
        raise KeyError(key)
    except KeyError:
        found = await suspend(("lookup", key))
    return found


async def nested(items):
    shared = ["x", "y"]
    state = {"left": shared, "right": shared, "count": 0}
    state["self"] = state
    notes = []
    with Ledger("main") as ledger:
        for item in items:
            state["count"] += 1
            ledger.entries.append(item)
            result = record("got", item, await lookup(item, notes))
            notes.append(result)
    return state["count"], notes, shared


def numbers(n):
    for i in range(n):
        yield i * 10


async def ticks(n):
    for i in range(n):
        got = await suspend(("tick", i))
        yield i + got


async def held(n):
    gen = numbers(n)
    first = next(gen)
    out = [first]
    async for value in ticks(n):
        out.append(value + next(gen))
    return out


# --------------------------------------------------------------------------- an SDK agent for the CLI


@attrs.frozen
class Items:
    items: list[str]


@attrs.frozen
class Tally:
    total: int
    seen: list[str]
    answer: str


@tool
def score(item: str) -> int:
    """The score of one item: its length."""
    return len(item)


async def run_tally(input: Items, task: Task) -> Tally:
    total = 0
    seen: list[str] = []
    for item in input.items:
        total += await task.tools.score(item=item)
        seen.append(item)
        await task.ui.notify(f"scored {item}")
    answer = await task.ui.ask(f"total is {total}; ok?")
    return Tally(total, seen, str(answer))


tally = agent(input=Items, output=Tally, tools=[score, *ui_tools], run=run_tally, name="tally")
