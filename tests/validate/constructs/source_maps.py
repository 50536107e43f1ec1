"""No source maps: there is no generated code.  A resumed agent is the code you wrote,
so tracebacks, pdb and coverage point at your own lines -- here, after a checkpoint."""

# construct: no source maps (stack traces point into generated code)
# source: 001
# status: does not apply in Python
# expect: none
# runtime: completes

import traceback
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task) -> None:
    await task.tools.fetch(n=1)
    # the traceback names the next line, in this file
    raise LookupError("raised after a restore")


def main() -> Any:
    try:
        run(agent, task("fetch"))
    except LookupError as error:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        return f"{frame.name}: {frame.line}"
    return None


if __name__ == "__main__":
    print(main())
