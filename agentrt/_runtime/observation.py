"""Observation: the one registry through which a runtime reports what its runs do.

Everything a run does becomes one :class:`~agentrt.observe.TraceEvent` (one
event type; ``kind`` is the fine name, ``type`` the trace family), numbered per
run, and goes to every registered trace observer, to the handlers of
``task.emit`` events (``on=``), and to the model hooks (``on_chunk``,
``on_result``).

Observers only watch.  One that raises must not break the run, nor fail in
silence: like trio's instruments, it is logged once (a warning on the
``agentrt.observe`` logger, with its traceback) and switched off for the rest
of this runtime's life.  :func:`agentrt.testing.capture_trace` adds a
process-wide observer for a test's duration (:data:`CAPTURES`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol  # Any: event data and emitted objects are the agent's values

import attrs

from agentrt.llm import ExecutorRequest
from agentrt.observe import TraceEvent, trace_type

__all__ = ["CAPTURES", "Observation", "Recorder", "TraceObserver"]

logger = logging.getLogger("agentrt.observe")

TraceObserver = Callable[[TraceEvent], None]


class Recorder(Protocol):
    """What stores every event (the runtime's :class:`~agentrt._runtime.stream.EventStream`)."""

    def record(self, kind: str, run_id: str, data: dict[str, Any]) -> None: ...


#: Process-wide trace observers (``agentrt.testing.capture_trace``): every runtime reports to them too.
#: They are the test's own lists; a failure there is a bug in the test and propagates.
CAPTURES: list[TraceObserver] = []


@attrs.define(eq=False)
class _Hook:
    """One registered callable, and whether it is still on."""

    fn: Callable[..., object]
    role: str  # how the user registered it, for the warning: "on_trace", "on_chunk", "on['Plan']", ...
    active: bool = True

    def __call__(self, *args: object) -> None:
        if not self.active:
            return
        try:
            self.fn(*args)
        except Exception:
            self.active = False
            logger.warning(
                "agentrt: the %s observer %r raised; it is switched off for the rest of this runtime "
                "(observers only watch; fix the observer so it does not raise)",
                self.role,
                self.fn,
                exc_info=True,
            )


class Observation:
    """The runtime's observers: trace observers, ``task.emit`` handlers and the model hooks."""

    def __init__(
        self,
        on_trace: Iterable[TraceObserver] = (),
        *,
        on_chunk: Callable[[str, ExecutorRequest], None] | None = None,
        on_result: Callable[[ExecutorRequest, Any], None] | None = None,
        on: Mapping[str, Callable[[Any], None]] | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        #: Stores every event before the observers see it (the run's durable event stream); never
        #: switched off: a failure to store is logged each time, since the stream is then incomplete.
        self._recorder = recorder
        self._trace: list[_Hook] = [_Hook(fn, "on_trace") for fn in on_trace]
        self._on_chunk = _Hook(on_chunk, "on_chunk") if on_chunk is not None else None
        self._on_result = _Hook(on_result, "on_result") if on_result is not None else None
        self._on_emitted = {key: _Hook(fn, f"on[{key!r}]") for key, fn in (on or {}).items()}
        self._seq: dict[str, int] = {}

    def add(self, observer: TraceObserver) -> None:
        """Register one more trace observer."""
        self._trace.append(_Hook(observer, "on_trace"))

    def emit(self, kind: str, run_id: str, /, **data: Any) -> None:
        """Report one thing a run did (``kind``: the runtime's fine name, e.g. ``tool_started``)."""
        recorder = self._recorder
        if not self._trace and not CAPTURES:
            if recorder is not None:  # the common case: nobody watches, the stream stores it
                self._seq[run_id] = self._seq.get(run_id, 0) + 1
                self._record(recorder, kind, run_id, data)
            return
        n = self._seq.get(run_id, 0)
        self._seq[run_id] = n + 1
        event = TraceEvent(trace_type(kind), run_id, n, time.time(), kind, data)
        if recorder is not None:
            self._record(recorder, kind, run_id, data)
        for hook in self._trace:
            hook(event)
        if CAPTURES:
            for capture in list(CAPTURES):
                capture(event)

    @staticmethod
    def _record(recorder: Recorder, kind: str, run_id: str, data: dict[str, Any]) -> None:
        try:
            recorder.record(kind, run_id, data)
        except Exception:
            logger.warning(
                "agentrt: the %s event of run %s could not be stored in its event stream",
                kind,
                run_id,
                exc_info=True,
            )

    def chunk(self, request: ExecutorRequest, chunk: str) -> None:
        """One streamed chunk of a model answer: traced, then handed to ``on_chunk``."""
        self.emit(
            "model_chunk", request.run_id, seq=request.seq, idx=request.idx, src=request.src, chunk=chunk
        )
        if self._on_chunk is not None:
            self._on_chunk(chunk, request)

    def result(self, request: ExecutorRequest, result: Any) -> None:
        """One model answer (per attempt) for ``on_result``; ``result`` is the executor's own object."""
        if self._on_result is not None:
            self._on_result(request, result)

    def emitted(self, type_name: object, obj: Any) -> None:
        """An object the agent sent with ``task.emit``: to its type's handler, then to ``"*"``."""
        for key in (type_name, "*"):
            hook = self._on_emitted.get(key) if isinstance(key, str) else None
            if hook is not None:
                hook(obj)
