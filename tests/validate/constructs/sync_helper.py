"""Heavy work in a synchronous helper: it runs to completion between two awaits, so its
intermediates never enter a checkpoint (only the agent's suspended frames do)."""

# construct: keep heavy work in synchronous helpers, not async ones
# source: 000
# status: works natively
# expect: none
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


def analyze_runs(pages: list[Any]) -> dict[str, int]:
    buckets: dict[str, int] = {}
    for page in pages:  # a big loop with big intermediates: never checkpointed
        for run_ in page["runs"]:
            buckets[run_] = buckets.get(run_, 0) + 1
    return buckets


async def agent(task: Task) -> dict[str, int]:
    pages = await task.gather([task.tools.list_runs(runs=["a", "b"]), task.tools.list_runs(runs=["a"])])
    return analyze_runs(pages)


def main() -> Any:
    return run(agent, task("list_runs"))


if __name__ == "__main__":
    print(main())
