"""`for await` over an async generator written in the agent: the loop's step (the
`asend` awaitable) and the generator's own frame are both checkpointed, even while
the loop body awaits.  Only the generator definition is a portability note (AR107)."""

# construct: `for await ... of` over an async iterator written in agent code
# source: 001, 000
# status: works natively
# expect: AR107
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def numbered(task: Task, count: int) -> Any:  # AR107 (portability)
    for number in range(count):
        yield await task.tools.fetch_item(number=number)


async def agent(task: Task) -> list[Any]:
    out = []
    async for item in numbered(task, 3):
        out.append(await task.tools.store(item=item["number"]))
    return out


def main() -> Any:
    return run(agent, task("fetch_item", "store"))


if __name__ == "__main__":
    print(main())
