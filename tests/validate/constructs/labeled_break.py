"""Labeled `break outer` / `continue outer`: Python has no labels.  Its forms of the
same control flow -- a flag, `for ... else`, `return` from a helper -- all suspend
and resume inside nested loops."""

# construct: labeled `break` / `continue`
# source: 001, 000
# status: does not apply in Python
# expect: none
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task, grid: list[list[int]]) -> tuple[int, int] | None:
    found = None
    for row, cells in enumerate(grid):
        for col, cell in enumerate(cells):
            reply = await task.tools.inspect(cell=cell)
            if reply["cell"] < 0:
                found = (row, col)
                break  # leaves the inner loop
        else:
            continue  # inner loop finished: next row
        break  # the inner loop broke: leave the outer one too ("break outer")
    return found


def main() -> Any:
    return run(agent, task("inspect"), [[1, 2], [3, -4], [5, 6]])


if __name__ == "__main__":
    print(main())
