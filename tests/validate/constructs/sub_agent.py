"""Sub-agents and service hooks need the compiled form in the reference runtime; agentrt
has no compile step, so any agent may call a sub-agent (a durable child run)."""

# construct: compilation required for sub-agents and service hooks
# source: 000
# status: does not apply in Python
# expect: none
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task) -> Any:
    summary = await task.tools.summarizer(text="a long text")  # a sub-agent: a child run
    return summary


def main() -> Any:
    return run(agent, task(agents=("summarizer",)))


if __name__ == "__main__":
    print(main())
