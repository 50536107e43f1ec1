"""The executor contract: what a host's model functions receive and may return.

An agent never talks to a model.  It awaits a request (``task.llm.generate_text``,
``stream_text``, ``decide``); the runtime turns it into an :class:`ExecutorRequest`
(plain data, with the run, the JSON Schemas, the prior failed attempts and the
run's usage so far) and calls the host's :class:`Executors`.  Whatever the
executor returns is normalized here, validated by the runtime, journaled, and
only then given to the agent -- so a resumed run never pays for it twice.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any  # Any: model outputs, schemas and messages are JSON

import attrs

from agentrt._sdk.llm import ModelToolCall as ModelToolCall
from agentrt._sdk.llm import Usage as Usage
from agentrt._sdk.schema import jsonable_or_repr

__all__ = [
    "Attempt",
    "DecideResult",
    "EventSpec",
    "ExecutorRequest",
    "Executors",
    "GenerateResult",
    "ModelToolCall",
    "Usage",
    "as_executors",
    "envelope_schema",
    "feedback_messages",
    "normalize_decide_result",
    "normalize_generate_result",
    "render_decision_attempts",
]

#: The three request kinds, as named on ``task.llm`` and on :class:`Executors`.
KINDS = ("generate_text", "stream_text", "decide")


@attrs.frozen
class Attempt:
    """One refused answer, fed back to the model on the next try."""

    output: Any
    error: str

    def to_json(self) -> dict[str, Any]:
        return {"output": _jsonable(self.output), "error": self.error}


@attrs.frozen
class EventSpec:
    """One event ``decide`` may choose: its ``type`` name, what it means, and its payload schema."""

    type: str
    description: str
    schema: dict[str, Any]


@attrs.frozen
class ExecutorRequest:
    """What an executor receives: plain data, enough to call any model API.

    ``id`` (``RUN:SEQ.IDX``) is stable across retries and resumes: use it as an
    idempotency key.  ``output_schema`` is the JSON Schema of the declared output
    class (None for text); send :func:`envelope_schema` to providers.
    ``attempts`` are prior refused answers of this request (see
    :func:`feedback_messages`).  ``run_usage`` is what the run used before this
    request (so budget wrappers survive restarts).
    """

    kind: str
    src: str
    run_id: str
    seq: int
    idx: int
    agent: str
    prompt: str | None = None
    messages: tuple[dict[str, Any], ...] = ()
    system: str | None = None
    model: str | None = None
    output_type: type | None = None
    output_schema: dict[str, Any] | None = None
    tools: tuple[dict[str, Any], ...] = ()
    metadata: dict[str, Any] = attrs.field(factory=dict)
    events: tuple[EventSpec, ...] = ()
    attempts: tuple[Attempt, ...] = ()
    run_usage: Usage = attrs.field(factory=Usage)
    reasoning: bool = False

    @property
    def id(self) -> str:
        return f"{self.run_id}:{self.seq}.{self.idx}"

    @property
    def attempt_id(self) -> str:
        """``RUN:SEQ.IDX#N``, N the model call's number within this request (1 + refused attempts).

        The idempotency key to send: each retry with feedback has a different body, so it gets
        its own key; a transport retry of the same body (and a resume re-asking an answer that
        was never journaled) sends the same key again.
        """
        return f"{self.id}#{len(self.attempts) + 1}"

    @property
    def structured(self) -> bool:
        return self.output_schema is not None

    def chat_messages(self) -> list[dict[str, Any]]:
        """System, then ``messages`` or the ``prompt`` (a user message), then feedback on prior attempts."""
        out: list[dict[str, Any]] = []
        if self.system:
            out.append({"role": "system", "content": self.system})
        out.extend(dict(m) for m in self.messages)
        if self.prompt is not None:
            out.append({"role": "user", "content": self.prompt})
        out.extend(feedback_messages(self))
        return out

    def describe(self) -> str:
        """A short description for error messages: kind, src and the start of the prompt."""
        text = self.prompt
        if text is None and self.messages:
            text = str(self.messages[-1].get("content", ""))
        excerpt = "" if text is None else f", prompt {_excerpt(text)!r}"
        return f"{self.kind} request {self.src!r}{excerpt}"


def _excerpt(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@attrs.frozen
class GenerateResult:
    """What ``generate_text`` / ``stream_text`` executors return (a mapping with the same keys works too).

    ``output`` is the text, or for a structured request the unwrapped ``result``
    of the envelope (a dict, a JSON string, or an instance of the output class).
    ``raw`` is passed to ``on_result`` verbatim and is not journaled.  ``finish_reason`` is the
    provider's reason the answer ended (``stop``, ``tool_calls``, ``length``, ...), None if unknown.
    """

    output: Any
    usage: Usage | None = None
    raw: Any = None
    reasoning: str | None = None
    tool_calls: tuple[ModelToolCall, ...] = ()
    model: str | None = None
    finish_reason: str | None = None


@attrs.frozen
class DecideResult:
    """What ``decide`` executors return: ``event`` is ``{"type": NAME, **payload}`` or an event instance."""

    event: Any
    usage: Usage | None = None
    raw: Any = None
    reasoning: str | None = None


GenerateFn = Callable[[ExecutorRequest], Awaitable[Any]]
StreamFn = Callable[[ExecutorRequest, Callable[[str], None]], Awaitable[Any]]
DecideFn = Callable[[ExecutorRequest], Awaitable[Any]]


@attrs.frozen
class Executors:
    """The host's model functions; each is optional, needed only by agents that make that kind of request.

    - ``generate_text(request) -> GenerateResult | {"output": ..., "usage"?: ...} | str``
    - ``stream_text(request, on_chunk) -> same``; call ``on_chunk(text)`` per chunk and
      return the accumulated output.
    - ``decide(request) -> DecideResult | {"event": {"type": NAME, ...payload}} | event instance``
    """

    generate_text: GenerateFn | None = None
    stream_text: StreamFn | None = None
    decide: DecideFn | None = None

    def has(self, kind: str) -> bool:
        return getattr(self, kind) is not None

    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k in KINDS if self.has(k))


def as_executors(value: Any) -> Executors:
    """An :class:`Executors` from an ``Executors``, a mapping of the three names, or an object with those
    methods (such as :class:`~agentrt.llm.ScriptedExecutors`); a zero-argument factory is called first."""
    if value is None:
        return Executors()
    if isinstance(value, Executors):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - set(KINDS)
        if unknown:
            raise TypeError(f"executors: unknown key(s) {sorted(unknown)}; the keys are {', '.join(KINDS)}")
        for key, fn in value.items():
            if fn is not None and not callable(fn):
                raise TypeError(f"executors: {key!r} must be an async function, got {type(fn).__name__}")
        return Executors(**value)
    if isinstance(value, type):  # a class: a zero-argument factory of executors
        return as_executors(value())
    found = {k: getattr(value, k, None) for k in KINDS}
    if any(callable(f) for f in found.values()):
        return Executors(**{k: f for k, f in found.items() if callable(f)})
    if callable(value):
        return as_executors(value())
    raise TypeError(
        f"executors: {value!r} is not an Executors(...), a mapping of generate_text/stream_text/decide, "
        "or an object with those methods"
    )


def envelope_schema(output_schema: dict[str, Any], *, reasoning: bool = False) -> dict[str, Any]:
    """The structured-output wire contract: ``{"result": <schema>, "reasoning"?: str}`` as a root object.

    Providers accept an object root everywhere (a bare array or union root is
    often refused); executors send this and return the unwrapped ``result``.
    """
    properties: dict[str, Any] = {"result": output_schema}
    required = ["result"]
    if reasoning:
        properties["reasoning"] = {"type": "string", "description": "Brief reasoning behind the result."}
        required.append("reasoning")
    return {
        "type": "object",
        "title": "Envelope",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def render_decision_attempts(request: ExecutorRequest) -> list[dict[str, Any]]:
    """Chat messages that tell the model which of its earlier choices were refused, and why."""
    if not request.attempts:
        return []
    allowed = ", ".join(e.type for e in request.events)
    lines = [f"Your previous choice(s) were not accepted. Choose exactly one of: {allowed}."]
    for n, attempt in enumerate(request.attempts, 1):
        lines.append(f"Attempt {n}: {json.dumps(_jsonable(attempt.output))} -- refused: {attempt.error}")
    return [{"role": "user", "content": "\n".join(lines)}]


def feedback_messages(request: ExecutorRequest) -> list[dict[str, Any]]:
    """Feedback on prior refused attempts, as chat messages to append (decisions and structured output)."""
    if request.kind == "decide":
        return render_decision_attempts(request)
    if not request.attempts:
        return []
    lines = ["Your previous answer(s) did not match the required JSON schema:"]
    for n, attempt in enumerate(request.attempts, 1):
        lines.append(f"Attempt {n}: {json.dumps(_jsonable(attempt.output))} -- problem: {attempt.error}")
    lines.append("Answer again with JSON that matches the schema exactly.")
    return [{"role": "user", "content": "\n".join(lines)}]


def _jsonable(value: Any) -> Any:
    return jsonable_or_repr(value)


def normalize_generate_result(value: Any) -> GenerateResult:
    """Accept what text executors return: a ``GenerateResult``, a mapping with ``output``, or a bare str."""
    if isinstance(value, GenerateResult):
        return attrs.evolve(value, usage=Usage.of(value.usage), tool_calls=_tool_calls(value.tool_calls))
    if isinstance(value, str):
        return GenerateResult(output=value, raw=value)
    if isinstance(value, Mapping) and "output" in value:
        return GenerateResult(
            output=value["output"],
            usage=Usage.of(value.get("usage")),
            raw=value.get("raw", value),
            reasoning=value.get("reasoning"),
            tool_calls=_tool_calls(value.get("tool_calls") or ()),
            model=value.get("model"),
            finish_reason=value.get("finish_reason"),
        )
    raise TypeError(
        f"a generate_text/stream_text executor returned {type(value).__name__}; return "
        "GenerateResult(output=..., usage=...), a dict with an 'output' key, or a str"
    )


def normalize_decide_result(value: Any) -> DecideResult:
    """Accept what decide executors return: a ``DecideResult``, ``{"event": ...}``, or the event itself."""
    if isinstance(value, DecideResult):
        return attrs.evolve(value, usage=Usage.of(value.usage))
    if isinstance(value, Mapping) and "event" in value:
        return DecideResult(
            event=value["event"],
            usage=Usage.of(value.get("usage")),
            raw=value.get("raw", value),
            reasoning=value.get("reasoning"),
        )
    return DecideResult(event=value, raw=value)


def _tool_calls(items: Any) -> tuple[ModelToolCall, ...]:
    out = []
    for item in items:
        if isinstance(item, ModelToolCall):
            out.append(item)
            continue
        args = item.get("arguments", {})
        if isinstance(args, str):
            args = json.loads(args) if args.strip() else {}
        out.append(ModelToolCall(str(item.get("id", "")), str(item["name"]), dict(args)))
    return tuple(out)
