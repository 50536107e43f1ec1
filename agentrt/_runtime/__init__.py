"""The durable scheduler (``Runtime`` is re-exported by :mod:`agentrt`), split by job as trio splits its core:

- ``runtime``: :class:`Runtime`, the public API, building its collaborators;
- ``stepper``: the pure state machine of a run (checkpoint, dispatch, park, finish, fail, block);
- ``driver``: the I/O shell that does what the stepper decides, one task per driven run;
- ``storeio``: the one seam to the store (no store call blocks the event loop);
- ``dispatch``: carrying out tools, model calls, child runs and timers (one handler per request kind);
- ``pending``: pure decisions over a pending request (answered yet? parked on what? its summary);
- ``worker``, ``registry``: claiming runnable runs, and this worker's row in the store's registry;
- ``agents``, ``requirements``: agents by spec, and the code requirements this process can meet;
- ``leases``: taking, renewing and giving back the leases of driven runs;
- ``observation``: the one observer registry (trace events, ``task.emit`` handlers, model hooks);
- ``state``: the in-memory state of a driven run;
- ``budget``, ``encoding``: the step-time watchdog, and results/errors to and from journal blobs.
"""

from agentrt._runtime.runtime import Runtime as Runtime

__all__ = ["Runtime"]
