"""An agent that sets context variables and waits for a reply (module level: resumable anywhere)."""

from __future__ import annotations

import asyncio
import contextvars

import attrs
import structlog

from agentrt import Task, agent, tool, ui_tools

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


# --- tools inside the run's context --------------------------------------------------------


def _seen(where: str) -> list[str]:
    """What a tool sees of the run's context: the plain variable and structlog's bound tenant."""
    return [where, TENANT.get(), str(structlog.contextvars.get_contextvars().get("tenant", "-"))]


@tool
def seen_in_pool() -> list[str]:
    return _seen("pool")


@tool(inline=True)
def seen_inline() -> list[str]:
    return _seen("inline")


@tool
async def seen_async() -> list[str]:
    await asyncio.sleep(0)  # a real suspension of the tool's own: its next step still sees the run's
    return _seen("async")


@tool(attempts=2, timeout=30)
async def seen_with_policy() -> list[str]:
    return _seen("async+policy")


@tool
def sets_tenant() -> str:
    """A tool's own ``TENANT.set`` stays in its copy of the run's context."""
    TENANT.set("set-by-a-tool")
    structlog.contextvars.bind_contextvars(tenant="set-by-a-tool")
    return TENANT.get()


async def _all_tools(task: Task) -> list[list[str]]:
    one = [
        await task.tools.seen_in_pool(),
        await task.tools.seen_inline(),
        await task.tools.seen_async(),
        await task.tools.seen_with_policy(),
    ]
    return one + await task.gather([task.tools.seen_in_pool(), task.tools.seen_async()])


@attrs.frozen
class ToolsSaw:
    before_restart: list[list[str]]
    after_restart: list[list[str]]
    agent_after_tool_set: str


async def run_tools_in_context(input: Who, task: Task) -> ToolsSaw:
    TENANT.set(input.tenant)
    structlog.contextvars.bind_contextvars(tenant=input.tenant)
    before = await _all_tools(task)
    await task.tools.sets_tenant()
    await task.ui.ask({"question": "go on?"})  # the host stops here; a fresh process resumes the run
    return ToolsSaw(before, await _all_tools(task), TENANT.get())


tools_context_agent = agent(
    input=Who,
    output=ToolsSaw,
    tools=[seen_in_pool, seen_inline, seen_async, seen_with_policy, sets_tenant, *ui_tools],
    run=run_tools_in_context,
    name="tools-context",
)
