"""Every unfinished run of a store, judged against the code loaded now, and moved when it migrates.

A moved checkpoint *replaces* the run's newest checkpoint under the same ``seq``:
results, child runs, timers and tool idempotency keys are all bound to the seq of
the suspension they answer, and the suspension is still the same one -- only the
code around it changed.  The replaced blob is kept (``Store.replaced_checkpoints``),
and the move is recorded in the run's history as an ``upgrade`` event at that seq
(``agentrt show`` lists it, ``agentrt dump`` shows the history, ``agentrt diff ID N N``
compares the checkpoint before and after), with each frame's old and new digest and
site, and which locals were carried over, supplied by a migration or dropped.  Nothing
else about the run changes: its status, pending request and wake-up time stay -- except that a
``blocked`` run (:mod:`agentrt._runtime.blocking`) that resumes with the code loaded now (moved, or
nothing to move) becomes ``running`` again (``unblocked``), so a worker or ``agentrt resume`` goes on.

A frame with an ``@agentrt.migrate(..., restart=True)`` that does not move as it is
restarts at an earlier safe point (:mod:`agentrt._upgrade._restart`): the run gets a
new checkpoint after its newest one, recorded by an ``upgrade`` event there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any  # Any: JSON documents

import attrs

from agentrt._codec import code_requirement, short, unpack
from agentrt._frames import MovedFrame, Verdict
from agentrt._runtime.encoding import checkpoint_bind, seal_for
from agentrt._runtime.history import check_chain, check_history, predecessor
from agentrt._sdk.agent import load_agent
from agentrt._upgrade._blob import BlobReport, FrameReport, Resolver, judge, migrate
from agentrt._upgrade._restart import Restart, plan_restart
from agentrt.exceptions import AgentrtError, CorruptBlob, LeaseHeld
from agentrt.keys import Keyring, keyring_for_store
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
    #: A blocked run made ``running`` again (it resumes with the code loaded now).
    unblocked: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "verdict": self.verdict.text,
            "reason": self.reason,
            "frames": [frame.as_json() for frame in self.frames],
            "seq": self.seq,
            "applied": self.applied,
            "unblocked": self.unblocked,
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
        if rec.status == "blocked" and not dry_run and report.verdict <= Verdict.MIGRATES:
            report = attrs.evolve(report, unblocked=_unblock(store, rec))
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
        if rec.damaged is not None:
            reports.append(_damaged_report(rec))
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


def _unblock(store: Store, rec: RunRecord) -> bool:
    """Make a blocked run whose checkpoint resumes with the code loaded now ``running`` again (recorded
    as an ``unblocked`` event); False if another process drives it or it changed meanwhile."""
    owner = make_owner()
    try:
        lease = store.acquire_lease(rec.run_id, owner, _LEASE_SECONDS)
    except LeaseHeld:
        return False
    try:
        current = store.get_run(rec.run_id)
        if current is None or current.status != "blocked":
            return False
        data = {"message": "agentrt upgrade: it resumes with the code loaded now", "blocked": rec.blocked}
        store.reopen_run(rec.run_id, owner, ("unblocked", "info", data), epoch=lease.epoch)
        return True
    finally:
        store.release_lease(rec.run_id, owner)


def _damaged_report(rec: RunRecord) -> RunReport:
    """A run whose stored row is damaged is judged blocked: nothing is moved until it is repaired."""
    column, why = rec.damaged or ("?", "?")
    return RunReport(
        rec.run_id,
        Verdict.BLOCKED,
        f"damaged: column {column}: {why}; its stored row must be repaired before it can go on",
        (),
    )


def _history_refused(store: Store, rec: RunRecord, checkpoint: tuple[int, bytes]) -> str | None:
    """Why the run's newest checkpoint is not one this store sealed as its newest (copied from another
    store, or a rolled-back history: see ``agentrt._runtime.history``), or None."""
    seq, blob = checkpoint
    seal = seal_for(store, "checkpoint", rec.run_id, seq)
    try:
        seal.requirement().check(unpack(blob, seal.ring.read, seal.ring.source))
        check_history(store, rec, checkpoint)
        check_chain(store, rec.run_id, seq, blob)
    except CorruptBlob as exc:
        return f"checkpoint {seq} is refused: {exc}"
    return None


def _upgrade_run(store: Store, rec: RunRecord, dry_run: bool) -> RunReport:
    if rec.damaged is not None:
        return _damaged_report(rec)
    checkpoint = store.latest_checkpoint(rec.run_id)
    if checkpoint is None:
        return RunReport(
            rec.run_id, Verdict.UNCHANGED, "not started yet: it will start with the new code", ()
        )
    seq, blob = checkpoint
    refused = _history_refused(store, rec, checkpoint)
    if refused is not None:  # an upgrade signs the moved checkpoint: it must not launder a foreign one
        return RunReport(rec.run_id, Verdict.BLOCKED, refused, (), seq)
    try:
        load_agent(rec.agent)  # imports the agent's module: its new code and its @agentrt.migrate functions
    except Exception as exc:
        return RunReport(
            rec.run_id, Verdict.BLOCKED, f"the agent {rec.agent!r} cannot be loaded: {exc}", (), seq
        )
    ring = keyring_for_store(store)
    try:
        report = judge(blob, keys=ring.read)
    except AgentrtError as exc:
        return RunReport(rec.run_id, Verdict.BLOCKED, f"checkpoint {seq} cannot be read: {exc}", (), seq)
    if report.restarts:
        return _restart_run(store, rec, seq, blob, report, ring, dry_run)
    frames = report.frames
    reason = _run_reason(report.verdict, frames)
    if report.verdict is not Verdict.MIGRATES:
        return RunReport(rec.run_id, report.verdict, reason, frames, seq)
    moved: list[MovedFrame] = []
    try:
        # a dry run moves it too (in memory): "migrates" is proven
        bind = checkpoint_bind(store, rec.run_id, seq, predecessor(store, rec.run_id, seq, blob))
        new_blob = migrate(blob, report, ring=ring, bind=bind, moved=moved)
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
    data = _record(report, frames, moved, "moved", blob, new_blob)
    data["message"] = "moved to the new code: " + _moves_text(frames)
    try:
        _write(store, rec, seq, blob, seq, new_blob, data)
    except LeaseHeld as exc:
        return RunReport(
            rec.run_id, Verdict.MIGRATES, f"not applied: another process drives the run ({exc})", frames, seq
        )
    return RunReport(rec.run_id, Verdict.MIGRATES, reason, frames, seq, applied=True)


def _restart_run(
    store: Store, rec: RunRecord, seq: int, blob: bytes, report: BlobReport, ring: Keyring, dry_run: bool
) -> RunReport:
    need = report.restarts[0]
    try:
        plan = plan_restart(store, rec.run_id, seq, report, ring)
    except AgentrtError as exc:
        plan = f"an earlier checkpoint cannot be read: {exc}"
    if isinstance(plan, str):
        frames = tuple(
            attrs.evolve(f, verdict=Verdict.BLOCKED, reason=f"{f.reason}; {plan}") if f is need.frame else f
            for f in report.frames
        )
        return RunReport(rec.run_id, Verdict.BLOCKED, f"{need.frame.function}: {plan}", frames, seq)
    how = _restart_text(plan)
    frames = tuple(
        attrs.evolve(f, verdict=Verdict.MIGRATES, reason=how) if f is need.frame else f for f in report.frames
    )
    reason = f"{need.frame.function}: {how}"
    if dry_run:
        return RunReport(rec.run_id, Verdict.MIGRATES, reason, frames, seq)
    data = _record(plan.report, plan.report.frames, list(plan.moved), "restarted", blob, plan.blob)
    data.update(
        {
            "message": f"restarted {need.frame.function}: {how}",
            "restart": {
                "function": need.frame.function,
                "from_seq": seq,
                "from_site": need.frame.site,
                "safe_point": plan.safe_point,
                "site": plan.site,
                "new_site": plan.new_site,
                "withdrawn": list(plan.withdrawn),
            },
        }
    )
    try:
        _write(store, rec, seq, blob, plan.seq, plan.blob, data, plan)
    except LeaseHeld as exc:
        return RunReport(
            rec.run_id, Verdict.MIGRATES, f"not applied: another process drives the run ({exc})", frames, seq
        )
    return RunReport(rec.run_id, Verdict.MIGRATES, reason, frames, seq, applied=True)


def _restart_text(plan: Restart) -> str:
    asked = ", ".join(f"seq {w['seq']} ({(w['request'] or {}).get('kind', '?')})" for w in plan.withdrawn)
    return (
        f"restarts at checkpoint {plan.safe_point}, its last completed step ({plan.site} -> "
        f"{plan.new_site or 'the same await'} in the new code), as checkpoint {plan.seq}; "
        + (f"withdraws what it asked since: {asked}" if asked else "nothing was asked since")
    )


def _record(
    report: BlobReport,
    frames: tuple[FrameReport, ...],
    moved: list[MovedFrame],
    how: str,
    old_blob: bytes,
    new_blob: bytes,
) -> dict[str, Any]:
    """The ``upgrade`` event's data: what moved, how, and the blob it replaced."""
    digests = {f"{i.module}:{i.qualname}": i.digest for i in report.identities}
    moves = []
    for move in moved:
        old_digest = digests.get(move.function, "")
        new_digest = next((f.new_digest for f in frames if f.function == move.function and f.new_digest), "")
        moves.append({**move.as_json(), "old_digest": old_digest, "new_digest": new_digest})
    return {
        "how": how,
        "frames": [
            {**frame.as_json(), "new_digest": frame.new_digest}
            for frame in frames
            if frame.verdict is not Verdict.UNCHANGED
        ],
        "moves": moves,
        "old_blob_sha256": hashlib.sha256(old_blob).hexdigest(),
        "old_size_bytes": len(old_blob),
        "size_bytes": len(new_blob),
    }


