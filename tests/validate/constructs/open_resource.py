"""Python-specific: an open file (or socket, lock, client, connection) held across an
await belongs to this process (AR112).  Open it in a tool, or close it first; a
file closed before the await is never reported."""

# construct: open resources across an `await` (Python-specific)
# source: hazards.md
# status: reported
# expect: AR112
# runtime: CannotCrossAwait AR112

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task, path: str) -> str:
    with open(path) as done_with:  # closed before the await: not reported
        first = done_with.readline()
    handle = open(path)  # noqa: SIM115 - AR112
    await task.tools.note(first=first)
    text = handle.read()
    handle.close()
    return text


def main() -> Any:
    return run(agent, task("note"), __file__)


if __name__ == "__main__":
    print(main())
