"""``Runtime.retry``: restart a failed or blocked run from one of its checkpoints, on the code loaded now.

A retry never rewrites history.  The chosen checkpoint ``K`` (the newest by default) is restored
with the code loaded now -- which proves that code can go on with it -- and written again as a new
checkpoint after the newest one (blobs and journal entries are signed for their run *and
sequence*, so an old blob cannot simply be moved).  The results journaled at ``K`` that succeeded
are journaled again at the new checkpoint, so the calls that completed are not made again; the
calls that failed are made again (that is what a retry is for), as new calls (their idempotency
key names the new sequence, and a sub-agent is a new child run).  The run becomes ``running``,
its error or finding cleared, and the retry is recorded as a ``retry`` event at the new checkpoint.

A run with no checkpoint (it failed or was blocked before its first await) restarts from its input.

What cannot be retried, with why and what to do instead (:class:`~agentrt.exceptions.CannotRetry`):
a run that is not ``failed`` nor ``blocked``; a sub-run whose parent already received its failure
(retry the parent); a checkpoint the code loaded now cannot restore.
"""

from __future__ import annotations

from typing import Any  # Any: the retry event's data is JSON

import attrs

from agentrt._codec import code_requirement
from agentrt._runtime.encoding import checkpoint_bind, decode_result, encode_result
from agentrt.exceptions import CannotRetry, CheckpointNotFound
from agentrt.keys import keyring_for_store
from agentrt.lowlevel import Machine
from agentrt.stores import blob_digest
from agentrt.stores.base import RunRecord, Store

__all__ = [
    "CLI_WORDS",
    "HTTP_WORDS",
    "RETRYABLE",
    "RETRY_EVENT",
    "RUNTIME_WORDS",
    "RetryWords",
    "check_retryable",
    "pick_checkpoint",
    "unrestorable",
    "write_retry",
]

#: The statuses a run may be retried from.
RETRYABLE = ("failed", "blocked")
RETRY_EVENT = "retry"


@attrs.frozen
class RetryWords:
    """How an error of a retry names the fix, in the words of the API it came through."""

    from_seq: str
    resume: str
    reply: str
    fork: str


RUNTIME_WORDS = RetryWords(
    from_seq="from_seq=",
    resume="Runtime.resume(run_id)",
    reply="Runtime.reply(run_id, value)",
    fork="agentrt fork",
)
CLI_WORDS = RetryWords(
    from_seq="--from", resume="agentrt resume RUN", reply="agentrt reply RUN JSON", fork="agentrt fork"
)
HTTP_WORDS = RetryWords(
    from_seq='"from_seq"',
    resume="a worker (the server is one)",
    reply="POST /runs/{run_id}/reply",
    fork="agentrt fork",
)


def _instead(status: str, words: RetryWords) -> str:
    return {
        "waiting": f"it waits; answer it with {words.reply}, or let its timer or sub-run finish",
        "running": f"it is running or interrupted; {words.resume} continues it",
        "queued": "it has not started; a worker starts it",
        "completed": f"it completed; {words.fork} runs it again from a checkpoint",
        "cancelled": f"it was cancelled on purpose; {words.fork} runs it again from a checkpoint",
    }.get(status, "")


def check_retryable(store: Store, rec: RunRecord, words: RetryWords = RUNTIME_WORDS) -> None:
    """Raise :class:`CannotRetry` unless ``rec`` may be retried (see the module docstring)."""
    if rec.status not in RETRYABLE:
        instead = _instead(rec.status, words)
        raise CannotRetry(
            rec.run_id,
            f"run {rec.run_id!r} is {rec.status}; only a failed or blocked run can be retried"
            + (f" ({instead})" if instead else ""),
        )
    if rec.parent_id is not None and rec.parent_seq is not None and rec.status == "failed":
        delivered = store.get_results(rec.parent_id, rec.parent_seq)
        if (rec.parent_idx or 0) in delivered:
            raise CannotRetry(
                rec.run_id,
                f"run {rec.run_id!r} is a sub-run of {rec.parent_id!r}, which already received its failure "
                f"(at checkpoint {rec.parent_seq}); retry the parent {rec.parent_id!r} instead",
            )


