"""Agents for the worker and fleet tests (module level: any worker process can import them).

Every tool execution appends one JSON line to the side-effect log named by
``AGENTRT_TEST_SIDE_LOG`` (if set): its idempotency key and the executing pid, so a
test can count executions per journaled call across processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time

import attrs

from agentrt import Cancelled, Task, agent, tool, ui_tools

_lock = threading.Lock()
FINALLY: list[str] = []  # run ids whose finally block ran (this process)


def _log(kind: str, key: str, **extra: object) -> None:
    path = os.environ.get("AGENTRT_TEST_SIDE_LOG")
    if not path:
        return
    line = json.dumps({"kind": kind, "key": key, "pid": os.getpid(), "t": time.time(), **extra}) + "\n"
    with _lock, open(path, "a") as f:  # one write of one short line: atomic with O_APPEND
        f.write(line)


@tool
def record(tag: str, work: float = 0.0, idempotency_key: str = "") -> str:
    """A side effect: logged with its key, then (optionally) some work."""
    _log("record", idempotency_key, tag=tag)
    work += float(os.environ.get("AGENTRT_TEST_TOOL_DELAY", "0"))  # set only in a process to be killed
    if work:
        time.sleep(work)
    return f"{tag}!"


@tool
def cleanup(run_id: str, idempotency_key: str = "") -> str:
    _log("cleanup", idempotency_key, run=run_id)
    FINALLY.append(run_id)
    return "cleaned"


@attrs.frozen
class Job:
    i: int
    sleep: float = 0.0
    ask: bool = False
    child: bool = False
    work: float = 0.0


@attrs.frozen
class Out:
    value: str


async def run_leaf(input: Job, task: Task) -> Out:
    got = await task.tools.record(tag=f"leaf{input.i}", work=input.work)
    return Out(got)


leaf = agent(input=Job, output=Out, tools=[record], run=run_leaf, name="leaf")


async def run_mixed(input: Job, task: Task) -> Out:
    first = await task.tools.record(tag=f"a{input.i}", work=input.work)
    if input.sleep:
        await task.sleep(input.sleep)
    answer = "-"
    if input.ask:
        answer = await task.ui.ask({"question": "ok?", "i": input.i})
    sub = "-"
    if input.child:
        sub = (await task.tools.leaf(i=input.i, work=input.work)).value
    second = await task.tools.record(tag=f"b{input.i}", work=input.work)
    return Out(f"{first}|{answer}|{sub}|{second}")


mixed = agent(input=Job, output=Out, tools=[record, leaf, *ui_tools], run=run_mixed, name="mixed")


def expected(job: Job, answer: str = "yes") -> str:
    """What ``mixed`` returns for ``job`` (the oracle of the fleet tests)."""
    return f"a{job.i}!|{answer if job.ask else '-'}|{f'leaf{job.i}!' if job.child else '-'}|b{job.i}!"


async def run_careful(input: Job, task: Task) -> Out:
    """Waits on a question (or on a sub-agent that does); its cleanup must run when it is cancelled."""
    try:
        if input.child:
            await task.tools.careful_leaf(i=input.i + 1)
        await task.ui.ask({"question": "never answered"})
        return Out("answered")
    except Cancelled:
        await task.tools.cleanup(run_id=task.run_id)
        raise


careful_leaf = agent(input=Job, output=Out, tools=[cleanup, *ui_tools], run=run_careful, name="careful_leaf")
careful = agent(
    input=Job, output=Out, tools=[cleanup, careful_leaf, *ui_tools], run=run_careful, name="careful"
)


ATTEMPTS: dict[str, int] = {}


@tool(attempts=3, backoff=0.01, retry_on=ConnectionError)
def flaky(fail_times: int, error: str = "connection", idempotency_key: str = "") -> str:
    """Fails ``fail_times`` times (per key) before it works."""
    n = ATTEMPTS[idempotency_key] = ATTEMPTS.get(idempotency_key, 0) + 1
    if n <= fail_times:
        raise ConnectionError(f"attempt {n}") if error == "connection" else ValueError(f"attempt {n}")
    return f"ok after {n}"


@tool(timeout=0.2, attempts=2)
async def stuck(idempotency_key: str = "") -> str:
    ATTEMPTS[idempotency_key] = ATTEMPTS.get(idempotency_key, 0) + 1
    await asyncio.sleep(30)
    return "never"


@attrs.frozen
class Flaky:
    fail_times: int
    error: str = "connection"
    stuck: bool = False


async def run_policies(input: Flaky, task: Task) -> Out:
    try:
        if input.stuck:
            return Out(await task.tools.stuck())
        return Out(await task.tools.flaky(fail_times=input.fail_times, error=input.error))
    except (ConnectionError, ValueError, TimeoutError) as exc:
        return Out(f"{type(exc).__name__}: {exc}")


policies = agent(input=Flaky, output=Out, tools=[flaky, stuck], run=run_policies, name="policies")


GATE = threading.Event()
GATED: list[str] = []


@tool
def gated(idempotency_key: str = "") -> str:
    """Blocks until GATE is set (the test plays a worker paused inside a call)."""
    GATED.append(idempotency_key)
    GATE.wait(60)
    return "through"


async def run_gate(input: Job, task: Task) -> Out:
    return Out(await task.tools.gated())


gate = agent(input=Job, output=Out, tools=[gated], run=run_gate, name="gate")


@tool
async def nap(seconds: float, idempotency_key: str = "") -> str:
    """A long async call (cancelled, not journaled, when the run's deadline passes)."""
    await asyncio.sleep(seconds)
    return "rested"


async def run_deadlined(input: Job, task: Task) -> Out:
    """Naps (or waits on a question, or on a sub-agent that does); cleans up when cancelled."""
    try:
        if input.child:
            await task.tools.careful_leaf(i=input.i + 1)
        if input.ask:
            await task.ui.ask({"question": "never answered"})
        return Out(await task.tools.nap(seconds=input.sleep))
    except Cancelled:
        await task.tools.cleanup(run_id=task.run_id)
        raise


deadlined = agent(
    input=Job,
    output=Out,
    tools=[nap, cleanup, careful_leaf, *ui_tools],
    run=run_deadlined,
    name="deadlined",
)


@tool
def span(tag: str, work: float, idempotency_key: str = "") -> str:
    """Logs its start and end (the limit tests count how many overlap across processes)."""
    _log("span_start", idempotency_key, tag=tag)
    time.sleep(work)
    _log("span_end", idempotency_key, tag=tag)
    return tag


async def run_limited(input: Job, task: Task) -> Out:
    return Out(await task.tools.span(tag=f"l{input.i}", work=input.work))


limited = agent(input=Job, output=Out, tools=[span], run=run_limited, name="limited")
