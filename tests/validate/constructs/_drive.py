"""Drive a construct example the way a host would, checkpointing at every suspension.

Each example in this directory ends with ``main()``, which runs its agent through
:func:`run`: before answering each suspension the whole suspended chain is
checkpointed to bytes and restored (``Machine.set(machine.get())``), so an example
that completes has crossed every one of its awaits through a real checkpoint.  Run
one from the repository root with ``python -m tests.validate.constructs.<name>``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agentrt import Done, Machine, Task
from agentrt._sdk.requests import Ask, ChildRun, Fulfilled, Gather, Sleep, ToolCall


def answer(payload: Any) -> Any:
    """What the host replies: tool results are ``{"tool": name, **kwargs}``; a bare
    ``suspend(x)`` is answered with ``x`` itself."""
    if isinstance(payload, ToolCall):
        return {"tool": payload.name, **payload.kwargs}
    if isinstance(payload, ChildRun):
        return {"agent": payload.name, **payload.kwargs}
    if isinstance(payload, Gather):
        results = [answer(member) for member in payload.requests]
        return [Fulfilled(r) for r in results] if payload.settled else results
    if isinstance(payload, Sleep):
        return None
    if isinstance(payload, Ask):
        return "yes"
    return payload


def _drive(agent: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    machine = Machine(agent, *args, **kwargs)
    out = machine.step()
    while not isinstance(out, Done):
        machine = Machine.set(machine.get())  # checkpoint and restore at every suspension
        out = machine.step(answer(machine.pending))
    return out.value


def run(agent: Callable[..., Any], *args: Any, event_loop: bool = False, **kwargs: Any) -> Any:
    """Run ``agent`` to completion; ``event_loop=True`` drives it inside ``asyncio.run``
    (for examples that call asyncio APIs needing a running loop)."""
    if not event_loop:
        return _drive(agent, args, kwargs)

    async def inside_a_loop() -> Any:
        return _drive(agent, args, kwargs)

    return asyncio.run(inside_a_loop())


def task(*tools: str, agents: tuple[str, ...] = ()) -> Task:
    """A ``Task`` handle with these tool names (and sub-agent names)."""
    return Task(run_id="example", agent="example", tool_names=tools, agent_tool_names=agents)
