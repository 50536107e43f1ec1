"""A function returned by a non-agent call (`const f = makeAdder(x)`): in Python a closure
is code plus cells, and agentrt checkpoints both, so it survives the await."""

# construct: externally produced function value: a function returned from a call
# source: 001
# status: works natively
# expect: none
# runtime: completes

from collections.abc import Callable
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


def make_adder(x: int) -> Callable[[int], int]:
    def add(n: int) -> int:
        return x + n

    return add


async def agent(task: Task, x: int) -> int:
    add = make_adder(x)
    reply = await task.tools.fetch(n=1)
    return add(reply["n"])


def main() -> Any:
    return run(agent, task("fetch"), 41)


if __name__ == "__main__":
    print(main())
