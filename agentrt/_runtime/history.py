"""Before a run is driven: is what the store holds of it the history this store's key signed?

The store writes each run's signed head (``agentrt.stores._identity``) with every change of its
newest checkpoint or of its end; each checkpoint's signature covers the digest of the one before
it (its chain).  :func:`check_history` holds a run about to be driven against both, so a store
writer without the key cannot make a run repeat work it has done:

- deleting the newest checkpoint (and its journal rows) and rewinding the run row leaves a head
  naming the deleted checkpoint;
- reviving a finished run (``completed`` back to ``running``) leaves a head that says finished;
- editing, dropping or copying in a head (from another run or store) fails its signature;
- swapping the checkpoint before the newest one for another genuine one of the run breaks the
  newest one's chain.

Journal rows need no chain of their own: each is bound to its run, sequence, member and store,
so it cannot be moved; a result is read back only at the newest checkpoint's sequence, where
deleting it is the same as the crash before it was journaled (the call is made again, as after
any crash: tool calls are at least once); and a result a later checkpoint consumed is read only
by that older checkpoint, which the head keeps from being made the newest again.
"""

from __future__ import annotations

import json

from agentrt._codec import PREFIX_SIZE_BYTES
from agentrt.exceptions import HistoryRefused
from agentrt.keys import keyring_for_store
from agentrt.stores import _identity
from agentrt.stores.base import RunRecord, Store

__all__ = ["check_chain", "check_history", "checkpoint_chain", "newest_digest", "predecessor"]

_FIX = (
    "Nothing was run or changed. If the store was restored from a backup on purpose, look at the "
    "run (`agentrt show {run}`) and continue it from what the store holds with `agentrt retry {run}`"
)


def checkpoint_chain(blob: bytes) -> str | None:
    """The chain a checkpoint's header names (hex), or None.  Read without verifying: call it on a blob
    whose signature was checked (its restore succeeded), so the header is the signed one."""
    try:
        header_len = int.from_bytes(blob[8:PREFIX_SIZE_BYTES], "little")
        header = json.loads(blob[PREFIX_SIZE_BYTES : PREFIX_SIZE_BYTES + header_len])
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    chain = header.get("chain") if isinstance(header, dict) else None
    return chain if isinstance(chain, str) else None


def check_history(
    store: Store, rec: RunRecord, checkpoint: tuple[int, bytes] | None, *, finished_ok: bool = False
) -> None:
    """Refuse (:class:`HistoryRefused`) a run whose row and newest ``checkpoint`` are not what this
    store signed last; a store without an identity (a third-party one) is not checked.
    ``finished_ok`` (``agentrt move``): a finished run is fine, if its row says so too."""
    store_id = getattr(store, "store_id", None)
    if not isinstance(store_id, str):
        return
    run_id = rec.run_id
    head = _identity.check_head(keyring_for_store(store), store_id, run_id, rec.head)
    if isinstance(head, str):
        raise _refused(store, run_id, head)
    seq, digest = (checkpoint[0], _identity.blob_digest(checkpoint[1]).hex()) if checkpoint else (0, "")
    if head.finished and not (finished_ok and rec.finished):
        raise _refused(store, run_id, f"its signed head says it finished (at checkpoint {head.seq}), and "
                       f"its row says {rec.status}: a finished run was revived")  # fmt: skip
    if head.seq != seq or head.digest != digest:
        held = f"checkpoint {seq}" if checkpoint else "no checkpoint"
        raise _refused(
            store,
            run_id,
            f"its signed head names checkpoint {head.seq}, and the store holds {held} as its newest: "
            "checkpoints were deleted or replaced and the run row rewound",
        )


def check_chain(store: Store, run_id: str, seq: int, blob: bytes) -> None:
    """Refuse a restored checkpoint whose chain names another predecessor than the one the store
    holds (when it still holds one: pruning drops old checkpoints)."""
    chain = checkpoint_chain(blob)
    if chain is None or seq <= 1:
        return
    before = store.get_checkpoint(run_id, seq - 1)
    if before is not None and _identity.blob_digest(before).hex() != chain:
        raise _refused(
            store,
            run_id,
            f"checkpoint {seq} follows another checkpoint {seq - 1} than the one the store holds: "
            f"checkpoint {seq - 1} was swapped",
        )


def newest_digest(store: Store, run_id: str) -> bytes | None:
    """The digest of the run's newest checkpoint (what a checkpoint written after it chains to)."""
    newest = store.latest_checkpoint(run_id)
    return _identity.blob_digest(newest[1]) if newest is not None else None


def predecessor(store: Store, run_id: str, seq: int, blob: bytes) -> str | bytes | None:
    """The chain of a checkpoint that replaces ``blob`` at ``seq`` (``agentrt upgrade``): the one it
    names, else (a blob from before chains) the digest of the checkpoint before it, if kept."""
    chain = checkpoint_chain(blob)
    if chain is not None:
        return chain
    before = store.get_checkpoint(run_id, seq - 1) if seq > 1 else None
    return _identity.blob_digest(before) if before is not None else None


def _refused(store: Store, run_id: str, why: str) -> HistoryRefused:
    return HistoryRefused(
        f"run {run_id!r} in store {store.location} is not driven: {why}. {_FIX.format(run=run_id)}"
    )
