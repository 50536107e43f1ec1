"""The same class marked `@agentrt.serializable` (attrs and dataclasses too): its
instances, their bound methods and shared references cross every await."""

# construct: class instances across an `await` (class marked `@agentrt.serializable`)
# source: 001, 000
# status: works natively
# expect: none
# runtime: completes

import dataclasses
from typing import Any

from agentrt import Task, serializable
from tests.validate.constructs._drive import run, task


@serializable
@dataclasses.dataclass
class Cart:
    items: list[str] = dataclasses.field(default_factory=list)

    def add(self, item: str) -> None:
        self.items.append(item)


async def agent(task: Task) -> list[str]:
    cart = Cart()
    add = cart.add  # a bound method of a serializable instance
    item = await task.tools.pick(n=1)
    add(item["tool"])
    return cart.items


def main() -> Any:
    return run(agent, task("pick"))


if __name__ == "__main__":
    print(main())
