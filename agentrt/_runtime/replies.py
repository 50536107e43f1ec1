"""Where a reply goes, and when a run is due: small decisions over stored rows and user input.

``Runtime.reply(run_id, value)`` answers the question the run waits on -- or, if the run waits on
sub-runs, the one sub-run that asks.  :func:`reply_target` finds it (store reads: the runtime calls
it through its I/O seam); :func:`deadline_at` turns a run's ``deadline=`` into a time.
"""

from __future__ import annotations

import datetime
import time

from agentrt._runtime.pending import describe_pending
from agentrt.exceptions import NotWaiting, RowDamaged
from agentrt.stores.base import RunRecord, Store

__all__ = ["deadline_at", "descendants", "reply_target"]


def reply_target(store: Store, rec: RunRecord) -> RunRecord:
    """The run (``rec`` or a sub-run) whose question a reply answers (store reads: off the loop)."""
    if rec.damaged is not None:  # its pending request may be one of the defaults
        column, why = rec.damaged
        raise RowDamaged(
            f"run {rec.run_id!r} cannot take a reply: its stored row is damaged (column {column}: "
            f"{why}); nothing was written. Repair the column in {store.location} (`agentrt "
            f"show {rec.run_id}` names it), then reply again",
            rec.run_id,
            column,
        )
    pending = rec.pending or {}
    if rec.finished:
        raise NotWaiting(f"run {rec.run_id!r} is {rec.status}; there is nothing to reply to")
    if pending.get("kind") == "ask":
        if store.get_results(rec.run_id, rec.seq):
            raise NotWaiting(f"run {rec.run_id!r} already has a reply for its question; resume it instead")
        return rec
    asking = [r for r in descendants(store, rec) if (r.pending or {}).get("kind") == "ask" and not r.finished]
    asking = [r for r in asking if not store.get_results(r.run_id, r.seq)]
    if len(asking) == 1:
        return asking[0]
    what = describe_pending(rec.pending)
    if len(asking) > 1:
        ids = ", ".join(r.run_id for r in asking)
        raise NotWaiting(f"run {rec.run_id!r} has several sub-runs waiting for a reply ({ids}); reply to one")
    raise NotWaiting(
        f"run {rec.run_id!r} is not waiting for a reply (status {rec.status}, {what}); "
        "only a run paused on task.ui.ask(...) takes Runtime.reply(...)"
    )


def descendants(store: Store, rec: RunRecord) -> list[RunRecord]:
    out: list[RunRecord] = []
    stack = [rec]
    while stack:
        for child in store.children(stack.pop().run_id):
            out.append(child)
            stack.append(child)
    return out


def deadline_at(deadline: float | datetime.timedelta | datetime.datetime | None) -> float | None:
    """A run's deadline as ``time.time()`` seconds: from seconds or a ``timedelta`` from now, or an
    aware ``datetime``."""
    if deadline is None:
        return None
    if isinstance(deadline, datetime.datetime):
        if deadline.tzinfo is None:
            raise ValueError(
                f"deadline={deadline!r} has no time zone; pass an aware datetime "
                "(datetime.now(timezone.utc) + ...) or seconds from now"
            )
        return deadline.timestamp()
    if isinstance(deadline, datetime.timedelta):
        return time.time() + deadline.total_seconds()
    if isinstance(deadline, int | float) and not isinstance(deadline, bool) and deadline > 0:
        return time.time() + float(deadline)
    raise ValueError(
        f"deadline must be seconds from now (> 0), a timedelta or an aware datetime, got {deadline!r}"
    )