def _moves_text(frames: tuple[FrameReport, ...]) -> str:
    changed = [f for f in frames if f.verdict is not Verdict.UNCHANGED]
    return "; ".join(f"{f.function} {short(f.digest)} -> {short(f.new_digest)}" for f in changed)


def _run_reason(verdict: Verdict, frames: tuple[FrameReport, ...]) -> str:
    if verdict is Verdict.UNCHANGED:
        return "no code it is suspended in changed"
    worst = [frame for frame in frames if frame.verdict is verdict]
    return "; ".join(f"{frame.function}: {frame.reason}" for frame in worst)


def _write(
    store: Store,
    rec: RunRecord,
    seq: int,
    old_blob: bytes,
    new_seq: int,
    new_blob: bytes,
    data: dict[str, Any],
    restart: Restart | None = None,
) -> None:
    """Write the moved checkpoint under the run's lease, if the run is still where it was judged."""
    owner = make_owner()
    lease = store.acquire_lease(rec.run_id, owner, _LEASE_SECONDS)
    try:
        current = store.latest_checkpoint(rec.run_id)
        if current is None or current[0] != seq or current[1] != old_blob:
            raise LeaseHeld(rec.run_id, "a process that checkpointed the run meanwhile", 0.0)
        if restart is not None:
            pending, journal = restart.pending, restart.journal
        else:
            kept = next((c.pending for c in store.list_checkpoints(rec.run_id) if c.seq == seq), None)
            pending, journal = (kept if kept is not None else rec.pending), ()
        store.rewrite_checkpoint(
            rec.run_id,
            owner,
            new_seq,
            new_blob,
            pending,
            (UPGRADE_EVENT, "info", data),
            journal=journal,
            code_required=code_requirement(new_blob),
            epoch=lease.epoch,
        )
    finally:
        store.release_lease(rec.run_id, owner)
