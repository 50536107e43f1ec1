"""``Task``: the agent's handle on its host.

A ``Task`` lives in the agent's frame, so it is checkpointed with every
suspension; its state is tiny (run id, agent name, tool names).  Requests that
must wait (tool calls, sub-agents, ``gather``, ``ui.ask``, ``sleep``) are
awaitable values that suspend the run.  Events that must not wait
(``ui.notify``, ``console.*``, ``emit``) are recorded at once into the step the
runtime is driving (see :func:`recording`) and keyed by the step's sequence
number, so re-running a step after a crash records nothing twice; they return
an already-completed awaitable, so ``await task.ui.notify(...)`` and a bare
``task.console.info(...)`` both work.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections.abc import Generator, Iterable
from typing import Any  # Any: tool arguments, prompts and emitted values are the user's

import attrs

from agentrt._codec import serializable
from agentrt._sdk.llm import LLM, ModelCall
from agentrt._sdk.requests import MEMBER_TYPES, Ask, ChildRun, Gather, Progress, Sleep, ToolCall
from agentrt._sdk.schema import jsonable_or_repr

__all__ = ["Event", "StepRecorder", "Task", "recording"]


@attrs.define
class Event:
    """A non-blocking event recorded during one step: ``notify``, ``log`` or ``emit``."""

    kind: str
    data: dict[str, Any]
    level: str | None = None
    obj: Any = None  # the emitted value itself, for ``on=`` handlers (never stored)


@attrs.define
class StepRecorder:
    """Collects the events of the step the runtime is driving for ``run_id``."""

    run_id: str
    events: list[Event] = attrs.field(factory=list)


_local = threading.local()


class recording:  # lower case: used as a function: with recording(recorder): ...
    """Route the non-blocking events of the agent stepped inside this block to ``recorder``.

    A class rather than a ``@contextmanager`` generator: it is entered at every step."""

    __slots__ = ("previous", "recorder")

    def __init__(self, recorder: StepRecorder | None) -> None:
        self.recorder = recorder
        self.previous: StepRecorder | None = None

    def __enter__(self) -> StepRecorder | None:
        self.previous = getattr(_local, "recorder", None)
        _local.recorder = self.recorder
        return self.recorder

    def __exit__(self, *exc: object) -> None:
        _local.recorder = self.previous


def _record(run_id: str, event: Event) -> None:
    recorder: StepRecorder | None = getattr(_local, "recorder", None)
    if recorder is not None and recorder.run_id == run_id:
        recorder.events.append(event)
        return
    # Outside a runtime step (an agent driven by hand): log it rather than lose it (stdlib
    # logging, as everywhere in the library; docs/architecture.md, "Logging").
    logging.getLogger("agentrt.agent").info(
        "%s", event.kind, extra={"run_id": run_id, "event_level": event.level, "event_data": event.data}
    )


@serializable
@attrs.frozen
class _Completed:
    """An awaitable that is already done (what non-blocking task methods return)."""

    def __await__(self) -> Generator[Any, Any, None]:
        return iter(())  # type: ignore[return-value]  # an empty iterator is a generator that returns None

    def __repr__(self) -> str:
        return "<completed>"


_COMPLETED = _Completed()


@serializable
@attrs.frozen
class _ToolRef:
    """``task.tools.NAME``: calling it with keyword arguments makes the request."""

    name: str
    is_agent: bool

    def __call__(self, *args: Any, **kwargs: Any) -> ToolCall | ChildRun:
        if args:
            raise TypeError(
                f"task.tools.{self.name}() takes keyword arguments only "
                f"(got {len(args)} positional); write task.tools.{self.name}(name=value, ...)"
            )
        return ChildRun(self.name, kwargs) if self.is_agent else ToolCall(self.name, kwargs)


@serializable
@attrs.frozen
class _Tools:
    """``task.tools``: one attribute per tool of the agent."""

    _agent: str
    _names: tuple[str, ...]
    _agents: tuple[str, ...]

    def __getattr__(self, name: str) -> _ToolRef:
        if name.startswith("__") or name.startswith("_"):
            raise AttributeError(name)
        if name in self._agents:
            return _ToolRef(name, True)
        if name in self._names:
            return _ToolRef(name, False)
        known = ", ".join(sorted(self._names + self._agents)) or "(none)"
        raise AttributeError(
            f"agent {self._agent!r} has no tool {name!r}; its tools are: {known}. "
            "Add the tool to agent(tools=[...])."
        )

    def __dir__(self) -> list[str]:
        return sorted(self._names + self._agents)


@serializable
@attrs.frozen
class _UI:
    """``task.ui``: ``notify`` (does not wait) and ``ask`` (waits for a reply)."""

    _run_id: str

    def notify(self, event: Any) -> _Completed:
        if isinstance(event, str):
            event = Progress(event)
        data = jsonable_or_repr(event)
        if not isinstance(data, dict):
            data = {"value": data}
        _record(self._run_id, Event("notify", data))
        return _COMPLETED

    def ask(self, prompt: Any) -> Ask:
        return Ask(prompt)


@serializable
@attrs.frozen
class _Console:
    """``task.console``: log lines recorded with the run (does not wait)."""

    _run_id: str

    def _log(self, level: str, message: Any, fields: dict[str, Any]) -> _Completed:
        data = {"message": str(message), **{k: jsonable_or_repr(v) for k, v in fields.items()}}
        _record(self._run_id, Event("log", data, level))
        return _COMPLETED

    def debug(self, message: Any, **fields: Any) -> _Completed:
        return self._log("debug", message, fields)

    def info(self, message: Any, **fields: Any) -> _Completed:
        return self._log("info", message, fields)

    def warn(self, message: Any, **fields: Any) -> _Completed:
        return self._log("warning", message, fields)

    warning = warn

    def error(self, message: Any, **fields: Any) -> _Completed:
        return self._log("error", message, fields)


@serializable
@attrs.frozen
class Task:
    """The handle ``run(input, task)`` receives.

    - ``await task.tools.NAME(**kwargs)`` calls a tool or a sub-agent;
    - ``await task.gather([...])`` / ``task.gather_settled([...])`` run several at once;
    - ``await task.ui.ask(prompt)`` waits for a reply; ``task.ui.notify(event)`` does not wait;
    - ``await task.llm.generate_text(...)`` / ``stream_text(...)`` / ``decide(...)`` asks a model;
    - ``task.console.info(...)`` logs; ``task.emit(event)`` records a typed domain event;
    - ``await task.sleep(seconds)`` is a durable timer.
    """

    run_id: str
    agent: str
    tool_names: tuple[str, ...] = ()
    agent_tool_names: tuple[str, ...] = ()
    has_ui: bool = False

    @property
    def tools(self) -> _Tools:
        return _Tools(self.agent, self.tool_names, self.agent_tool_names)

    @property
    def ui(self) -> _UI:
        if not self.has_ui:
            raise AttributeError(
                f"agent {self.agent!r} has no user interface tools: add them with "
                "agent(tools=[..., *agentrt.ui_tools]) to use task.ui"
            )
        return _UI(self.run_id)

    @property
    def llm(self) -> LLM:
        """Model requests: ``await task.llm.generate_text(prompt=...)``, ``stream_text``, ``decide``."""
        return LLM(self.agent)

    @property
    def console(self) -> _Console:
        return _Console(self.run_id)

    def gather(self, requests: Iterable[Any]) -> Gather:
        """All of ``requests`` at once; their results in source order; raises the first failure."""
        return Gather(_members(requests, "gather"), settled=False)

    def gather_settled(self, requests: Iterable[Any]) -> Gather:
        """All of ``requests`` at once; ``Fulfilled(value)`` or ``Rejected(error)`` per request, in order."""
        return Gather(_members(requests, "gather_settled"), settled=True)

    def sleep(self, seconds: float) -> Sleep:
        """A durable timer: the run waits (out of memory) and carries on after ``seconds``."""
        if seconds < 0:
            raise ValueError(f"task.sleep({seconds!r}): seconds must be >= 0")
        return Sleep(until=time.time() + seconds, seconds=float(seconds))

    def emit(self, event: Any) -> _Completed:
        """Record a typed domain event (an attrs instance or plain data) with the run; does not wait.

        Hosts observe it with ``Runtime(on={"TypeName": handler, "*": handler})``.
        """
        data = jsonable_or_repr(event)
        payload = {"type": _event_type(event), "data": data}
        _record(self.run_id, Event("emit", payload, obj=event))
        return _COMPLETED


def _event_type(event: Any) -> str:
    """An emitted event's type: a str ``type`` attribute (or a dict's ``"type"``), else the class."""
    value = event.get("type") if isinstance(event, dict) else getattr(event, "type", None)
    return value if isinstance(value, str) else type(event).__qualname__


def _members(requests: Iterable[Any], name: str) -> tuple[Any, ...]:
    members = tuple(requests)
    for i, member in enumerate(members):
        if not isinstance(member, (*MEMBER_TYPES, ModelCall)):
            hint = ""
            if inspect.isawaitable(member) or hasattr(member, "cr_frame"):  # also a bare suspend(x) trap
                hint = " (an arbitrary awaitable or coroutine cannot be checkpointed or dispatched)"
                if hasattr(member, "close"):
                    member.close()
            raise TypeError(
                f"task.{name}: member {i} is {type(member).__name__}{hint}; members must be "
                "task.tools.NAME(...) calls, sub-agent calls, task.llm requests or task.sleep(...)"
            )
    return members
