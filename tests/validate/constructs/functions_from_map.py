"""Functions produced by `.map` (`items.map(i => () => process(i))`): lambdas written in
the agent are checkpointed by code with their defaults and cells."""

# construct: externally produced function value: functions made by `.map` / spread
# source: 001
# status: works natively
# expect: none
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


def process(item: int) -> int:
    return item * 10


async def agent(task: Task, items: list[int]) -> list[int]:
    thunks = [lambda i=i: process(i) for i in items]
    await task.sleep(0)
    return [thunk() for thunk in thunks]


def main() -> Any:
    return run(agent, task(), [1, 2, 3])


if __name__ == "__main__":
    print(main())
