"""Self-managed state agents: ``agent(state=StateClass, start=fn, on_tool_results=fn)``.

The agent is two plain functions and a state class.  ``start(input, state)`` and
``on_tool_results(results, state)`` look at the state (and may change it) and return what
to do next: :func:`output` (finish), :func:`call_tools` (run these tools, together, then
call ``on_tool_results`` with their results) or :func:`ask` (wait for a reply from a person,
delivered to ``on_tool_results`` as the result of a call named ``ask``).

The loop that calls them is :func:`_run_stateful`, an ordinary durable ``async def``: each
batch of tool calls (and each ask) is one journaled step.  Between steps the frame holds the
state only as its JSON form, checked against the state class when saved (after every
``start`` / ``on_tool_results``) and rebuilt and checked again when it is read back (before
every call, also after a resume in a new process) -- a state that does not fit its class is an
error naming the function that produced it, never a silently different state.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any  # Any: an agent's state and values are its author's

import attrs

from agentrt._codec import serializable
from agentrt._sdk.requests import Ask, ToolCall
from agentrt.exceptions import SchemaError
from agentrt.exceptions import StateError as StateError

__all__ = [
    "Action",
    "AskUser",
    "CallTools",
    "Output",
    "StateError",
    "ToolResult",
    "ask",
    "call_tools",
    "output",
    "stateful_run",
]


@serializable
@attrs.frozen
class Output:
    """``output(value)``: the agent is done; ``value`` is its output (an instance or a dict)."""

    value: Any


@serializable
@attrs.frozen
class CallTools:
    """``call_tools([ToolCall(...), ...])``: run these tools (and sub-agents) together."""

    calls: tuple[ToolCall, ...]
    state: Any = None


@serializable
@attrs.frozen
class AskUser:
    """``ask(prompt)``: wait for a reply (``agentrt reply RUN VALUE`` / ``Runtime.reply``)."""

    prompt: Any
    state: Any = None


Action = Output | CallTools | AskUser


@serializable
@attrs.frozen
class ToolResult:
    """One result handed to ``on_tool_results``: the call (``name``, ``arguments``), and its
    ``value`` if ``ok``, else ``error`` (``"TypeName: message"``).  A reply to :func:`ask` comes as
    ``name="ask"``, ``arguments={"prompt": ...}``."""

    name: str
    arguments: dict[str, Any]
    ok: bool
    value: Any = None
    error: str | None = None


def output(value: Any) -> Output:
    """Finish with ``value`` as the agent's output (checked against ``output=``)."""
    return Output(value)


def call_tools(calls: Iterable[ToolCall], *, state: Any = None) -> CallTools:
    """Run ``calls`` (``ToolCall(name, {arguments})``; several run together), then call
    ``on_tool_results`` with their results in the same order.  ``state=`` replaces the state
    (for a frozen state class); otherwise the state passed in, as changed, is kept."""
    items = tuple(calls)
    for item in items:
        if not isinstance(item, ToolCall):
            raise TypeError(
                f"call_tools([...]): {item!r} is not a ToolCall; "
                "write ToolCall('tool_name', {'arg': value})"
            )
    if not items:
        raise ValueError("call_tools([...]) needs at least one ToolCall (return output(...) to finish)")
    return CallTools(items, state)


def ask(prompt: Any, *, state: Any = None) -> AskUser:
    """Wait for a person's reply to ``prompt``; it reaches ``on_tool_results`` as a result named ``ask``."""
    return AskUser(prompt, state)


@serializable
@attrs.frozen
class StatefulSpec:
    """What the durable loop needs: the agent's name, state class and the two functions (by reference)."""

    name: str
    state: type
    start: Callable[..., Any]
    on_tool_results: Callable[..., Any]


def _save(spec: StatefulSpec, state: Any, where: str) -> Any:
    """The state as JSON, after checking it against its class (``where`` names who produced it)."""
    from agentrt._sdk.schema import structure, to_jsonable

    if not isinstance(state, spec.state):
        raise StateError(
            "state",
            f"{where} left a {type(state).__name__}, not a {spec.state.__qualname__}; change the state "
            "passed in, or return call_tools(..., state=NEW) / ask(..., state=NEW) with an instance",
            agent=spec.name,
        )
    try:
        data = to_jsonable(state)
        structure(data, spec.state, "state")
    except (SchemaError, TypeError, ValueError) as exc:
        raise StateError("state", f"after {where}: {exc}", agent=spec.name) from None
    return data


