"""Calling an async function through a member expression (`handlers.onClick(5)`,
`fns[0](5)`): Python has no call descriptors; an `async def` called from anywhere
returns a coroutine, and nested ones are checkpointed by code."""

# construct: member-expression call of an async function in an object or array
# source: 001
# status: does not apply in Python
# expect: none
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task) -> list[Any]:
    async def on_click(x: int) -> Any:
        return await task.tools.click(x=x)

    async def on_key(x: int) -> Any:
        return await task.tools.key(x=x)

    handlers = {"click": on_click}
    fns = [on_key]
    first = await handlers["click"](5)
    second = await fns[0](6)
    return [first, second]


def main() -> Any:
    return run(agent, task("click", "key"))


if __name__ == "__main__":
    print(main())
