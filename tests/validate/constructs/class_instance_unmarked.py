"""A class instance (`new Foo(...)`) across an await, its class not marked: a signed blob (the
default) carries it through the pickle protocol; an unsigned one refuses it (AR105), and
`agentrt check` still reports it (issue 24: the default profile is not relaxed yet)."""

# construct: class instances across an `await` (class not marked)
# source: 001, 000
# status: works natively
# expect: AR105
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


class Cart:
    def __init__(self) -> None:
        self.items: list[str] = []


async def agent(task: Task) -> list[str]:
    cart = Cart()  # AR105
    item = await task.tools.pick(n=1)
    cart.items.append(item["tool"])
    return cart.items


def main() -> Any:
    return run(agent, task("pick"))


if __name__ == "__main__":
    print(main())
