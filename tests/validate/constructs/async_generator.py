"""An async generator (`async function*`) inside the agent: agentrt checkpoints it at
its yields and at its awaits; the compiled model rejects it at build time."""

# construct: async generator (`async function*`)
# source: 001, 000
# status: works natively
# expect: AR107
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def pages(task: Task, count: int) -> Any:  # AR107 (portability)
    for number in range(count):
        yield await task.tools.fetch_page(number=number)


async def agent(task: Task) -> list[Any]:
    return [page["number"] async for page in pages(task, 3)]


def main() -> Any:
    return run(agent, task("fetch_page"))


if __name__ == "__main__":
    print(main())
