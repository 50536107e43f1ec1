"""`WeakMap` / `WeakSet`: Python's weakref containers point at objects a checkpoint does
not own (AR104).  Hold strong references or plain data across the await."""

# construct: `WeakMap` / `WeakSet`
# source: 001, 000
# status: reported
# expect: AR104
# runtime: CannotCrossAwait AR104

import weakref
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task) -> int:
    seen: weakref.WeakSet[Any] = weakref.WeakSet()  # AR104
    await task.tools.scan(page=1)
    return len(seen)


def main() -> Any:
    return run(agent, task("scan"))


if __name__ == "__main__":
    print(main())
