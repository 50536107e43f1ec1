"""Drive a construct example the way a host would, checkpointing at every suspension.

Each example in this directory ends with ``main()``, which runs its agent through
:func:`run`: before answering each suspension the whole suspended chain is
checkpointed to bytes and restored (``Machine.set(machine.get())``), so an example
that completes has crossed every one of its awaits through a real checkpoint.  Run
one from the repository root with ``python -m tests.validate.constructs.<name>``.

Three more ways to drive the same ``main()``, for ``tests/validate/test_constructs.py``
(:func:`driving`): ``"straight"`` runs the agent without any checkpoint (the
uninterrupted result to compare with); ``"first"`` stops at the first suspension
and raises :class:`FirstSuspension` with the blob; ``"resume"`` (in
``_resume_worker``, a fresh process) restores that blob instead of starting the
agent, and finishes it -- so ``main()``'s own handling of the result applies.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
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


_MODE = "roundtrip"  # or "straight" / "first" / "resume": see driving()
_BLOB: bytes | None = None  # what "resume" restores


class FirstSuspension(Exception):
    """Raised by ``main()`` under ``driving("first")``: the checkpoint of the first suspension."""

    def __init__(self, blob: bytes) -> None:
        super().__init__(f"suspended; checkpoint of {len(blob)} bytes")
        self.blob = blob


@contextlib.contextmanager
def driving(mode: str, blob: bytes | None = None) -> Iterator[None]:
    """Run examples' ``main()`` in ``mode``: "roundtrip" (checkpoint and restore at every
    suspension), "straight" (no checkpoint at all), "first" (raise FirstSuspension) or
    "resume" (restore ``blob`` instead of starting the agent, then as "roundtrip")."""
    global _MODE, _BLOB
    assert mode in ("roundtrip", "straight", "first", "resume"), mode
    assert (blob is not None) == (mode == "resume"), "a blob goes with 'resume', and only with it"
    previous = _MODE, _BLOB
    _MODE, _BLOB = mode, blob
    try:
        yield
    finally:
        _MODE, _BLOB = previous


def finish(machine: Machine) -> Any:
    """Answer ``machine``'s pending request and every later one, checkpointing and restoring at each."""
    out = machine.step(answer(machine.pending))
    while not isinstance(out, Done):
        machine = Machine.set(machine.get())  # checkpoint and restore at every suspension
        out = machine.step(answer(machine.pending))
    return out.value


def _drive(agent: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if _MODE == "resume":
        assert _BLOB is not None
        return finish(Machine.set(_BLOB))
    machine = Machine(agent, *args, **kwargs)
    out = machine.step()
    if _MODE == "straight":
        while not isinstance(out, Done):
            out = machine.step(answer(out))
        return out.value
    if isinstance(out, Done):
        return out.value
    if _MODE == "first":
        blob = machine.get()
        machine.discard()
        raise FirstSuspension(blob)
    return finish(Machine.set(machine.get()))


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
