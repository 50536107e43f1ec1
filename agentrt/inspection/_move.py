"""``agentrt move RUN --from S1 --to S2``: the deliberate way a run goes to another store.

Every blob is sealed for its store's identity (``agentrt.stores._identity``), so a checkpoint
copied from one store into another is refused there, even under the same key.  A move is the
operation that may do it, because it holds both stores' keys: it verifies each blob of the run
(checkpoints, journal, its error) with the source's keys and binding, and signs it again for the
target (the payload byte for byte: nothing is decoded, so the agent's code need not be
importable here); each checkpoint's chain is made again in the target.

What moves: the run and its sub-runs (all of them, parents first), with their status, input,
output or error, pending request, checkpoints the source still keeps, journal, events, event
stream, tenant, priority, deadline and model usage (carried on the first journaled result).  Not
moved: the checkpoints ``agentrt upgrade`` replaced (``agentrt diff`` of an upgrade stays with
the source), a pending cancel request, the lease.

The source: every unfinished run moved is finished there as ``cancelled`` with the error
``{"type": "RunMoved", "code": "moved", ...}`` naming the target (so no worker of the source
drives it again, and its signed head says it finished); a finished run is left as it is, as
history.  The target is written first, the source marked after: a move stopped in between (a
crash) leaves both, the source still running -- the target's copy then reads as a run that
exists, and a second move is refused until it is looked at.
"""

from __future__ import annotations

from typing import Any  # Any: run inputs and outputs are JSON

import attrs

from agentrt._codec import Bind, code_requirement, reseal, unpack
from agentrt._runtime.encoding import seal_for, store_id_of
from agentrt._runtime.history import check_history
from agentrt.exceptions import CorruptBlob, RunExists, RunNotFound, StoreError
from agentrt.keys import keyring_for_store
from agentrt.stores import blob_digest
from agentrt.stores.base import FINAL, NewRun, RunRecord, Store, make_owner

__all__ = ["MoveResult", "move_run"]

_LEASE_SECONDS = 600.0
#: how many runs one move takes at most (a run and its sub-runs)
MAX_RUNS = 10_000


@attrs.frozen
class MoveResult:
    run_id: str
    runs: tuple[str, ...]  # the run and its sub-runs, parents first
    source: str
    target: str
    target_store_id: str | None


@attrs.frozen
class _Copy:
    """One run as it will be written to the target: every blob already sealed for it."""

    rec: RunRecord
    tenant: str | None
    checkpoints: tuple[tuple[int, bytes, Any], ...]  # (seq, blob, pending)
    results: tuple[tuple[int, int, bool, bytes], ...]  # (seq, idx, ok, blob)
    error_blob: bytes | None
    events: tuple[tuple[int, int, str, str | None, Any], ...]
    stream: tuple[tuple[str, Any], ...]


def _tree(store: Store, run_id: str) -> list[RunRecord]:
    rec = store.get_run(run_id)
    if rec is None:
        raise RunNotFound(run_id, store.location)
    out, todo, seen = [], [rec], {rec.run_id}
    while todo:
        current = todo.pop(0)
        out.append(current)
        for child in store.children(current.run_id):
            if child.run_id not in seen:
                seen.add(child.run_id)
                todo.append(child)
        if len(out) > MAX_RUNS:
            raise StoreError(f"run {run_id!r} has more than {MAX_RUNS} sub-runs; agentrt move takes fewer")
    return out


def _resealed(
    source: Store,
    target: Store,
    blob: bytes,
    kind: str,
    run_id: str,
    seq: int | None,
    chain: bytes | None = None,
) -> bytes:
    """``blob`` checked as ``kind`` of ``run_id`` at ``seq`` in ``source``, sealed for ``target``."""
    seal = seal_for(source, kind, run_id, seq)
    try:
        envelope = unpack(blob, seal.ring.read, seal.ring.source)
        seal.requirement().check(envelope)
    except CorruptBlob as exc:
        raise CorruptBlob(
            f"agentrt move: the {kind} of run {run_id!r} at sequence {seq} in the source store "
            f"{source.location} does not verify with the source's keys and identity ({exc}). A move "
            "needs the key of the store it reads (its key file, or AGENTRT_BLOB_KEY) and the key of "
            "the store it writes; nothing was written"
        ) from None
    bind: Bind = seal_for(target, kind, run_id, seq, chain).bind
    return reseal(blob, seal.ring.read, seal.ring.source, keyring_for_store(target).write, bind)


