"""Tool calls accumulated into a list and passed to `task.gather` later: a failure in the
compiled model (the list of promises is live at the await), fine here -- an agentrt
request is frozen data until it is awaited."""

# construct: tool-call promises accumulated in an array, then `task.gather(calls)`
# source: 000
# status: works natively
# expect: none
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task, workflows: list[str]) -> Any:
    calls = []
    for workflow in workflows:
        calls.append(task.tools.list_runs(workflow=workflow, page=1))
    await task.sleep(0)  # the list of requests crosses this await
    return await task.gather(calls)


def main() -> Any:
    return run(agent, task("list_runs"), ["build", "test"])


if __name__ == "__main__":
    print(main())
