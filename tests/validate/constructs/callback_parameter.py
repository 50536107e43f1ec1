"""A function received as a parameter and called after an await: agentrt resumes it by
reference (`module:qualname`); the compiled model gets `undefined` back (AR106,
portability).  Prefer a tagged choice (`strategy: str`) or call it before the await."""

# construct: externally produced function value: a function received as a parameter
# source: 001, 000
# status: works natively
# expect: AR106
# runtime: completes

from collections.abc import Callable
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


def shout(text: str) -> str:
    return text.upper()


async def agent(task: Task, callback: Callable[[str], str]) -> str:  # AR106 (portability)
    reply = await task.tools.fetch(text="hello")
    return callback(reply["text"])


def main() -> Any:
    return run(agent, task("fetch"), shout)


if __name__ == "__main__":
    print(main())