def _restore(spec: StatefulSpec, data: Any) -> Any:
    from agentrt._sdk.schema import structure

    try:
        return structure(data, spec.state, "state")
    except SchemaError as exc:
        raise StateError(
            "state",
            f"the saved state no longer fits {spec.state.__qualname__}: {exc.problem}",
            agent=spec.name,
        ) from None


def _action(spec: StatefulSpec, value: Any, where: str) -> Action:
    if isinstance(value, (Output, CallTools, AskUser)):
        return value
    raise TypeError(
        f"self-managed agent {spec.name!r}: {where} returned {value!r}; return output(value), "
        "call_tools([ToolCall(...), ...]) or ask(prompt) (all importable from agentrt)"
    )


def _where(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__qualname__', fn)}()"


async def _run_stateful(spec: StatefulSpec, input: Any, task: Any) -> Any:
    """The loop of a self-managed agent.  Only ``saved`` (the state's JSON) crosses an await."""
    where = _where(spec.start)
    state = _restore(spec, _save(spec, spec.state(), f"{spec.state.__qualname__}()"))
    action = spec.start(input, state)
    if inspect.isawaitable(action):
        action = await action
    while True:
        action = _action(spec, action, where)
        if isinstance(action, Output):
            return action.value
        saved = _save(spec, action.state if action.state is not None else state, where)
        state = None
        if isinstance(action, CallTools):
            calls = action.calls
            # Several calls run together, each a durable tool call (or child run).
            outcomes = await task.gather_settled([getattr(task.tools, c.name)(**c.kwargs) for c in calls])
            results = [
                ToolResult(c.name, dict(c.kwargs), True, o.value)
                if o.status == "fulfilled"
                else ToolResult(c.name, dict(c.kwargs), False, None, f"{type(o.error).__name__}: {o.error}")
                for c, o in zip(calls, outcomes, strict=True)
            ]
            del calls, outcomes
        else:
            prompt = action.prompt
            reply = await Ask(prompt)
            results = [ToolResult("ask", {"prompt": prompt}, True, reply)]
            del prompt, reply
        del action
        state = _restore(spec, saved)
        where = _where(spec.on_tool_results)
        action = spec.on_tool_results(results, state)
        if inspect.isawaitable(action):
            action = await action


def stateful_run(
    name: str,
    state: Any,
    start: Any,
    on_tool_results: Any,
    module: str,
) -> Callable[..., Any]:
    """The ``run`` of a self-managed agent (checked here so that mistakes show at definition)."""
    import attrs as _attrs

    if not (isinstance(state, type) and _attrs.has(state)):
        raise TypeError(f"agent(state=...) must be an attrs class, got {state!r}")
    if "<locals>" in state.__qualname__:
        raise TypeError(
            f"agent(state={state.__qualname__}): define the state class at module level, so that a "
            "resumed run finds it by name"
        )
    try:
        state()
    except TypeError as exc:
        raise TypeError(
            f"agent(state={state.__qualname__}): the state class must build with no arguments (give every "
            f"field a default); {exc}"
        ) from None
    for role, fn in (("start", start), ("on_tool_results", on_tool_results)):
        if not callable(fn):
            raise TypeError(f"agent({role}=...) must be a function, got {fn!r}")
        if "<locals>" in getattr(fn, "__qualname__", "") or getattr(fn, "__name__", "") == "<lambda>":
            raise TypeError(
                f"agent({role}={getattr(fn, '__qualname__', fn)}): define it at module level, so that a "
                "resumed run finds it by name"
            )
    spec = StatefulSpec(name, state, start, on_tool_results)
    run: Any = functools.partial(_run_stateful, spec)
    run.__module__ = module
    run.__name__ = run.__qualname__ = name
    run.__wrapped__ = _run_stateful
    run.__doc__ = inspect.getdoc(start) or ""
    return run  # type: ignore[no-any-return]  # a partial dressed as a function: typed Any to set its names
