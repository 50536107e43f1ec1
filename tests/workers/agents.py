"""Agents for the worker and fleet tests (module level: any worker process can import them).

Every tool execution appends one JSON line to the side-effect log named by
``AGENTRT_TEST_SIDE_LOG`` (if set): its idempotency key and the executing pid, so a
test can count executions per journaled call across processes.
"""

from __future__ import annotations

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
    line = json.dumps({"kind": kind, "key": key, "pid": os.getpid(), **extra}) + "\n"
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
