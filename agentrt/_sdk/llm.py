"""``task.llm``: model requests as data, awaited by agents (the agent-facing half of model calls).

This module belongs to the agent SDK (:mod:`agentrt._sdk`): it needs nothing
from the host side (:mod:`agentrt.llm`: executors, their contract, budgets),
which builds on it.  ``agentrt.llm`` re-exports the public names.

A :class:`ModelCall` is frozen, checkpointable and awaitable, like a tool call:
awaiting it suspends the run; the runtime calls the host's executor, validates
and journals the answer, and resumes the agent with a :class:`TextResult` (text
requests) or the chosen event instance (``decide``).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable, Mapping
from typing import Any  # Any: model outputs and messages are JSON of any shape

import attrs

from agentrt._codec import is_serializable, serializable
from agentrt._sdk.requests import _Awaitable
from agentrt._sdk.tools import tool_name

__all__ = ["LLM", "ModelCall", "ModelToolCall", "TextResult", "Usage", "event_type_name"]

DEFAULT_MAX_ATTEMPTS = 3


@serializable
@attrs.frozen
class Usage:
    """Tokens one model call (or a whole run) used; unknown counts are 0."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.total_tokens + other.total_tokens,
        )

    @classmethod
    def of(cls, value: Any) -> Usage | None:
        """Read usage as executors report it: a ``Usage``, or a mapping in OpenAI
        (``prompt_tokens``/``completion_tokens``) or Anthropic/AI-SDK (``input_tokens``/``output_tokens``)
        spelling.  None when ``value`` is None."""
        if value is None or isinstance(value, Usage):
            return value
        if not isinstance(value, Mapping):
            value = {k: getattr(value, k) for k in dir(value) if k.endswith("tokens")}

        def count(*names: str) -> int:
            for name in names:
                n = value.get(name)
                if isinstance(n, int) and not isinstance(n, bool):
                    return n
            return 0

        inp = count("input_tokens", "prompt_tokens", "inputTokens", "promptTokens")
        out = count("output_tokens", "completion_tokens", "outputTokens", "completionTokens")
        total = count("total_tokens", "totalTokens") or inp + out
        return cls(inp, out, total)

    def to_json(self) -> dict[str, int]:
        return attrs.asdict(self)


@serializable
@attrs.frozen
class ModelToolCall:
    """A tool call the model asked for (``generate_text(tools=[...])``); the agent decides to run it."""

    id: str
    name: str
    arguments: dict[str, Any]


@serializable
@attrs.frozen
class TextResult:
    """What ``await task.llm.generate_text(...)`` / ``stream_text(...)`` gives the agent.

    ``output`` is the text, or an instance of the ``output=`` class.  ``tool_calls``
    are the tools the model asked for (run them with ``task.tools.NAME(...)``).
    ``attempts`` counts the model calls it took (more than 1 after refused answers).
    ``finish_reason`` is why the answer ended, as the executor reported it (``"stop"``,
    ``"tool_calls"``, ``"length"`` when an executor lets cut-off text through; None if unknown).
    """

    output: Any
    usage: Usage | None = None
    tool_calls: tuple[ModelToolCall, ...] = ()
    model: str | None = None
    attempts: int = 1
    finish_reason: str | None = None


@serializable
@attrs.frozen(eq=True, hash=False)
class ModelCall(_Awaitable):
    """One model request: ``kind`` is ``generate_text``, ``stream_text`` or ``decide``."""

    kind: str
    src: str
    prompt: str | None = None
    messages: tuple[dict[str, Any], ...] = ()
    system: str | None = None
    model: str | None = None
    output: type | None = None
    tools: tuple[str, ...] = ()
    metadata: dict[str, Any] = attrs.field(factory=dict)
    events: tuple[type, ...] = ()
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    reasoning: bool = False

    def __repr__(self) -> str:
        return f"llm.{self.kind}({self.src!r})"


def event_type_name(cls: type) -> str:
    """An event class's ``type``: a ``type`` class attribute (a str), else the class name."""
    value = cls.__dict__.get("type")
    return value if isinstance(value, str) else cls.__name__


def _caller_src() -> str:
    frame = sys._getframe(3)  # _caller_src <- _make <- LLM.method <- the agent
    return frame.f_code.co_qualname


def _check_record(cls: Any, what: str) -> type:
    if not isinstance(cls, type) or not (attrs.has(cls) or dataclasses.is_dataclass(cls)):
        raise TypeError(f"{what} must be an attrs class or a dataclass, got {cls!r}")
    if not is_serializable(cls):
        raise TypeError(
            f"{what}: {cls.__qualname__} must be marked @agentrt.serializable (its instances come back to "
            "the agent and cross awaits); put @agentrt.serializable above @attrs.frozen on "
            f"{cls.__qualname__}"
        )
    return cls


