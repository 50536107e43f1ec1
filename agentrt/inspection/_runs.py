"""Dumping a run's checkpoint from a store: what ``agentrt dump RUN`` and ``GET /runs/{id}/dump`` show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrt.exceptions import AgentrtError, CheckpointNotFound, RunNotFound

if TYPE_CHECKING:
    from agentrt.inspection._model import Dump
    from agentrt.stores.base import RunRecord, Store

__all__ = ["dump_run"]


def _import_agent_module(spec: str) -> None:
    """Import the module of the run's agent (``MODULE:ATTR``), so its code can be resolved."""
    if spec.startswith("<local>:"):
        return  # not importable by name; the blob's modules must be allowed explicitly
    from agentrt._sdk.agent import load_agent

    load_agent(spec)


def _load_checkpoint(store: Store, run_id: str, seq: int | None) -> tuple[RunRecord, int, bytes, bool]:
    rec = store.get_run(run_id)
    if rec is None:
        raise RunNotFound(run_id, store.location)
    if seq is None:
        latest = store.latest_checkpoint(run_id)
        if latest is None:
            raise CheckpointNotFound(_no_checkpoint(rec))
        return rec, latest[0], latest[1], True
    blob = store.get_checkpoint(run_id, seq)
    if blob is None:
        from agentrt.inspection._fork import _missing_checkpoint

        raise CheckpointNotFound(_missing_checkpoint(store, run_id, seq))
    latest = store.latest_checkpoint(run_id)
    return rec, seq, blob, latest is not None and latest[0] == seq


def _no_checkpoint(rec: RunRecord) -> str:
    """Why a run has no checkpoint to dump, in the words of its status."""
    where = f"run {rec.run_id!r} has no checkpoint"
    if rec.status == "failed":
        error = rec.error or {}
        return (
            f"{where}: it failed before its first checkpoint was stored, so there are no frames to "
            f"dump; its error: {error.get('type')}: {error.get('message')}"
        )
    if rec.status == "blocked":
        finding = rec.blocked or {}
        return (
            f"{where}: it was blocked before its first checkpoint was stored, so there are no frames to "
            f"dump; why: {finding.get('message')}"
        )
    if rec.status == "completed":
        return f"{where}: it completed without stopping at an await that needed one"
    if rec.status == "cancelled":
        return f"{where}: it was cancelled before its first checkpoint was stored"
    if rec.status == "queued":
        return f"{where}: it is queued and has not started yet"
    return f"{where} yet: it has not reached its first await"


def dump_run(
    store: Store, run_id: str, seq: int | None, allow: list[str], allow_unsigned: bool = False
) -> Dump:
    """The frame dump of checkpoint ``seq`` (None: the newest) of ``run_id`` in ``store``.

    The agent's module is imported first so its code can be resolved; when that fails the
    dump still shows the header, and says why the frames cannot be shown.  The dump carries
    the run's upgrade history (``agentrt upgrade``'s records).  Raises ``RunNotFound`` /
    ``CheckpointNotFound``.
    """
    from agentrt.inspection._build import dump_blob
    from agentrt.inspection._model import Source

    rec, seq, blob, latest = _load_checkpoint(store, run_id, seq)
    import_error = None
    try:
        _import_agent_module(rec.agent)
    except AgentrtError as exc:  # the header can still be shown, and why the frames cannot
        import_error = str(exc)
    from agentrt.keys import keyring_for_store

    dump = dump_blob(
        blob,
        Source("run", run_id, seq, latest, agent=rec.agent),
        allow_modules=allow,
        allow_unsigned=allow_unsigned,
        keyring=keyring_for_store(store),
        bind=("checkpoint", run_id, seq),
    )
    import attrs

    from agentrt.inspection._upgrades import upgrade_history

    if import_error and dump.frames is None:
        dump = attrs.evolve(dump, frames_error=f"{import_error} ({dump.frames_error})")
    return attrs.evolve(dump, upgrades=upgrade_history(store, run_id))
