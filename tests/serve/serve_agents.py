"""Agents the HTTP API tests start over HTTP (module level, so a restarted server can resume them).

The server process imports this module with ``agentrt serve --import serve_agents``.
"""

from __future__ import annotations

import asyncio
import os
import time

import attrs

from agentrt import Task, agent, tool, ui_tools


@tool
async def tick(i: int, delay: float = 0.0) -> int:
    """One step of work, after ``delay`` seconds."""
    if delay:
        await asyncio.sleep(delay)
    return i


@tool
def slow_step(marker: str, seconds: float, idempotency_key: str = "") -> str:
    """A step that takes ``seconds``; appends a line to ``marker`` when it starts (the SIGKILL test
    kills the server while it sleeps)."""
    with open(marker, "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()} {idempotency_key}\n")
    time.sleep(seconds)
    return f"slept {seconds:g}s"


@attrs.frozen
class Steps:
    n: int = 3
    delay: float = 0.0


@attrs.frozen
class Total:
    total: int


async def run_steps(input: Steps, task: Task) -> Total:
    total = 0
    for i in range(input.n):
        total += await task.tools.tick(i=i, delay=input.delay)
        await task.ui.notify(f"step {i} done")
        await task.console.info("progress", step=i)
    await task.emit({"finished": total})
    return Total(total)


steps = agent(input=Steps, output=Total, tools=[tick, *ui_tools], run=run_steps, name="steps")


@attrs.frozen
class Question:
    question: str = "Approve?"


@attrs.frozen
class Answer:
    reply: object
    note: str


async def run_asker(input: Question, task: Task) -> Answer:
    await task.tools.tick(i=1)
    reply = await task.ui.ask({"question": input.question})
    note = f"{input.question} got {reply!r}"
    return Answer(reply, note)


asker = agent(input=Question, output=Answer, tools=[tick, *ui_tools], run=run_asker, name="asker")


@attrs.frozen
class Slow:
    marker: str
    seconds: float = 3.0


@attrs.frozen
class SlowDone:
    result: str


async def run_slow(input: Slow, task: Task) -> SlowDone:
    await task.tools.tick(i=0)
    result = await task.tools.slow_step(marker=input.marker, seconds=input.seconds)
    await task.tools.tick(i=1)
    return SlowDone(result)


slow = agent(input=Slow, output=SlowDone, tools=[tick, slow_step, *ui_tools], run=run_slow, name="slow")


@attrs.frozen
class Echo:
    text: str = ""
    count: int = 0


async def run_echo(input: Echo, task: Task) -> Echo:
    await task.ui.notify(input.text[:50])
    return input


echo = agent(input=Echo, output=Echo, tools=[*ui_tools], run=run_echo, name="echo")


@tool
def maybe_down(marker: str, idempotency_key: str = "") -> str:
    """Fails while the file ``marker`` exists (the retry test removes it); every call is written down."""
    with open(marker + ".calls", "a", encoding="utf-8") as f:
        f.write(f"maybe_down {idempotency_key}\n")
    if os.path.exists(marker):
        raise RuntimeError(f"down while {marker} exists")
    return "up"


@attrs.frozen
class Down:
    marker: str


@attrs.frozen
class Up:
    first: str
    result: str


async def run_flaky(input: Down, task: Task) -> Up:
    first = await task.tools.slow_step(marker=input.marker + ".calls", seconds=0.0)  # checkpoint 1
    result = await task.tools.maybe_down(marker=input.marker)  # checkpoint 2: fails the run while down
    return Up(first, result)


flaky = agent(input=Down, output=Up, tools=[slow_step, maybe_down], run=run_flaky, name="flaky")


@attrs.frozen
class Refund:
    order_id: str
    amount_eur: float = 10.0
    express: bool = False


APPROVAL = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Approve the refund"},
        "note": {"type": "string", "title": "Note"},
    },
    "required": ["approve"],
}


async def run_approve(input: Refund, task: Task) -> Answer:
    """A question with a schema: the page shows its text and a form built from the schema."""
    reply = await task.ui.ask(
        {"question": f"Refund {input.amount_eur:g} EUR for order {input.order_id}?", "schema": APPROVAL}
    )
    return Answer(reply, f"{input.order_id} express={input.express}")


approve = agent(input=Refund, output=Answer, tools=[*ui_tools], run=run_approve, name="approve")
