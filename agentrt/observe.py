"""Observation seams: one ordered trace per run, and sinks that export it.

``Runtime(on_trace=...)`` receives a :class:`TraceEvent` for everything a run
does -- ``run`` (started), ``resume``, ``request`` (a tool, sub-agent or model
call is dispatched), ``chunk`` (a streamed model chunk), ``result``,
``checkpoint``, ``emit`` / ``notify`` / ``log`` (what the agent recorded),
``waiting``, ``reply`` and ``end`` (completed or failed) -- each with ``run_id``,
a per-run ``seq`` (in this process, from 0) and a wall-clock timestamp.
Observers only watch, and a run behaves the same with none attached; one that
raises is logged once and switched off (see :mod:`agentrt._runtime.observation`).
In tests, :func:`agentrt.testing.capture_trace` collects the events.

Sinks: :class:`JsonlTraceExporter` (one JSON object per line, the eval/export
format) and :class:`StructlogTraceSink` (through structlog's processors, which
is how the command line logs).
"""

from __future__ import annotations

import json
import threading
from typing import IO, Any  # Any: trace event data holds the agent's values

import attrs

__all__ = ["TRACE_TYPES", "JsonlTraceExporter", "StructlogTraceSink", "TraceEvent", "trace_type"]

#: Runtime event kind -> trace event type.
TRACE_TYPES: dict[str, str] = {
    "started": "run",
    "resumed": "resume",
    "replied": "reply",
    "checkpoint": "checkpoint",
    "tool_started": "request",
    "child_started": "request",
    "model_request": "request",
    "tool_finished": "result",
    "model_result": "result",
    "model_chunk": "chunk",
    "emit": "emit",
    "notify": "notify",
    "log": "log",
    "waiting": "waiting",
    "completed": "end",
    "failed": "end",
    "lease_lost": "error",
    "driver_error": "error",
}


def trace_type(kind: str) -> str:
    return TRACE_TYPES.get(kind, kind)


@attrs.frozen
class TraceEvent:
    """One entry of a run's trace; ``kind`` is the runtime's finer name (``tool_started``, ``completed``)."""

    type: str
    run_id: str
    seq: int
    at: float
    kind: str
    data: dict[str, Any] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        head = {"type": self.type, "run_id": self.run_id, "seq": self.seq, "at": self.at, "kind": self.kind}
        return {**head, **{k: v for k, v in self.data.items() if k not in head}}


class JsonlTraceExporter:
    """An ``on_trace`` sink that appends each event as one JSON line to ``path`` (or an open text stream).

    Lines are flushed as written, so a crash loses at most the event being written.
    Values that are not JSON are written as their ``repr``.
    """

    def __init__(self, path: str | IO[str]) -> None:
        self._own = isinstance(path, str)
        self._stream: IO[str] = open(path, "a", encoding="utf-8") if isinstance(path, str) else path  # noqa: SIM115
        self._lock = threading.Lock()

    def __call__(self, event: TraceEvent) -> None:
        line = json.dumps(event.to_json(), default=repr, ensure_ascii=False)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def close(self) -> None:
        if self._own:
            self._stream.close()

    def __enter__(self) -> JsonlTraceExporter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StructlogTraceSink:
    """An ``on_trace`` sink that logs each event through structlog (``logger``: a bound logger; default
    ``structlog.get_logger("agentrt.trace")``).  Chunks are logged at debug level, everything else at info."""

    def __init__(self, logger: Any = None) -> None:
        import structlog

        self._logger = logger if logger is not None else structlog.get_logger("agentrt.trace")

    def __call__(self, event: TraceEvent) -> None:
        fields = event.to_json()
        name = fields.pop("type")
        log = self._logger.debug if event.type == "chunk" else self._logger.info
        log(name, **fields)
