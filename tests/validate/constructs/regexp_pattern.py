"""A compiled RegExp held across an await: agentrt rebuilds a `re.Pattern` from its
pattern and flags; the compiled model does not (AR103, portability)."""

# construct: `RegExp` across an `await` (a compiled pattern)
# source: 001, 000
# status: works natively
# expect: AR103
# runtime: completes

import re
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task, lines: list[str]) -> list[str]:
    pattern = re.compile(r"^ERROR\b", re.IGNORECASE)  # AR103 (portability)
    kept = []
    for line in lines:
        await task.tools.read(line=line)
        if pattern.match(line):
            kept.append(line)
    return kept


def main() -> Any:
    return run(agent, task("read"), ["error: a", "ok", "ERROR b"])


if __name__ == "__main__":
    print(main())
