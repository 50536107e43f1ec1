"""A RegExp result held across an await: a `re.Match` cannot be checkpointed (AR103).
Keep the matched text instead; a match used up before the await is never reported."""

# construct: `RegExp` across an `await` (a match result)
# source: 001, 000
# status: reported
# expect: AR103
# runtime: CannotCrossAwait AR103

import re
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task, text: str) -> str:
    used_up = re.search(r"\d+", text)  # dead at the await: not reported
    number = used_up.group(0) if used_up else ""
    match = re.match(r"(\w+)", text)  # AR103: read after the await
    await task.tools.log(number=number)
    return match.group(1) if match else ""


def main() -> Any:
    return run(agent, task("log"), "order 42")


if __name__ == "__main__":
    print(main())
