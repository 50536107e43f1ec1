"""What s11n handles natively -- primitives, objects, arrays, Map, Set, Date, plain Error,
cycles, shared references -- is, in Python, dicts, lists, tuples, sets, datetimes,
exceptions, cycles and shared references: all cross awaits."""

# construct: serializable values across an `await` (primitives, containers, dates, errors, cycles, sharing)
# source: 001, 000
# status: works natively
# expect: none
# runtime: completes

import datetime
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task) -> Any:
    shared = [1, 2]
    state: dict[str, Any] = {"a": shared, "b": shared, "when": datetime.date(2024, 1, 2)}
    state["self"] = state  # a cycle
    tags = {"x", "y"}
    error = ValueError("kept")
    await task.sleep(0)
    return state["a"] is state["b"], state["self"] is state, sorted(tags), str(error), state["when"]


def main() -> Any:
    return run(agent, task())


if __name__ == "__main__":
    print(main())
