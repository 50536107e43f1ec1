"""Python-specific: context variables the agent sets (a module-level `ContextVar`, structlog's
`bind_contextvars`) are part of the run's checkpoint and have the same values after a restore
in another process; each run has a context of its own."""

# construct: context variables set inside a run (Python-specific)
# source: hazards.md
# status: works natively
# expect: none
# runtime: completes

import contextvars
from typing import Any

import structlog

from agentrt import Task
from tests.validate.constructs._drive import run, task

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


async def agent(task: Task, request: str) -> list[Any]:
    REQUEST_ID.set(request)  # a module-level ContextVar: carried by module:qualname
    structlog.contextvars.bind_contextvars(request=request)  # log context: carried by its key
    await task.tools.lookup(request=request)
    return [REQUEST_ID.get(), structlog.contextvars.get_contextvars()]


def main() -> Any:
    return run(agent, task("lookup"), "req-42")


if __name__ == "__main__":
    print(main())
