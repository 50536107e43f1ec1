"""An async helper imported from another file: agentrt checkpoints its frame like any
other (it resolves code in any imported module); the compiled model compiles only
the agent's file (AR109, portability).  Synchronous helpers may live anywhere."""

# construct: async helper imported from another module (no imports from local modules)
# source: 001, 000
# status: works natively
# expect: AR109
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs import _helpers
from tests.validate.constructs._drive import run, task


async def agent(task: Task) -> Any:
    result = await _helpers.fetch_and_process(task, 21)  # AR109 (portability)
    return _helpers.summarize([result["processed"], 0])


def main() -> Any:
    return run(agent, task("fetch"))


if __name__ == "__main__":
    print(main())
