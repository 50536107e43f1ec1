"""`new` on a compiled async function: Python has no `new`; building an object is a call,
and an async factory is an ordinary coroutine.  The object crosses awaits when its
class is marked `@agentrt.serializable`."""

# construct: `new` on a compiled async function
# source: 001
# status: does not apply in Python
# expect: none
# runtime: completes

from typing import Any

import attrs

from agentrt import Task, serializable
from tests.validate.constructs._drive import run, task


@serializable
@attrs.define
class Report:
    title: str
    lines: list[str] = attrs.Factory(list)

    @classmethod
    async def create(cls, task: Task, title: str) -> "Report":
        header = await task.tools.header(title=title)
        return cls(header["title"])


async def agent(task: Task) -> Any:
    report = await Report.create(task, "weekly")
    report.lines.append((await task.tools.line(n=1))["tool"])
    return report


def main() -> Any:
    return run(agent, task("header", "line"))


if __name__ == "__main__":
    print(main())
