"""Restarting a frame at an earlier safe point: ``@agentrt.migrate(..., restart=True)``.

A frame whose await cannot be moved to the new code (the await was removed, the value
stack around it changed, a live local is missing) can restart at *its last completed
step*: the newest earlier checkpoint at which that frame waited at an await the new
code has, and whose answer is journaled.  That checkpoint's chain is moved to the new
code -- the restart migration maps the frame's locals *as they were there* -- and
written as a new checkpoint after every existing one, with that step's answers
journaled again beside it, so the run continues by receiving them; what ran after
that step is run again, by the new code.  The rules, checked on the frame records
(nothing is built until the move itself):

1. *The same frame.* The safe point's frame records up to the restarting frame -- every
   frame around it, and what they hold -- are those of the newest checkpoint: the same
   code, at the same await, with the same locals bound; the same holds for every
   checkpoint in between.  Otherwise the frame was not yet in the call it waits in now.
2. *A completed step.* The frame waits there at an await the new code has (the
   migration's mapping applies), and the request of that checkpoint has its answer in
   the journal.  Checkpoints must be kept: retention may have pruned the safe point.
3. *The whole chain moves*: the frames around it as they are, the frames below it
   (inside its await then) automatically or by their own migrations.  The frames below
   it *now* are dropped: they ran after the safe point.
4. *What was asked since.*  Every request issued after the safe point is a question
   (``task.ui.ask``) or a timer: those are withdrawn (listed in the upgrade record, kept
   in the journal; a late reply to one is refused, as for any run not waiting on it).
   A tool call, model call or sub-run issued since may have run, and the new code would
   make it again under another idempotency key (the key is ``RUN:SEQ``, and the run goes
   on at new sequence numbers): such a run is refused, by name.
"""

from __future__ import annotations

from typing import Any  # Any: pending summaries are JSON

import attrs

from agentrt._codec import CodeIdentity
from agentrt._frames import MovedFrame, Verdict
from agentrt._frames import ParsedFrameRecord as FrameRecord
from agentrt._runtime.encoding import checkpoint_bind, decode_result, encode_result
from agentrt._runtime.history import newest_digest
from agentrt._upgrade._blob import BlobReport, RestartNeed, frame_records, judge, migrate
from agentrt.keys import Keyring
from agentrt.stores.base import Store, is_answered

__all__ = ["Restart", "plan_restart"]

#: Requests that may be withdrawn when a run restarts before them: nothing ran for them.
_WITHDRAWABLE = frozenset({"ask", "sleep"})


@attrs.frozen
class Restart:
    """A restart worked out (and the move done, in memory): what ``agentrt upgrade`` writes."""

    need: RestartNeed
    safe_point: int  # the checkpoint it restarts at
    site: str  # the restarting frame's site there (old code), and in the new code
    new_site: str
    seq: int  # the new checkpoint: one after the newest
    blob: bytes  # the safe point's chain moved to the new code, bound to ``seq``
    pending: Any  # the safe point's pending summary
    journal: tuple[tuple[int, bool, bytes], ...]  # its answers, sealed for ``seq``
    report: BlobReport  # the safe point judged
    moved: tuple[MovedFrame, ...]
    withdrawn: tuple[dict[str, Any], ...]  # requests issued after it: {"seq", "request", "answered"}


def _key(record: FrameRecord | None, identities: tuple[CodeIdentity, ...]) -> object:
    if record is None or not 0 <= record.code_index < len(identities):
        return None
    return (identities[record.code_index], record.kind, record.status, record.bound)


