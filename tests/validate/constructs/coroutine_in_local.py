"""An agent coroutine created now and awaited later: agentrt checkpoints the unstarted
coroutine with the frame that holds it; the compiled model loses a pending promise
held in a local (AR101, portability)."""

# construct: an agent call started but not yet awaited, held across an `await`
# source: 001, 000
# status: works natively
# expect: AR101
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def fetch_page(task: Task, number: int) -> Any:
    return await task.tools.fetch_page(number=number)


async def agent(task: Task) -> list[Any]:
    later = fetch_page(task, 2)  # AR101 (portability): a coroutine object in a local
    first = await fetch_page(task, 1)
    second = await later
    return [first, second]


def main() -> Any:
    return run(agent, task("fetch_page"))


if __name__ == "__main__":
    print(main())
