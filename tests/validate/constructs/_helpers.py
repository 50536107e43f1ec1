"""A sibling module for async_helper_other_module.py (not an example itself)."""

from typing import Any

from agentrt import Task


async def fetch_and_process(task: Task, n: int) -> Any:
    raw = await task.tools.fetch(n=n)
    return {"processed": raw["n"] * 2}


def summarize(values: list[int]) -> int:
    """A synchronous helper: may live in any module."""
    return sum(values)
