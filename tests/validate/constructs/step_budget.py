"""The step budget ("ran too many synchronous steps without yielding"): a runtime limit
on CPU between two suspensions, AR110 -- the static check cannot know how long a loop
runs.  Heavy work belongs in a synchronous helper or a tool either way."""

# construct: step budget: too many synchronous steps without yielding
# source: 000
# status: runtime only (AR110)
# expect: none
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task, n: int) -> int:
    total = 0
    for i in range(n):  # with a large n, agentrt.Runtime stops the run with AR110
        total += i * i
    await task.tools.report(total=total)
    return total


def main() -> Any:
    return run(agent, task("report"), 1000)


if __name__ == "__main__":
    print(main())
