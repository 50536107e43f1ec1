"""A function reference chosen at run time and held across an await ("conditionally
assigned functions may not survive serialization"): by reference in agentrt,
lost in the compiled model (AR106, portability)."""

# construct: dynamic function reference across an `await` (conditionally assigned function)
# source: 000
# status: works natively
# expect: AR106
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


def to_upper(text: str) -> str:
    return text.upper()


def to_lower(text: str) -> str:
    return text.lower()


async def agent(task: Task, shout: bool) -> str:
    convert = to_upper if shout else to_lower  # AR106 (portability)
    reply = await task.tools.fetch(text="Hello")
    return convert(reply["text"])


def main() -> Any:
    return run(agent, task("fetch"), True)


if __name__ == "__main__":
    print(main())
