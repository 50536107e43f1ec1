"""Destructuring loop targets (`for (const { name } in things)`): in Python the target
unpacks the item itself (`for key, (a, b) in d.items()`), and the loop resumes with
its iterator and targets intact."""

# construct: destructuring `for-in` loop (and the TS2491 for-in destructuring note)
# source: 001
# status: works natively
# expect: none
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task, things: dict[str, tuple[str, int]]) -> list[str]:
    out = []
    for key, (name, size) in things.items():
        reply = await task.tools.describe(name=name, size=size)
        out.append(f"{key}: {reply['name']} ({reply['size']})")
    return out


def main() -> Any:
    return run(agent, task("describe"), {"a": ("alpha", 1), "b": ("beta", 2)})


if __name__ == "__main__":
    print(main())
