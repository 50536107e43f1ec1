"""A module-level or imported function stored in a local (or a dict in a local) across an
await: agentrt resumes it by reference; the compiled model loses it (AR106,
portability).  Wrapping it in a lambda written in the agent silences both."""

# construct: externally produced function value: an imported / module-level function in a frame slot
# source: 001, 000
# status: works natively
# expect: AR106
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


def uncompiled(n: int) -> int:
    return n * 2


async def agent(task: Task, x: int) -> tuple[int, int]:
    h = {"fn": uncompiled}  # AR106 (portability)
    wrapped = lambda n: uncompiled(n)  # noqa: E731 - the workaround: an inline function
    await task.sleep(0)
    return h["fn"](x), wrapped(x)


def main() -> Any:
    return run(agent, task(), 21)


if __name__ == "__main__":
    print(main())
