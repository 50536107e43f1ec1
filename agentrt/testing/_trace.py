"""``capture_trace()``: the trace events of every runtime, collected for a test (like structlog's
``testing.capture_logs``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from agentrt._runtime.observation import CAPTURES
from agentrt.observe import TraceEvent

__all__ = ["capture_trace"]


@contextmanager
def capture_trace() -> Iterator[list[TraceEvent]]:
    """Collect every :class:`~agentrt.observe.TraceEvent` any :class:`~agentrt.Runtime` of this process
    reports while the ``with`` block runs, in order, into the list it returns::

        with capture_trace() as events:
            asyncio.run(main())
        assert [e.kind for e in events if e.run_id == run_id][-1] == "completed"

    It is process-wide (every runtime, every thread), so the list holds only what happened inside the
    block; nest freely.
    """
    events: list[TraceEvent] = []
    sink = events.append
    CAPTURES.append(sink)
    try:
        yield events
    finally:
        CAPTURES.remove(sink)
