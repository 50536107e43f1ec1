"""Async functions leaking into non-agent code (`items.map(async x => ...)`): in Python
that makes coroutine objects, which agentrt checkpoints unstarted; the compiled model
cannot hold pending promises, so a list of them live across an await is AR101
(portability).  Prefer `task.gather` over tool calls."""

# construct: descriptor leak: `.map(async ...)` into non-compiled code
# source: 001
# status: works natively
# expect: AR101
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def fetch(task: Task, item: str) -> Any:
    return await task.tools.http_get(url=item)


async def agent(task: Task, items: list[str]) -> list[Any]:
    pending = [fetch(task, item) for item in items]  # AR101 (portability): coroutines in a list
    first = await pending[0]
    second = await pending[1]
    return [first, second]


def main() -> Any:
    return run(agent, task("http_get"), ["a", "b"])


if __name__ == "__main__":
    print(main())
