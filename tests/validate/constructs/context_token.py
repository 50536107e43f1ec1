"""Python-specific: the `Token` that `ContextVar.set()` returns belongs to the context it was
made in, which a restore does not bring back (AR111). Reset the variable before the await,
or keep the old value and set it again; the variable itself is checkpointed."""

# construct: a `contextvars.Token` held across an `await` (Python-specific)
# source: hazards.md
# status: reported
# expect: AR111
# runtime: CannotCrossAwait AR111

import contextvars
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task

USER: contextvars.ContextVar[str] = contextvars.ContextVar("user", default="anonymous")


async def agent(task: Task, user: str) -> str:
    token = USER.set(user)  # AR111
    await task.tools.greet(user=user)
    USER.reset(token)
    return USER.get()


def main() -> Any:
    return run(agent, task("greet"), "ada")


if __name__ == "__main__":
    print(main())
