"""CommonJS / native modules, and "no external imports": Python agents import any module,
C extensions included.  What matters is only the values that cross an await; a
module object itself is checkpointed by name."""

# construct: CommonJS / native modules; only SDK imports allowed
# source: 001, 000
# status: does not apply in Python
# expect: none
# runtime: completes

import math
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task) -> Any:
    import statistics

    values = [1.0, 4.0, 9.0]
    reply = await task.tools.fetch(n=16)
    return statistics.mean(values), math.sqrt(reply["n"])


def main() -> Any:
    return run(agent, task("fetch"))


if __name__ == "__main__":
    print(main())