def plan_restart(store: Store, run_id: str, seq: int, report: BlobReport, ring: Keyring) -> Restart | str:
    """The restart of the outermost frame in ``report.restarts`` (``report`` judges checkpoint ``seq``,
    the run's newest), or why there is none (the rules of the module docstring)."""
    need = report.restarts[0]
    name = need.frame.function
    position = need.position
    around = [_key(r, report.identities) for r in report.records[:position]]
    kept = {c.seq: c for c in store.list_checkpoints(run_id)}
    tried: list[str] = []
    at = seq - 1
    while at >= 1:
        if at not in kept:
            pruned = f"checkpoint {at} is no longer kept (the store keeps the newest {store.retention})"
            return _refusal(name, tried, pruned)
        blob = store.get_checkpoint(run_id, at)
        if blob is None:
            return _refusal(name, tried, f"checkpoint {at} is no longer kept")
        identities, raw = frame_records(blob, ring.read)
        records = [FrameRecord.parse(args) for args in raw]
        if len(records) <= position or [_key(r, identities) for r in records[:position]] != around:
            return _refusal(name, tried, f"at checkpoint {at} the frames around it were elsewhere")
        record = records[position]
        if (
            record is None
            or _key(record, identities) is None
            or identities[record.code_index] != need.identity
        ):
            return _refusal(name, tried, f"at checkpoint {at} it had not been called yet")
        judged = judge(blob, keys=ring.read, restart_at=(position, need.migration))
        frame = judged.at[position]
        if frame.verdict > Verdict.MIGRATES:
            tried.append(f"checkpoint {at} ({frame.site}): {frame.reason}")
            at -= 1
            continue
        return _at_safe_point(store, run_id, seq, at, blob, judged, need, kept, ring, position)
    return _refusal(name, tried, "it has no earlier completed step: it waited there since it was called")


def _refusal(name: str, tried: list[str], last: str) -> str:
    looked = f"; looked back at {'; '.join(tried)}" if tried else ""
    return f"no earlier checkpoint of {name} qualifies as a safe point: {last}{looked}"


def _at_safe_point(
    store: Store,
    run_id: str,
    seq: int,
    at: int,
    blob: bytes,
    judged: BlobReport,
    need: RestartNeed,
    kept: dict[int, Any],
    ring: Keyring,
    position: int,
) -> Restart | str:
    where = f"checkpoint {at} is the safe point of {need.frame.function}"
    if judged.verdict > Verdict.MIGRATES:
        blocked = "; ".join(
            f"{f.function}: {f.reason}" for f in judged.frames if f.verdict > Verdict.MIGRATES
        )
        return f"{where}, but its chain does not move to the new code: {blocked}"
    answers = store.get_results(run_id, at)
    pending = kept[at].pending
    if not is_answered(pending, {idx: ok for idx, (ok, _blob) in answers.items()}):
        return f"{where}, but its request has no journaled answer (the run left it by a cancel or an error)"
    withdrawn: list[dict[str, Any]] = []
    for later in range(at + 1, seq + 1):
        summary = kept[later].pending if later in kept else None
        members = (
            summary.get("requests", [])
            if isinstance(summary, dict) and summary.get("kind") == "gather"
            else [summary]
        )
        answered = bool(store.get_results(run_id, later))
        for member in members:
            kind = member.get("kind") if isinstance(member, dict) else None
            if kind not in _WITHDRAWABLE:
                what = f"{kind} {member.get('name', '')}".strip() if isinstance(member, dict) else "a request"
                state = ", answered" if answered else ""
                return (
                    f"{where}, but {what} was issued after it (seq {later}{state}): "
                    "it may have run, and the new code would make it again under another idempotency key; "
                    "let the run pass this point with the old code, or migrate it without restart"
                )
        withdrawn.append({"seq": later, "request": summary, "answered": answered})
    new_seq = seq + 1
    moved: list[MovedFrame] = []
    try:
        bind = checkpoint_bind(store, run_id, new_seq, newest_digest(store, run_id))
        new_blob = migrate(blob, judged, ring=ring, bind=bind, moved=moved)
        journal = []
        for idx, (ok, data) in sorted(answers.items()):
            ok_now, value = decode_result(store, run_id, at, idx, ok, data)
            journal.append((idx, ok_now, encode_result(store, run_id, new_seq, idx, ok_now, value)))
    except Exception as exc:
        return f"{where}, but moving it failed: {type(exc).__name__}: {exc}"
    site = judged.at[position].site
    new_site = next(
        (m.new_site for m in moved if m.function == need.frame.function and m.old_site == site), ""
    )
    return Restart(
        need,
        at,
        site,
        new_site,
        new_seq,
        new_blob,
        pending,
        tuple(journal),
        judged,
        tuple(moved),
        tuple(withdrawn),
    )
