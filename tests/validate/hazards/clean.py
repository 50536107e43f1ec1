"""Clean agent code: loops, try/finally, comprehensions with awaits, closures, lambdas,
serializable instances, task requests.  No finding at all."""

import dataclasses
from typing import Any

from agentrt import Task, serializable, suspend


@serializable
@dataclasses.dataclass
class State:
    seen: list[str] = dataclasses.field(default_factory=list)


async def helper(x: Any) -> Any:
    return await suspend(x)


async def agent(task: Task, items: list[str]) -> Any:
    state = State()
    total = 0
    key = lambda s: len(s)  # noqa: E731
    bump = 1

    def add(n: int) -> int:
        return n + bump

    for item in sorted(items, key=key):
        try:
            reply = await task.tools.fetch(item=item)
        finally:
            state.seen.append(item)
        total = add(total) + len(reply)
    doubled = [await helper(i * 2) for i in range(3)]
    pairs = {k: await helper(v) for k, v in {"a": 1}.items()}
    requests = [task.tools.fetch(item=i) for i in items]
    results = await task.gather(requests)
    match await helper(("ok", 1)):
        case ("ok", value):
            total += value
        case _:
            pass
    return state, total, doubled, pairs, results