def _copy(source: Store, target: Store, rec: RunRecord) -> _Copy:
    run_id = rec.run_id
    checkpoints, chain = [], None
    for info in source.list_checkpoints(run_id):
        blob = source.get_checkpoint(run_id, info.seq)
        if blob is None:
            continue  # pruned meanwhile
        new = _resealed(source, target, blob, "checkpoint", run_id, info.seq, chain)
        chain = blob_digest(new)
        checkpoints.append((info.seq, new, info.pending))
    results = []
    for seq in sorted({rec.seq, *(c[0] for c in checkpoints)}):
        for idx, (ok, blob) in sorted(source.get_results(run_id, seq).items()):
            kind = f"value#{idx}" if ok else f"error#{idx}"
            results.append((seq, idx, ok, _resealed(source, target, blob, kind, run_id, seq)))
    error_blob = None
    if rec.error_blob is not None:
        error_blob = _resealed(source, target, bytes(rec.error_blob), "error", run_id, None)
    # the blobs verified (the source's keys, identity, bindings): is this the history it signed last?
    check_history(source, rec, source.latest_checkpoint(run_id), finished_ok=True)
    events = tuple((e.seq, e.n, e.kind, e.level, e.data) for e in source.list_events(run_id))
    stream = tuple((e.kind, e.data) for e in source.read_stream(run_id))
    tenant = source.get_tenant(run_id)
    return _Copy(rec, tenant, tuple(checkpoints), tuple(results), error_blob, events, stream)


def _write(target: Store, copy: _Copy, owner: str) -> None:
    rec = copy.rec
    run_id = rec.run_id
    queued = rec.status == "queued" and not copy.checkpoints
    target.create_run(
        NewRun(
            run_id=run_id,
            agent=rec.agent,
            input=rec.input,
            parent_id=rec.parent_id,
            parent_seq=rec.parent_seq,
            parent_idx=rec.parent_idx,
            status="queued" if queued else "running",
            priority=rec.priority,
            owner=owner,
            ttl_seconds=_LEASE_SECONDS,
            deadline=rec.deadline,
            tenant=copy.tenant,
        )
    )
    epoch = 1  # created leased to ``owner``
    for seq, blob, pending in copy.checkpoints:
        target.save_checkpoint(
            run_id, owner, seq, blob, pending, [], epoch=epoch, code_required=code_requirement(blob)
        )
    usage: dict[str, int] | None = dict(rec.usage) or None
    for seq, idx, ok, blob in copy.results:
        target.put_result(run_id, seq, idx, ok, blob, usage, owner=owner, epoch=epoch)
        usage = None
    if copy.events:
        target.add_events(run_id, list(copy.events), owner=owner, epoch=epoch)
    for kind, data in copy.stream:
        target.append_stream(run_id, kind, data)
    if rec.status in FINAL:
        target.finish_run(
            run_id,
            owner,
            rec.status,
            output=rec.output,
            error=rec.error,
            error_blob=copy.error_blob,
            epoch=epoch,
        )
    elif rec.status == "waiting":
        target.set_waiting(run_id, owner, rec.waiting_on or "reply", rec.wake_at, [], epoch=epoch)
    elif rec.status == "blocked" and rec.blocked is not None:
        target.block_run(run_id, owner, rec.blocked, [], epoch=epoch)
    target.release_lease(run_id, owner)


def move_run(source: Store, target: Store, run_id: str) -> MoveResult:
    """Move ``run_id`` and its sub-runs from ``source`` to ``target`` (see the module docstring)."""
    source_id, target_id = store_id_of(source), store_id_of(target)
    if source_id is not None and source_id == target_id:
        raise StoreError(
            f"agentrt move: {source.location} and {target.location} are the same store (store_id "
            f"{source_id}); a run moves between two stores"
        )
    runs = _tree(source, run_id)
    for rec in runs:
        if target.get_run(rec.run_id) is not None:
            raise RunExists(
                f"agentrt move: run {rec.run_id!r} already exists in the target store {target.location}; "
                "nothing was moved. Look at it there (`agentrt show`): an earlier move that stopped, or "
                "another run with the same id"
            )
    owner = make_owner()
    held: list[str] = []
    try:
        for rec in runs:  # no worker of the source drives them while they move
            source.acquire_lease(rec.run_id, owner, _LEASE_SECONDS)
            held.append(rec.run_id)
        runs = [r for r in (source.get_run(rec.run_id) for rec in runs) if r is not None]
        copies = [_copy(source, target, rec) for rec in runs]  # every blob verified before any write
        for copy in copies:
            _write(target, copy, owner)
        moved_to = f"{target.location} (store_id {target_id})"
        for rec in runs:
            if rec.status not in FINAL:
                error = {
                    "type": "RunMoved",
                    "code": "moved",
                    "message": f"moved to store {moved_to} by agentrt move; it goes on there",
                }
                source.finish_run(rec.run_id, owner, "cancelled", error=error)
    finally:
        for held_id in held:
            source.release_lease(held_id, owner)
    return MoveResult(run_id, tuple(r.run_id for r in runs), source.location, target.location, target_id)
