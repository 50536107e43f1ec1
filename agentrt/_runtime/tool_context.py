"""Tools run inside their run's context: what the agent set in context variables, its tools see.

An agent runs in a ``contextvars.Context`` of its own (``agentrt._context``), restored with its
checkpoint; a tool the runtime calls for it runs outside the agent's frames (in a task of the
runtime, or on a thread), where those variables would read their defaults.  Log and trace
context that the agent binds (``structlog.contextvars.bind_contextvars``, a request id in a
``ContextVar``, OpenTelemetry's current span) would then stop at the tool.  So each tool call gets
a *copy* of the run's context, as an asyncio task gets a copy of its creator's: the tool sees the
agent's values, and what the tool sets stays in its copy (it never changes the run's checkpoint).

Sync tools run through ``Context.run``; an async tool's coroutine is stepped inside the copy by
:class:`InContext`, so no task of its own is needed and the driver may await it directly.
"""

from __future__ import annotations

import contextvars
from collections.abc import Coroutine, Generator
from typing import Any  # Any: a tool's result is the user's value

from agentrt._runtime.state import LiveRun

__all__ = ["InContext", "tool_context"]


def tool_context(live: LiveRun) -> contextvars.Context:
    """A fresh copy of ``live``'s run context, for one tool call (one ``Context`` is entered by one
    call at a time, so concurrent calls of a ``gather`` each get their own)."""
    machine = live.machine
    return machine.copy_context() if machine is not None else contextvars.copy_context()


class InContext:
    """``await InContext(context, coro)``: ``coro``, every step of it run inside ``context``.

    What an asyncio task does with its context, without the task: sends and throws from the
    awaiting task reach ``coro`` through ``context.run``, and callbacks ``coro`` schedules copy
    ``context`` (asyncio copies the current context when a callback is registered).
    """

    __slots__ = ("_context", "_coro")

    def __init__(self, context: contextvars.Context, coro: Coroutine[Any, Any, Any]) -> None:
        self._context = context
        self._coro = coro

    def __await__(self) -> Generator[Any, Any, Any]:
        run, coro = self._context.run, self._coro
        send, throw = coro.send, coro.throw
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                yielded = run(send, value) if error is None else run(throw, error)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            try:
                value = yield yielded
            except GeneratorExit:
                run(coro.close)
                raise
            except BaseException as exc:  # a cancellation or a throw into the awaiting task
                error = exc