def unrestorable(run_id: str, seq: int, exc: Exception, words: RetryWords = RUNTIME_WORDS) -> CannotRetry:
    """The error of a retry from a checkpoint the code loaded now cannot restore."""
    return CannotRetry(
        run_id,
        f"checkpoint {seq} of run {run_id!r} cannot be restored by the code loaded now: {exc}. Put the old "
        f"code back, pick another checkpoint with {words.from_seq}, or move the run to the new code with "
        "agentrt upgrade",
    )


def pick_checkpoint(
    store: Store, rec: RunRecord, from_seq: int | None, words: RetryWords = RUNTIME_WORDS
) -> int | None:
    """The checkpoint a retry restarts from: ``from_seq`` if kept, else the newest; None: there is none."""
    kept = [c.seq for c in store.list_checkpoints(rec.run_id)]
    if from_seq is None:
        return max(kept) if kept else None
    if isinstance(from_seq, bool) or not isinstance(from_seq, int):
        raise TypeError(f"{words.from_seq} must be a checkpoint number (an int), got {from_seq!r}")
    if from_seq not in kept:
        which = f"it keeps checkpoints {kept[0]}..{kept[-1]}" if kept else "it has no checkpoint"
        raise CheckpointNotFound(
            f"run {rec.run_id!r} has no checkpoint {from_seq} ({which}); pick one of those with "
            f"{words.from_seq}, or leave {words.from_seq} out to retry from the newest"
        )
    return from_seq


def write_retry(
    store: Store,
    rec: RunRecord,
    owner: str,
    epoch: int,
    from_seq: int | None,
    machine: Machine | None,
) -> int:
    """Make ``rec`` (whose lease ``owner`` holds at ``epoch``) ``running`` again from checkpoint
    ``from_seq``, restored as ``machine`` (None: from its input); returns the seq it goes on from."""
    data: dict[str, Any] = {
        "from_seq": from_seq,
        "previous_status": rec.status,
        "message": f"retried from checkpoint {from_seq}"
        if from_seq is not None
        else "retried from its input",
    }
    if rec.error is not None:
        data["error"] = {k: rec.error.get(k) for k in ("type", "message", "code")}
    if rec.blocked is not None:
        data["blocked"] = rec.blocked
    if from_seq is None or machine is None:
        store.reopen_run(rec.run_id, owner, (RETRY_EVENT, "info", data), epoch=epoch)
        return rec.seq
    infos = store.list_checkpoints(rec.run_id)
    new_seq = max([rec.seq, *(c.seq for c in infos)]) + 1
    newest = store.latest_checkpoint(rec.run_id)
    chain = blob_digest(newest[1]) if newest is not None else None  # the history goes on after it
    blob = machine.get_bound(
        keyring_for_store(store).write, checkpoint_bind(store, rec.run_id, new_seq, chain)
    )
    machine.discard()
    pending = next((c.pending for c in infos if c.seq == from_seq), None)
    journal = []
    for idx, (ok, raw) in sorted(store.get_results(rec.run_id, from_seq).items()):
        if not ok:
            continue  # a call that failed is made again
        _ok, value = decode_result(store, rec.run_id, from_seq, idx, ok, raw)
        journal.append((idx, True, encode_result(store, rec.run_id, new_seq, idx, True, value)))
    data["seq"] = new_seq
    data["reused_results"] = [idx for idx, _ok, _blob in journal]
    store.rewrite_checkpoint(
        rec.run_id,
        owner,
        new_seq,
        blob,
        pending,
        (RETRY_EVENT, "info", data),
        journal=journal,
        code_required=code_requirement(blob),
        epoch=epoch,
    )
    return new_seq
