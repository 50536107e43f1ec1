"""The durable scheduler (``Runtime`` is re-exported by :mod:`agentrt`), split by job as trio splits its core:

- ``runtime``: :class:`Runtime`, the public API and the step loop (drive, step, checkpoint, finish, park);
- ``dispatch``: carrying out tools, model calls, child runs and timers, and journaling their results;
- ``pending``: pure decisions over a pending request (answered yet? parked on what? its summary);
- ``leases``: taking, renewing and giving back the leases of driven runs;
- ``observation``: the one observer registry (trace events, ``task.emit`` handlers, model hooks);
- ``state``: the in-memory state of a driven run;
- ``budget``, ``encoding``: the step-time watchdog, and results/errors to and from journal blobs.
"""

from typing import Any  # Any: a lazy export is whatever object the module holds

from agentrt._runtime.runtime import Runtime as Runtime

__all__ = ["Runtime"]


def __getattr__(name: str) -> Any:
    if name == "RuntimeEvent":  # removed: one event type now (warns, then returns TraceEvent)
        from agentrt._runtime import runtime

        return runtime.__getattr__(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