def _tool_names(tools: Iterable[Any] | None) -> tuple[str, ...]:
    return tuple(t if isinstance(t, str) else tool_name(t) for t in (tools or ()))


@serializable
@attrs.frozen
class LLM:
    """``task.llm``: ``generate_text``, ``stream_text`` and ``decide`` requests (awaited by the agent).

    Every method takes ``src=`` (the request's site name: it keys scripted
    executors, budgets and traces; default: the calling function's qualname),
    ``prompt=`` or ``messages=`` (chat messages as dicts), ``system=``, ``model=``
    (an alias or a provider's model name) and ``metadata=`` (passed to the executor as is).
    """

    _agent: str

    def generate_text(
        self,
        prompt: str | None = None,
        *,
        messages: Iterable[Mapping[str, Any]] | None = None,
        system: str | None = None,
        model: str | None = None,
        output: type | None = None,
        tools: Iterable[Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        src: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        reasoning: bool = False,
    ) -> ModelCall:
        """Ask for text, or (``output=Cls``) for an instance of an attrs class, validated by its schema."""
        args = (prompt, messages, system, model, output, tools, metadata, src, max_attempts, reasoning)
        return self._make("generate_text", *args)

    def stream_text(
        self,
        prompt: str | None = None,
        *,
        messages: Iterable[Mapping[str, Any]] | None = None,
        system: str | None = None,
        model: str | None = None,
        output: type | None = None,
        tools: Iterable[Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        src: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        reasoning: bool = False,
    ) -> ModelCall:
        """Like ``generate_text``, streamed: chunks go to ``on_chunk`` / ``on_trace`` observers while the
        agent waits; the agent receives the accumulated result."""
        args = (prompt, messages, system, model, output, tools, metadata, src, max_attempts, reasoning)
        return self._make("stream_text", *args)

    def decide(
        self,
        prompt: str | None = None,
        *,
        events: Iterable[type],
        messages: Iterable[Mapping[str, Any]] | None = None,
        system: str | None = None,
        model: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        src: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        reasoning: bool = False,
    ) -> ModelCall:
        """Let the model choose one of ``events`` (attrs classes: the class name, or a ``type`` class
        attribute, names it; its fields are the payload).  Returns the chosen event instance; refused
        choices are fed back and retried, up to ``max_attempts``, then ``DecisionExhausted``."""
        classes = tuple(_check_record(e, f"task.llm.decide(events=[...{e!r}...])") for e in events)
        if not classes:
            raise ValueError("task.llm.decide(events=[...]) needs at least one event class")
        names = [event_type_name(c) for c in classes]
        if len(set(names)) != len(names):
            raise ValueError(f"task.llm.decide: event types must be distinct, got {names}")
        args = (prompt, messages, system, model, None, None, metadata, src, max_attempts, reasoning)
        call = self._make("decide", *args)
        return attrs.evolve(call, events=classes)

    def _make(
        self,
        kind: str,
        prompt: str | None,
        messages: Iterable[Mapping[str, Any]] | None,
        system: str | None,
        model: str | None,
        output: type | None,
        tools: Iterable[Any] | None,
        metadata: Mapping[str, Any] | None,
        src: str | None,
        max_attempts: int,
        reasoning: bool,
    ) -> ModelCall:
        what = f"task.llm.{kind}"
        msgs = tuple(dict(m) for m in (messages or ()))
        if (prompt is None) == (not msgs):
            raise TypeError(f"{what}: give exactly one of prompt= or messages=")
        if prompt is not None and not isinstance(prompt, str):
            raise TypeError(f"{what}: prompt must be a str, got {type(prompt).__name__}")
        for i, m in enumerate(msgs):
            if "role" not in m:
                raise TypeError(
                    f"{what}: messages[{i}] has no 'role' (write {{'role': 'user', 'content': ...}})"
                )
        if output is not None:
            _check_record(output, f"{what}(output=...)")
        if not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError(f"{what}: max_attempts must be an int >= 1, got {max_attempts!r}")
        return ModelCall(
            kind=kind,
            src=src or _caller_src(),
            prompt=prompt,
            messages=msgs,
            system=system,
            model=model,
            output=output,
            tools=_tool_names(tools),
            metadata=dict(metadata or {}),
            max_attempts=max_attempts,
            reasoning=reasoning,
        )
