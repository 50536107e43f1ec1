"""Blocked runs: what a refused or unrestorable checkpoint records, and who takes the run up again.

A run is *blocked*, not failed, when agentrt -- not the agent -- cannot go on with it:

- its next checkpoint was refused at ``Machine.get()`` (``CannotCrossAwait``: a value that cannot
  cross an await, ``UnsupportedSuspension``, an engine error): the agent did nothing wrong that a
  ``try`` could catch, and the code can be fixed;
- the code loaded now cannot restore its newest checkpoint, when the run was asked for by name
  (``Runtime.resume``, ``agentrt resume``).  A worker that merely claimed it gives it back instead
  (a rolling deploy: another worker may carry the code; see :mod:`agentrt._runtime.worker`).

The run keeps its last good checkpoint and the results journaled at it (the driver journals the
results it still held before it records the block), so when it goes on, from that checkpoint,
every tool call that had completed is answered from the journal and none runs again.  The steps
the agent took after that checkpoint are run again; they made no call that completed (every
request is checkpointed before it is dispatched, and it is the checkpoint that was refused); the
events they recorded without waiting (``task.ui.notify``, ``task.console``, ``task.emit``) are
recorded again in the run's event stream.

Who continues a blocked run:

- ``agentrt resume`` / ``Runtime.resume``: at once, whatever the code (it blocks again, with a new
  finding, if the code still does not allow it);
- ``agentrt upgrade``: after moving its checkpoint to the new code (or finding nothing to move) it
  makes the run ``running`` again, and a worker takes it;
- ``agentrt retry`` / ``Runtime.retry`` (:mod:`agentrt._runtime.retry`);
- a worker (:class:`BlockedSweep`): a blocked run it can restore, at most once per worker process
  and per checkpoint requirement (``RunRecord.code_required``) -- never the runs it blocked itself
  with that requirement.  A deploy starts new workers, which try each blocked run once; a worker
  with the same code that blocked the run tries it once, blocks it again and leaves it alone, so
  no run is stepped in a loop.  A fix that moves the run's checkpoint (``agentrt upgrade``) gives
  it a new requirement, so every worker may try it again.
"""

from __future__ import annotations

import re
import time
from typing import Any  # Any: the finding is JSON data

from agentrt.exceptions import CannotCrossAwait, IncompatibleBlob, InternalInconsistency
from agentrt.stores.base import RunRecord

__all__ = ["FINDING_KEYS", "BlockedSweep", "refusal_finding", "unrestorable_finding"]

#: The keys of ``RunRecord.blocked`` (and of ``--json``'s ``blocked``), in this order.
FINDING_KEYS = ("code", "message", "function", "lineno", "variable")

_AR_CODE = re.compile(r"^(AR\d{3}):")
_CHANGED = re.compile(r"(?:code of )?(\S+:\S+) (?:changed since|no longer exists)")


def _finding(
    code: str | None, message: str, function: str | None, lineno: int | None, variable: str | None
) -> dict[str, Any]:
    return dict(zip(FINDING_KEYS, (code, message, function, lineno, variable), strict=True))


def refusal_finding(exc: BaseException) -> dict[str, Any]:
    """Why ``Machine.get()`` refused a checkpoint, as ``RunRecord.blocked`` keeps it."""
    message = f"{exc}" if isinstance(exc, CannotCrossAwait) else f"{type(exc).__name__}: {exc}"
    if isinstance(exc, CannotCrossAwait):
        return _finding(exc.code, message, exc.function, exc.lineno, exc.variable)
    if isinstance(exc, InternalInconsistency):
        return _finding(exc.code, message, exc.function, exc.lineno, None)
    match = _AR_CODE.match(str(exc))
    return _finding(match.group(1) if match else None, message, None, None, None)


def unrestorable_finding(exc: IncompatibleBlob, seq: int) -> dict[str, Any]:
    """Why the code loaded now cannot restore checkpoint ``seq``, with the fix."""
    match = _CHANGED.search(str(exc))
    message = (
        f"checkpoint {seq} cannot be restored by the code loaded now: {exc}. Put the old code back, or "
        "move the run to the new code with agentrt upgrade (see agentrt upgrade --dry-run), then resume it"
    )
    return _finding(None, message, match.group(1) if match else None, None, None)


class BlockedSweep:
    """A worker's memory of the blocked runs it tried (see the module docstring): run id -> the
    checkpoint requirement it had then.  Looked at no more often than every ``interval_seconds``."""

    def __init__(self, interval_seconds: float) -> None:
        self.interval_seconds = interval_seconds
        self._tried: dict[str, str | None] = {}
        self._last = float("-inf")

    def note(self, run_id: str, code_required: str | None) -> None:
        """This process blocked the run or tried it: not again while its requirement stays the same."""
        if len(self._tried) >= 65536:  # bounded: forgetting costs one more try of each blocked run
            self._tried.clear()
        self._tried[run_id] = code_required

    def due(self, now: float | None = None) -> bool:
        """Whether to look at the blocked runs again (and, if so, from now on wait another interval)."""
        now = time.monotonic() if now is None else now
        if now - self._last < self.interval_seconds:
            return False
        self._last = now
        return True

    def untried(self, runs: list[RunRecord]) -> list[RunRecord]:
        """The blocked runs among ``runs`` this process has not tried with their requirement, not
        driven anywhere now."""
        return [
            rec
            for rec in runs
            if rec.status == "blocked"
            and not rec.lease_live()
            and (rec.run_id not in self._tried or self._tried[rec.run_id] != rec.code_required)
        ]
