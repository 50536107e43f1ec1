"""Every unfinished run of a store, judged against the code loaded now, and moved when it migrates.

A moved checkpoint *replaces* the run's newest checkpoint under the same ``seq``:
results, child runs, timers and tool idempotency keys are all bound to the seq of
the suspension they answer, and the suspension is still the same one -- only the
code around it changed.  The move is recorded in the run's history as an
``upgrade`` event at that seq (``agentrt show`` lists it), with each frame's old
and new digest, site and verdict.  Nothing else about the run changes: its
status, pending request and wake-up time are put back as they were.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any  # Any: JSON documents

import attrs

from agentrt._frames._migrate import Verdict
from agentrt._sdk.agent import load_agent
from agentrt._upgrade._blob import FrameReport, Resolver, judge, migrate
from agentrt.exceptions import AgentrtError, LeaseHeld
from agentrt.keys import keyring_for_store
from agentrt.stores import Store
from agentrt.stores.base import RunRecord, make_owner

__all__ = ["RunReport", "check_store", "upgrade_store"]

_LEASE_SECONDS = 60.0
UPGRADE_EVENT = "upgrade"


@attrs.frozen
class RunReport:
    run_id: str
    verdict: Verdict
    reason: str
    frames: tuple[FrameReport, ...]
    seq: int | None = None
    applied: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "verdict": self.verdict.text,
            "reason": self.reason,
            "frames": [frame.as_json() for frame in self.frames],
            "seq": self.seq,
            "applied": self.applied,
        }


def upgrade_store(
    store: Store, *, dry_run: bool, on_report: Callable[[RunReport], None] | None = None
) -> list[RunReport]:
    """Judge (and unless ``dry_run``, move) every unfinished run of ``store``."""
    reports = []
    for rec in store.list_runs():
        if rec.finished:
            continue
        report = _upgrade_run(store, rec, dry_run)
        reports.append(report)
        if on_report is not None:
            on_report(report)
    return reports


def check_store(store: Store, resolver: Resolver) -> list[RunReport]:
    """Judge every unfinished run of ``store`` against code found by ``resolver``, importing and
    moving nothing (``agentrt check --against``): ``migrates`` here means the frames can move, and
    ``@agentrt.migrate`` functions, which only an import would register, are not consulted."""
    reports = []
    for rec in store.list_runs():
        if rec.finished:
            continue
        checkpoint = store.latest_checkpoint(rec.run_id)
        if checkpoint is None:
            reports.append(
                RunReport(
                    rec.run_id, Verdict.UNCHANGED, "not started yet: it will start with the new code", ()
                )
            )
            continue
        seq, blob = checkpoint
        try:
            report = judge(blob, resolver=resolver, migrations=False, keys=keyring_for_store(store).read)
        except AgentrtError as exc:
            reports.append(
                RunReport(rec.run_id, Verdict.BLOCKED, f"checkpoint {seq} cannot be read: {exc}", (), seq)
            )
            continue
        reports.append(
            RunReport(
                rec.run_id, report.verdict, _run_reason(report.verdict, report.frames), report.frames, seq
            )
        )
    return reports


def _upgrade_run(store: Store, rec: RunRecord, dry_run: bool) -> RunReport:
    checkpoint = store.latest_checkpoint(rec.run_id)
    if checkpoint is None:
        return RunReport(
            rec.run_id, Verdict.UNCHANGED, "not started yet: it will start with the new code", ()
        )
    seq, blob = checkpoint
    try:
        load_agent(rec.agent)  # imports the agent's module: its new code and its @agentrt.migrate functions
    except Exception as exc:
        return RunReport(
            rec.run_id, Verdict.BLOCKED, f"the agent {rec.agent!r} cannot be loaded: {exc}", (), seq
        )
    try:
        report = judge(blob, keys=keyring_for_store(store).read)
    except AgentrtError as exc:
        return RunReport(rec.run_id, Verdict.BLOCKED, f"checkpoint {seq} cannot be read: {exc}", (), seq)
    frames = report.frames
    reason = _run_reason(report.verdict, frames)
    if report.verdict is not Verdict.MIGRATES:
        return RunReport(rec.run_id, report.verdict, reason, frames, seq)
    try:
        # a dry run moves it too (in memory): "migrates" is proven
        new_blob = migrate(blob, report, ring=keyring_for_store(store), bind=("checkpoint", rec.run_id, seq))
    except Exception as exc:
        return RunReport(
            rec.run_id,
            Verdict.BLOCKED,
            f"moving checkpoint {seq} failed: {type(exc).__name__}: {exc}",
            frames,
            seq,
        )
    if dry_run:
        return RunReport(rec.run_id, Verdict.MIGRATES, reason, frames, seq)
    try:
        _replace(store, rec, seq, blob, new_blob, frames)
    except LeaseHeld as exc:
        return RunReport(
            rec.run_id, Verdict.MIGRATES, f"not applied: another process drives the run ({exc})", frames, seq
        )
    return RunReport(rec.run_id, Verdict.MIGRATES, reason, frames, seq, applied=True)


def _run_reason(verdict: Verdict, frames: tuple[FrameReport, ...]) -> str:
    if verdict is Verdict.UNCHANGED:
        return "no code it is suspended in changed"
    worst = [frame for frame in frames if frame.verdict is verdict]
    return "; ".join(f"{frame.function}: {frame.reason}" for frame in worst)


def _replace(
    store: Store, rec: RunRecord, seq: int, old_blob: bytes, new_blob: bytes, frames: tuple[FrameReport, ...]
) -> None:
    owner = make_owner()
    store.acquire_lease(rec.run_id, owner, _LEASE_SECONDS)
    try:
        current = store.latest_checkpoint(rec.run_id)
        if current is None or current[0] != seq or current[1] != old_blob:
            raise LeaseHeld(rec.run_id, "a process that checkpointed the run meanwhile", 0.0)
        fresh = store.get_run(rec.run_id) or rec
        pending = next((c.pending for c in store.list_checkpoints(rec.run_id) if c.seq == seq), fresh.pending)
        n = 1 + max((e.n for e in store.list_events(rec.run_id) if e.seq == seq), default=-1)
        data = {
            "frames": [
                {**frame.as_json(), "new_digest": frame.new_digest}
                for frame in frames
                if frame.verdict is not Verdict.UNCHANGED
            ],
            "old_blob_sha256": hashlib.sha256(old_blob).hexdigest(),
            "old_size_bytes": len(old_blob),
            "size_bytes": len(new_blob),
        }
        store.save_checkpoint(
            rec.run_id, owner, seq, new_blob, pending, [(seq, n, UPGRADE_EVENT, "info", data)]
        )
        if fresh.status == "waiting":  # save_checkpoint marks the run running; put it back
            store.set_waiting(rec.run_id, owner, fresh.waiting_on or "", fresh.wake_at, [])
    finally:
        store.release_lease(rec.run_id, owner)
