"""Agents the CLI tests run through the command (in the test process, or in subprocesses they kill).

Tools append ``{"event": "start"|"end", "tool", "key", "pid"}`` lines to the file named by
``AGENTRT_TEST_SIDE_EFFECTS``, so a test can tell which calls ran, in which process, and
whether one that had finished ran again.
"""

from __future__ import annotations

import json
import os
import random
import time

import attrs

from agentrt import Task, agent, progress, tool, ui_tools


def _log(event: str, tool_name: str, key: str) -> None:
    path = os.environ.get("AGENTRT_TEST_SIDE_EFFECTS")
    if path:
        line = json.dumps({"event": event, "tool": tool_name, "key": key, "pid": os.getpid()}) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


def step_value(acc: int, i: int) -> int:
    return (acc * 31 + i * i + 7) % 1_000_000_007


@tool
def work(i: int, acc: int, idempotency_key: str = "") -> int:
    """One step of work with a side effect (a line in the side-effect log)."""
    _log("start", "work", idempotency_key)
    low, high = (float(x) for x in os.environ.get("AGENTRT_TEST_WORK_SECONDS", "0.02,0.06").split(","))
    time.sleep(random.uniform(low, high))
    _log("end", "work", idempotency_key)
    return step_value(acc, i)


@attrs.frozen
class Steps:
    steps: int
    label: str = "run"


@attrs.frozen
class Result:
    acc: int
    history: list[int]
    label: str


def expected(steps: int, label: str = "run", start: int = 1) -> dict:
    acc, history = start, []
    for i in range(steps):
        acc = step_value(acc, i)
        history.append(acc % 1000)
    return {"acc": acc, "history": history, "label": label}


async def run_counter(input: Steps, task: Task) -> Result:
    acc = 1
    history: list[int] = []
    for i in range(input.steps):
        if i % 4 == 0:
            await task.ui.notify(progress(f"step {i} of {input.steps}"))
        acc = await task.tools.work(i=i, acc=acc)
        history.append(acc % 1000)
    return Result(acc, history, input.label)


counter = agent(input=Steps, output=Result, tools=[work, *ui_tools], run=run_counter, name="counter")


async def run_grandchild(input: Steps, task: Task) -> Result:
    acc = 1
    for i in range(input.steps):
        acc = await task.tools.work(i=i, acc=acc)
    return Result(acc, [acc % 1000], input.label)


grandchild = agent(input=Steps, output=Result, tools=[work], run=run_grandchild, name="grandchild")


async def run_child(input: Steps, task: Task) -> Result:
    acc = await task.tools.work(i=100, acc=1)
    inner = await task.tools.grandchild(steps=input.steps, label=input.label + "/grandchild")
    acc = await task.tools.work(i=101, acc=acc + inner.acc)
    return Result(acc, [*inner.history, acc % 1000], input.label)


child = agent(input=Steps, output=Result, tools=[work, grandchild], run=run_child, name="child")


async def run_chain(input: Steps, task: Task) -> Result:
    acc = await task.tools.work(i=200, acc=1)
    first = await task.tools.child(steps=input.steps, label="c1")
    second = await task.tools.child(steps=input.steps, label="c2")
    acc = await task.tools.work(i=201, acc=acc + first.acc + second.acc)
    return Result(acc, first.history + second.history, input.label)


chain = agent(input=Steps, output=Result, tools=[work, child], run=run_chain, name="chain")


def chain_expected(steps: int) -> dict:
    def child_result(label: str) -> dict:
        acc = step_value(1, 100)
        g = expected(steps)["acc"]
        acc2 = step_value(acc + g, 101)
        return {"acc": acc2, "history": [g % 1000, acc2 % 1000]}

    c1, c2 = child_result("c1"), child_result("c2")
    acc = step_value(step_value(1, 200) + c1["acc"] + c2["acc"], 201)
    return {"acc": acc, "history": c1["history"] + c2["history"], "label": "run"}


class Boom(Exception):
    """A typed error a tool raises."""


@tool
def explode(kind: str) -> int:
    if kind == "typed":
        raise Boom("the reactor is on fire")

    class Local(Exception):
        pass

    raise Local("nobody can import me")


@attrs.frozen
class Kind:
    kind: str


async def run_raiser(input: Kind, task: Task) -> Result:
    await task.tools.explode(kind=input.kind)
    return Result(0, [], "unreachable")


raiser = agent(input=Kind, output=Result, tools=[explode], run=run_raiser, name="raiser")
