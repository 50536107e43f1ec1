"""OpenTelemetry export of a run's trace: ``Runtime(on_trace=OpenTelemetryTraceSink())``.

The runtime already produces one ordered stream of :class:`~agentrt.observe.TraceEvent` per
run; this sink folds that stream into spans, so agent runs show up in whatever tracing backend
the application already exports to.  It uses only ``opentelemetry-api``: the application owns
the SDK, the exporter and the tracer provider, and without an SDK every span is a no-op.

The shape, and why:

* ``agentrt.run`` -- one span per *stretch* of a run in this process: from ``run`` / ``resume``
  (or the first event of a run this sink has no open span for, e.g. a parent woken by its
  finished child, or a run woken by ``reply``) to ``end``, ``waiting`` or ``error``.  A durable
  run can wait for days and finish in another process, so one span for its whole life would
  stay open (and in memory) indefinitely; instead a waiting run's span ends with
  ``agentrt.waiting_on`` and the next stretch links back to it (while this process remembers
  it: the last :data:`REMEMBERED_RUNS` runs).
* A sub-agent's run span is a child of its parent's run span when that is open here (the
  parent dispatched it in this process), else it links to the parent's last stretch.
* ``agentrt.tool <name>`` / ``agentrt.llm <method>`` -- one span per request, keyed by
  ``(run_id, seq, idx)``, child of the run span, ended by the matching ``result`` with
  ``gen_ai.usage.*`` attributes for model answers.  Streamed chunks are span events; their
  text is left out unless ``record_chunks=True`` (model output may be private, and large).
* ``checkpoint``, ``emit``, ``notify``, ``log``, ``reply`` -- events on the run span.

Times are the trace events' own wall-clock ``at``, so the spans say when things happened, not
when the sink got to them.  A run span without a known parent starts in the caller's current
context, so a run started inside an application span (``rt.start`` within
``tracer.start_as_current_span(...)``) nests under it.

The sink only watches: it never raises, and it does not make its spans current, so spans that
executors create themselves (an instrumented HTTP client) are not children of the request span.
An event it cannot turn into span data costs only that data; the first such failure is logged
(a warning on the ``agentrt.otel`` logger, with its traceback), so that it is not lost in silence.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard  # Any: trace event data holds the agent's values

try:
    from opentelemetry import trace
    from opentelemetry.trace import Link, Span, SpanContext, SpanKind, Status, StatusCode
    from opentelemetry.util.types import AttributeValue
except ImportError as exc:  # pragma: no cover - exercised by a test that hides the package
    raise ImportError("agentrt.otel needs opentelemetry-api: pip install agentrt[otel]") from exc

import attrs

from agentrt.observe import TraceEvent

__all__ = ["MAX_ATTRIBUTE_CHARS", "REMEMBERED_RUNS", "OpenTelemetryTraceSink"]

logger = logging.getLogger("agentrt.otel")

#: Longest string attribute written; longer values (JSON-encoded data, chunk text) are cut.
MAX_ATTRIBUTE_CHARS = 1000
#: How many runs whose span ended without the run ending (waiting, evicted) are remembered, to
#: link their next stretch (and their sub-agents) back to them.  Bounded: a waiting run may never
#: come back to this process.
REMEMBERED_RUNS = 1024

#: Trace types that become events on the run span, with their data as attributes.
_RUN_EVENTS = frozenset({"checkpoint", "emit", "notify", "log", "reply"})
#: Request attributes copied from a ``request`` event's data (as ``agentrt.<name>``).
_REQUEST_KEYS = ("seq", "idx", "method", "src", "model", "tool", "key")


@attrs.define
class _Stretch:
    """A run's open span in this process, and its requests' open spans by ``(seq, idx)``."""

    span: Span
    agent: str | None
    parent: str | None
    requests: dict[tuple[int, int], Span] = attrs.field(factory=dict)


@attrs.frozen
class _Past:
    """What is kept of a run whose span ended while the run goes on: enough to link to it."""

    context: SpanContext
    agent: str | None
    parent: str | None


class OpenTelemetryTraceSink:
    """An ``on_trace`` sink that turns each run's trace into OpenTelemetry spans (see the module doc).

    ``tracer``: the tracer to create spans with (default ``trace.get_tracer("agentrt")``, i.e. the
    global tracer provider's).  ``record_chunks``: also put each streamed chunk's text on its
    ``chunk`` event (by default only its ``size``).

    Safe to share between threads and runtimes; call :meth:`close` (or use it as a context
    manager) when the runtime is done, to end the spans of runs that were still in flight.
    """

    def __init__(self, tracer: trace.Tracer | None = None, *, record_chunks: bool = False) -> None:
        self._tracer = tracer if tracer is not None else trace.get_tracer("agentrt")
        self._record_chunks = record_chunks
        self._lock = threading.Lock()
        self._runs: dict[str, _Stretch] = {}
        self._past: OrderedDict[str, _Past] = OrderedDict()
        self._failed = False  # whether a failure has been logged (only the first one is)

    # ------------------------------------------------------------------ sink protocol

    def __call__(self, event: TraceEvent) -> None:
        # An observer must never disturb a run; a malformed event costs at most its own span data.
        with self._lock:
            try:
                self._handle(event)
            except Exception:
                if not self._failed:
                    self._failed = True
                    logger.warning(
                        "agentrt.otel: the %r event of run %r could not become span data (it is left out; "
                        "later failures of this sink are not logged)",
                        getattr(event, "kind", event),
                        getattr(event, "run_id", None),
                        exc_info=True,
                    )

    def close(self) -> None:
        """End every span still open (runs cut off mid-stretch), marked ``agentrt.abandoned``.

        Their status stays UNSET: the sink cannot tell whether the run will carry on elsewhere.
        """
        with self._lock:
            runs, self._runs = self._runs, {}
            for stretch in runs.values():
                with contextlib.suppress(Exception):
                    _abandon(stretch.requests.values(), None)
                    stretch.requests.clear()
                    _abandon([stretch.span], None)

    def __enter__(self) -> OpenTelemetryTraceSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ dispatch

    def _handle(self, event: TraceEvent) -> None:
        at = _ns(event.at)
        data = event.data
        if event.type in ("run", "resume") or event.kind == "child_started":
            stretch = self._runs.get(event.run_id)
            if stretch is None:
                parent = data.get("parent") if event.kind == "child_started" else None
                stretch = self._open(event.run_id, at, _str(data.get("agent")), _str(parent))
            if event.type == "resume":
                stretch.span.add_event("resume", _attributes(data), timestamp=at)
            return
        stretch = self._ensure(event.run_id, at)
        if event.type == "request":
            self._request(stretch, event.kind, data, at)
        elif event.type == "chunk":
            self._chunk(stretch, data, at)
        elif event.type == "result":
            self._result(stretch, event.kind, data, at)
        elif event.type == "end":
            self._end(event.run_id, event.kind, data, at)
        elif event.type == "waiting":
            attrs = {"agentrt.waiting_on": data.get("waiting_on"), "agentrt.wake_at": data.get("wake_at")}
            self._close(event.run_id, at, _attributes(attrs), None, remember=True)
        elif event.type == "error":
            # Host trouble (lease lost, store failure): the run leaves this process, unfinished.
            message = _str(data.get("message") or data.get("error")) or event.kind
            attrs = {"agentrt.error_kind": event.kind, "error.type": event.kind}
            self._close(event.run_id, at, attrs, Status(StatusCode.ERROR, message), remember=True)
        else:  # checkpoint, emit, notify, log, reply -- and kinds this sink does not know yet
            stretch.span.add_event(event.type, _attributes(data), timestamp=at)

    # ------------------------------------------------------------------ run spans

    def _open(self, run_id: str, at: int, agent: str | None = None, parent: str | None = None) -> _Stretch:
        past = self._past.pop(run_id, None)
        if past is not None:
            agent = agent or past.agent
            parent = parent or past.parent
        links = [Link(past.context, {"agentrt.link": "previous_stretch"})] if past is not None else []
        attributes: dict[str, AttributeValue] = {"agentrt.run_id": run_id}
        if agent:
            attributes["agentrt.agent"] = agent
        context = None  # the caller's current context: a run started within an app span nests in it
        if parent:
            attributes["agentrt.parent_run_id"] = parent
            open_parent = self._runs.get(parent)
            if open_parent is not None:
                context = trace.set_span_in_context(open_parent.span)
            elif (parent_past := self._past.get(parent)) is not None:
                links.append(Link(parent_past.context, {"agentrt.link": "parent_run"}))
        span = self._tracer.start_span(
            "agentrt.run",
            context=context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=links,
            start_time=at,
        )
        stretch = _Stretch(span, agent, parent)
        self._runs[run_id] = stretch
        return stretch

    def _ensure(self, run_id: str, at: int) -> _Stretch:
        stretch = self._runs.get(run_id)
        return stretch if stretch is not None else self._open(run_id, at)

    def _end(self, run_id: str, kind: str, data: Mapping[str, Any], at: int) -> None:
        if kind != "failed":
            self._close(run_id, at, {}, Status(StatusCode.OK), remember=False)
            return
        error = data.get("error")
        error_type = _str(error.get("type")) if isinstance(error, Mapping) else None
        message = _str(error.get("message")) if isinstance(error, Mapping) else _str(error)
        stretch = self._runs.get(run_id)
        if stretch is not None:
            _exception_event(stretch.span, error_type, message, at)
        description = ": ".join(part for part in (error_type, message) if part) or "failed"
        attrs = {"error.type": error_type} if error_type else {}
        self._close(run_id, at, attrs, Status(StatusCode.ERROR, _cut(description)), remember=False)

    def _close(
        self,
        run_id: str,
        at: int,
        attributes: Mapping[str, AttributeValue],
        status: Status | None,
        *,
        remember: bool,
    ) -> None:
        stretch = self._runs.pop(run_id, None)
        if stretch is None:
            return
        requests = list(stretch.requests.values())
        stretch.requests.clear()
        _abandon(requests, at)  # still open as the run leaves: cut off with it
        span = stretch.span
        if attributes:
            span.set_attributes(attributes)
        if status is not None:
            span.set_status(status)
        if remember:
            self._past[run_id] = _Past(span.get_span_context(), stretch.agent, stretch.parent)
            while len(self._past) > REMEMBERED_RUNS:
                self._past.popitem(last=False)
        span.end(end_time=at)

    # ------------------------------------------------------------------ request spans

    def _start_request(self, stretch: _Stretch, kind: str, data: Mapping[str, Any], at: int) -> Span:
        if kind.startswith("tool_"):
            name = f"agentrt.tool {data.get('tool')}"
        elif kind.startswith("model_"):
            name = f"agentrt.llm {data.get('method')}"
        else:
            name = f"agentrt.{kind}"
        attributes = _attributes({f"agentrt.{k}": data.get(k) for k in _REQUEST_KEYS})
        if isinstance(data.get("model"), str):
            attributes["gen_ai.request.model"] = data["model"]
        return self._tracer.start_span(
            name,
            context=trace.set_span_in_context(stretch.span),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=at,
        )

    def _request(self, stretch: _Stretch, kind: str, data: Mapping[str, Any], at: int) -> None:
        key = _key(data)
        span = self._start_request(stretch, kind, data, at)
        previous = stretch.requests.pop(key, None)
        if previous is not None:  # dispatched again before its result: the first one never answered
            _abandon([previous], at)
        stretch.requests[key] = span

    def _chunk(self, stretch: _Stretch, data: Mapping[str, Any], at: int) -> None:
        chunk = data.get("chunk")
        text = chunk if isinstance(chunk, str) else "" if chunk is None else str(chunk)
        attributes: dict[str, AttributeValue] = {"size": len(text)}
        if self._record_chunks:
            attributes["text"] = _cut(text)
        span = stretch.requests.get(_key(data))
        if span is None:  # a chunk of a request this sink never saw start: keep it on the run
            span = stretch.span
            attributes.update(_attributes({"seq": data.get("seq"), "idx": data.get("idx")}))
        span.add_event("chunk", attributes, timestamp=at)

    def _result(self, stretch: _Stretch, kind: str, data: Mapping[str, Any], at: int) -> None:
        span = stretch.requests.pop(_key(data), None)
        if span is None:
            # The request started before this stretch (or this sink): rebuild it from its duration.
            seconds = data.get("seconds")
            start = at - int(seconds * 1e9) if _number(seconds) and seconds >= 0 else at
            span = self._start_request(stretch, kind, data, start)
        attributes = _attributes({"agentrt.ok": data.get("ok"), "agentrt.calls": data.get("calls")})
        usage = data.get("usage")
        if isinstance(usage, Mapping):
            for name in ("input_tokens", "output_tokens"):
                if _number(usage.get(name)):
                    attributes[f"gen_ai.usage.{name}"] = usage[name]
            if _number(usage.get("total_tokens")):
                attributes["agentrt.usage.total_tokens"] = usage["total_tokens"]
        if data.get("ok") is False or data.get("error") is not None:
            error = _str(data.get("error")) or "failed"
            error_type = error.split(":", 1)[0] if ":" in error else None
            if error_type:
                attributes["error.type"] = error_type
            _exception_event(span, error_type, error, at)
            span.set_status(Status(StatusCode.ERROR, _cut(error)))
        span.set_attributes(attributes)
        span.end(end_time=at)


# ---------------------------------------------------------------------- helpers


def _ns(at: float) -> int:
    """Trace timestamps are seconds since the epoch; OpenTelemetry wants integer nanoseconds."""
    return int(float(at) * 1_000_000_000)  # float(): a str ``at`` must fail, not repeat itself


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _str(value: object) -> str | None:
    return None if value is None else value if isinstance(value, str) else str(value)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_ATTRIBUTE_CHARS else text[: MAX_ATTRIBUTE_CHARS - 1] + "…"


def _key(data: Mapping[str, Any]) -> tuple[int, int]:
    seq, idx = data.get("seq"), data.get("idx")
    return (seq if isinstance(seq, int) else -1, idx if isinstance(idx, int) else 0)


def _value(value: object) -> AttributeValue | None:
    """A span attribute for ``value``: scalars as they are, anything else as (cut) JSON; None: none."""
    if value is None:
        return None
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return _cut(value)
    try:
        text = json.dumps(value, default=repr, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):  # mixed-type keys, circular data: its repr is still a clue
        text = repr(value)
    return _cut(text)


def _attributes(data: Mapping[str, Any]) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {}
    for key, value in data.items():
        converted = _value(value)
        if converted is not None:
            attributes[str(key)] = converted
    return attributes


def _exception_event(span: Span, error_type: str | None, message: str | None, at: int) -> None:
    """The semantic-conventions ``exception`` event: backends show it as the span's error."""
    attributes = _attributes({"exception.type": error_type, "exception.message": message})
    span.add_event("exception", attributes, timestamp=at)


def _abandon(spans: Iterable[Span], at: int | None) -> None:
    """End spans whose outcome this sink will never see (``at`` None: now)."""
    for span in spans:
        with contextlib.suppress(Exception):
            span.set_attribute("agentrt.abandoned", True)
            span.end(end_time=at)
