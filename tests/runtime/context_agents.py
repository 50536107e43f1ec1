"""An agent that sets context variables and waits for a reply (module level: resumable anywhere)."""

from __future__ import annotations

import contextvars

import attrs
import structlog

from agentrt import Task, agent, ui_tools

TENANT: contextvars.ContextVar[str] = contextvars.ContextVar("tenant", default="none")


@attrs.frozen
class Who:
    tenant: str


@attrs.frozen
class Seen:
    before: str
    after: str
    log_context: dict[str, str]
    answer: str


async def run_tenant(input: Who, task: Task) -> Seen:
    before = TENANT.get()
    TENANT.set(input.tenant)
    structlog.contextvars.bind_contextvars(tenant=input.tenant)
    answer = await task.ui.ask({"question": "go on?"})
    return Seen(before, TENANT.get(), structlog.contextvars.get_contextvars(), answer)


tenant_agent = agent(input=Who, output=Seen, tools=[*ui_tools], run=run_tenant, name="tenant")


async def run_unnamed(input: Who, task: Task) -> Seen:
    made_here: contextvars.ContextVar[str] = contextvars.ContextVar("made_here")
    made_here.set(input.tenant)  # no module holds it: the checkpoint at the next await is refused
    answer = await task.ui.ask({"question": "go on?"})
    return Seen("", made_here.get(), {}, answer)


unnamed_agent = agent(input=Who, output=Seen, tools=[*ui_tools], run=run_unnamed, name="unnamed")
