"""``MemoryStore``: the in-memory twin of the SQLite store (tests, embedding, benchmarks).

Same semantics as :class:`~agentrt.stores.SqliteStore` -- leases, epochs (fencing),
claims, cancel requests -- within one process; every method holds one lock, so each
is atomic the way a store transaction is.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any  # Any: a run's input, output and pending are JSON or user values

import attrs

from agentrt.exceptions import LeaseHeld, RunExists, RunNotFound
from agentrt.keys import keyring_for_store
from agentrt.stores import _identity
from agentrt.stores.base import (
    FINAL,
    Capability,
    CheckpointInfo,
    EventRecord,
    EventRow,
    NewRun,
    ReplacedCheckpoint,
    RunRecord,
    StoreError,
    StreamEvent,
    add_usage,
    is_answered,
    lease_lost,
    take_within_limits,
)
from agentrt.stores.registry import PRUNE_AFTER_SECONDS, WorkerInfo, bounded

__all__ = ["MemoryStore"]


class MemoryStore:
    """Keeps everything in dictionaries; same semantics as :class:`SqliteStore`, within one process."""

    capabilities = frozenset({Capability.WORKER_REGISTRY})

    def __init__(self, *, retention: int | None = 100) -> None:
        self.location = "memory"
        self.retention = retention
        self._lock = threading.RLock()
        self._work = threading.Condition(self._lock)
        self._runs: dict[str, RunRecord] = {}
        self._checkpoints: dict[str, dict[int, tuple[bytes, Any, float]]] = {}
        self._replaced: dict[str, list[ReplacedCheckpoint]] = {}
        self._results: dict[tuple[str, int], dict[int, tuple[bool, bytes]]] = {}
        self._events: dict[str, dict[tuple[int, int], EventRecord]] = {}
        self._children: dict[str, list[str]] = {}
        self._stream: dict[str, list[StreamEvent]] = {}
        self._tenants: dict[str, str] = {}
        self._generation = 0  # bumped whenever new work may be runnable (wait_for_work)
        self._workers: dict[str, WorkerInfo] = {}
        #: the store's identity, sealed into every blob (random per store object; see SqliteStore)
        self.store_id = _identity.new_store_id()
        self.legacy_blobs = False

    def _signed(self, rec: RunRecord) -> RunRecord:
        """``rec`` with its signed head: its checkpoint at ``rec.seq`` (if any) and whether it finished."""
        kept = self._checkpoints.get(rec.run_id, {}).get(rec.seq)
        digest = _identity.blob_digest(kept[0]) if kept is not None else b""
        ring = keyring_for_store(self)
        head = _identity.make_head(ring, self.store_id, rec.run_id, rec.seq, digest, rec.finished)
        return attrs.evolve(rec, head=head)

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._runs)} runs)"

    def _notify(self) -> None:
        self._generation += 1
        self._work.notify_all()

    # -- runs

    def create_run(self, run: NewRun) -> RunRecord:
        with self._lock:
            if run.run_id in self._runs:
                raise RunExists(f"a run with id {run.run_id!r} already exists in {self.location}")
            now = time.time()
            rec = RunRecord(
                run_id=run.run_id,
                agent=run.agent,
                status=run.status,
                input=copy.deepcopy(run.input),
                parent_id=run.parent_id,
                parent_seq=run.parent_seq,
                parent_idx=run.parent_idx,
                created_at=now,
                updated_at=now,
                priority=run.priority,
                lease_owner=run.owner,
                lease_expires=now + run.ttl_seconds if run.owner else None,
                epoch=1 if run.owner else 0,
                deadline=run.deadline,
            )
            rec = self._runs[run.run_id] = self._signed(rec)
            self._tenants.pop(run.run_id, None)  # written with the run, never before (see SqliteStore)
            if run.tenant is not None:
                self._tenants[run.run_id] = run.tenant
            if run.parent_id is not None:
                self._children.setdefault(run.parent_id, []).append(run.run_id)
            if run.owner is None:
                self._notify()
            return rec

    def get_run(self, run_id: str) -> RunRecord | None:
        return self._runs.get(run_id)

    def _run(self, run_id: str) -> RunRecord:
        rec = self._runs.get(run_id)
        if rec is None:
            raise RunNotFound(run_id, self.location)
        return rec

    def list_runs(self, status: str | None = None, limit: int | None = None) -> list[RunRecord]:
        runs = sorted(self._runs.values(), key=lambda r: r.created_at, reverse=True)
        if status is not None:
            runs = [r for r in runs if r.status == status]
        return runs[:limit] if limit is not None else runs

    def children(self, run_id: str) -> list[RunRecord]:
        return [self._runs[c] for c in self._children.get(run_id, [])]

    # -- leases

    def acquire_lease(self, run_id: str, owner: str, ttl_seconds: float) -> RunRecord:
        with self._lock:
            rec = self._run(run_id)
            now = time.time()
            if rec.lease_owner not in (None, owner) and rec.lease_live(now):
                raise LeaseHeld(run_id, rec.lease_owner, rec.lease_expires - now)  # type: ignore[operator]  # lease_live() implies lease_expires is set
            epoch = rec.epoch if rec.lease_owner == owner else rec.epoch + 1
            rec = attrs.evolve(rec, lease_owner=owner, lease_expires=now + ttl_seconds, epoch=epoch)
            self._runs[run_id] = rec
            return rec

    def claim_runnable(
        self,
        owner: str,
        ttl_seconds: float,
        limit: int,
        *,
        agents: list[str] | None = None,
        limits: Mapping[str, int] | None = None,
        lacking: Collection[str] | None = None,
    ) -> list[RunRecord]:
        with self._lock:
            now = time.time()
            skip_code = set(lacking or ())
            candidates = [
                r
                for r in self._runs.values()
                if (_runnable(r, now) or self._undelivered_child(r, now))
                and (agents is None or r.agent in agents)
                and (r.code_required is None or r.code_required not in skip_code)
            ]
            candidates.sort(key=lambda r: (-r.priority, r.created_at))
            limits = limits or {}
            driven: dict[str, int] = {}
            for r in self._runs.values():
                if r.agent in limits and not r.finished and r.lease_live(now):
                    driven[r.agent] = driven.get(r.agent, 0) + 1
            taken, _driven = take_within_limits(
                [(r.run_id, r.agent) for r in candidates], driven, limits, max(limit, 0)
            )
            claimed = []
            for run_id in taken:
                rec = self._runs[run_id]
                rec = attrs.evolve(
                    rec,
                    status="running" if rec.status == "queued" else rec.status,
                    lease_owner=owner,
                    lease_expires=now + ttl_seconds,
                    epoch=rec.epoch + 1,
                )
                self._runs[rec.run_id] = rec
                claimed.append(rec)
            return claimed

    def _undelivered_child(self, rec: RunRecord, now: float) -> bool:
        """A parked parent one of whose sub-runs finished without its outcome reaching the parent."""
        if rec.status != "waiting" or rec.waiting_on != "child" or rec.lease_live(now):
            return False
        delivered = self._results.get((rec.run_id, rec.seq), {})
        for child_id in self._children.get(rec.run_id, ()):
            child = self._runs[child_id]
            if child.finished and child.parent_seq == rec.seq and (child.parent_idx or 0) not in delivered:
                return True
        return False

    def renew_leases(self, owner: str, run_ids: list[str], ttl_seconds: float) -> list[str]:
        lost = []
        with self._lock:
            expires = time.time() + ttl_seconds
            for run_id in run_ids:
                rec = self._runs.get(run_id)
                if rec is None or rec.lease_owner != owner:
                    lost.append(run_id)
                    continue
                self._runs[run_id] = attrs.evolve(rec, lease_expires=expires)
        return lost

    def release_lease(self, run_id: str, owner: str) -> None:
        with self._lock:
            rec = self._runs.get(run_id)
            if rec is not None and rec.lease_owner == owner:
                self._runs[run_id] = attrs.evolve(rec, lease_owner=None, lease_expires=None)
                if rec.status in ("queued", "running") or rec.wake_at is not None:
                    self._notify()

    def _owned(self, run_id: str, owner: str, epoch: int | None) -> RunRecord:
        rec = self._run(run_id)
        if rec.lease_owner != owner or (epoch is not None and rec.epoch != epoch):
            raise lease_lost(run_id, rec.lease_owner, rec.epoch, epoch)
        return rec

    # -- cancellation and wake-ups

    def request_cancel(self, run_id: str) -> list[str]:
        with self._lock:
            self._run(run_id)
            now = time.time()
            marked, stack = [], [run_id]
            while stack:
                rid = stack.pop()
                stack.extend(self._children.get(rid, []))
                rec = self._runs[rid]
                if rec.finished:
                    continue
                marked.append(rid)
                if rec.status == "blocked" or (rec.status == "queued" and rid not in self._checkpoints):
                    # never started, or it cannot go on (blocked): cancelled here, nothing to unwind
                    rec = attrs.evolve(
                        rec, status="cancelled", cancel_requested=True, lease_owner=None,
                        lease_expires=None, updated_at=now,
                    )  # fmt: skip
                else:  # its driver (if any) loses the lease: a worker takes it up to cancel it
                    rec = attrs.evolve(
                        rec,
                        cancel_requested=True,
                        wake_at=now if rec.status == "waiting" else rec.wake_at,
                        lease_owner=None,
                        lease_expires=None,
                        updated_at=now,
                    )
                self._runs[rid] = rec
            self._notify()
            return marked

    def next_wake_at(self) -> float | None:
        return min(
            (r.wake_at for r in self._runs.values() if r.status == "waiting" and r.wake_at is not None),
            default=None,
        )

    def wait_for_work(self, timeout: float) -> bool:
        with self._work:
            generation = self._generation
            self._work.wait_for(lambda: self._generation != generation, timeout)
            return self._generation != generation

    # -- checkpoints

    def save_checkpoint(
        self,
        run_id: str,
        owner: str,
        seq: int,
        blob: bytes,
        pending: Any,
        events: list[EventRow],
        *,
        epoch: int | None = None,
        journal: Sequence[tuple[int, int, bool, bytes]] = (),
        code_required: str | None = None,
    ) -> None:
        with self._lock:
            rec = self._owned(run_id, owner, epoch)
            for r_seq, idx, _ok, _blob in journal:
                if idx in self._results.get((run_id, r_seq), {}):
                    raise StoreError(
                        f"store {self.location}: run {run_id!r} already has a result for seq {r_seq} "
                        f"member {idx}, journaled by another driver; nothing was written"
                    )
            for r_seq, idx, ok, r_blob in journal:
                self._results.setdefault((run_id, r_seq), {})[idx] = (ok, bytes(r_blob))
            now = time.time()
            cps = self._checkpoints.setdefault(run_id, {})
            cps[seq] = (bytes(blob), pending, now)
            self._add_events(run_id, events, now)
            self._runs[run_id] = self._signed(_at_checkpoint(rec, seq, pending, now, code_required))
            if self.retention is not None:
                cutoff = seq - self.retention
                for old in [s for s in cps if s <= cutoff]:
                    del cps[old]
                    self._results.pop((run_id, old), None)
                if run_id in self._replaced:
                    self._replaced[run_id] = [r for r in self._replaced[run_id] if r.seq > cutoff]

    def rewrite_checkpoint(
        self,
        run_id: str,
        owner: str,
        seq: int,
        blob: bytes,
        pending: Any,
        event: tuple[str, str | None, Any],
        *,
        journal: Sequence[tuple[int, bool, bytes]] = (),
        code_required: str | None = None,
        epoch: int | None = None,
    ) -> int:
        with self._lock:
            rec = self._owned(run_id, owner, epoch)
            now = time.time()
            cps = self._checkpoints.setdefault(run_id, {})
            newest = max(cps, default=None)
            n = 1 + max((n for s, n in self._events.get(run_id, {}) if s == seq), default=-1)
            if newest is not None and seq == newest:
                old_blob, _pending, created = cps[seq]
                self._replaced.setdefault(run_id, []).append(ReplacedCheckpoint(seq, n, old_blob, created))
                cps[seq] = (bytes(blob), pending, created)
                rec = attrs.evolve(rec, code_required=code_required)
            elif newest is None or seq > newest:
                slot = self._results.setdefault((run_id, seq), {})
                for idx, ok, r_blob in journal:
                    slot.setdefault(idx, (ok, bytes(r_blob)))
                cps[seq] = (bytes(blob), pending, now)
                rec = attrs.evolve(
                    _at_checkpoint(rec, seq, pending, now, code_required),
                    output=None,
                    error=None,
                    error_blob=None,
                )
            else:
                raise StoreError(
                    f"store {self.location}: run {run_id!r} has checkpoints up to {newest}; an upgrade "
                    f"rewrites the newest one or adds one after it, not checkpoint {seq}"
                )
            self._runs[run_id] = self._signed(rec)
            self._add_events(run_id, [(seq, n, *event)], now)
            return n

    def block_run(
        self,
        run_id: str,
        owner: str,
        blocked: dict[str, Any],
        events: list[EventRow],
        *,
        epoch: int | None = None,
    ) -> bool:
        with self._lock:
            if self._run(run_id).finished:
                return False
            rec = self._owned(run_id, owner, epoch)
            now = time.time()
            self._add_events(run_id, events, now)
            self._runs[run_id] = attrs.evolve(
                rec,
                status="blocked",
                blocked=copy.deepcopy(blocked),
                waiting_on=None,
                wake_at=None,
                lease_owner=None,
                lease_expires=None,
                updated_at=now,
            )
            return True

    def reopen_run(
        self, run_id: str, owner: str, event: tuple[str, str | None, Any], *, epoch: int | None = None
    ) -> int:
        with self._lock:
            rec = self._owned(run_id, owner, epoch)
            now = time.time()
            n = 1 + max((n for s, n in self._events.get(run_id, {}) if s == rec.seq), default=-1)
            pending = rec.pending
            cps = self._checkpoints.get(run_id, {})
            if rec.seq in cps:
                pending = cps[rec.seq][1]  # a finished run's row forgot it; its checkpoint did not
            self._runs[run_id] = self._signed(
                attrs.evolve(
                    _at_checkpoint(rec, rec.seq, pending, now, rec.code_required),
                    output=None,
                    error=None,
                    error_blob=None,
                )
            )
            self._add_events(run_id, [(rec.seq, n, *event)], now)
            return n

    def replaced_checkpoints(self, run_id: str) -> list[ReplacedCheckpoint]:
        return sorted(self._replaced.get(run_id, []), key=lambda r: (r.seq, r.n))

    def latest_checkpoint(self, run_id: str) -> tuple[int, bytes] | None:
        cps = self._checkpoints.get(run_id)
        if not cps:
            return None
        seq = max(cps)
        return seq, cps[seq][0]

    def get_checkpoint(self, run_id: str, seq: int) -> bytes | None:
        entry = self._checkpoints.get(run_id, {}).get(seq)
        return entry[0] if entry else None

    def list_checkpoints(self, run_id: str) -> list[CheckpointInfo]:
        cps = self._checkpoints.get(run_id, {})
        return [CheckpointInfo(s, len(b), t, p) for s, (b, p, t) in sorted(cps.items())]

    # -- journal

    def put_result(
        self,
        run_id: str,
        seq: int,
        idx: int,
        ok: bool,
        blob: bytes,
        usage: dict[str, int] | None = None,
        *,
        owner: str | None = None,
        epoch: int | None = None,
    ) -> bool:
        with self._lock:
            if owner is not None:
                self._owned(run_id, owner, epoch)
            slot = self._results.setdefault((run_id, seq), {})
            if idx in slot:
                return False
            slot[idx] = (ok, bytes(blob))
            rec = self._runs.get(run_id)
            if rec is None:
                return True
            if usage:
                rec = attrs.evolve(rec, usage=add_usage(rec.usage, usage))
            if rec.status == "waiting" and rec.seq == seq and is_answered(rec.pending, _oks(slot)):
                rec = attrs.evolve(rec, wake_at=time.time())
                self._notify()
            self._runs[run_id] = rec
            return True

    def get_results(self, run_id: str, seq: int) -> dict[int, tuple[bool, bytes]]:
        return dict(self._results.get((run_id, seq), {}))

    # -- status

    def set_waiting(
        self,
        run_id: str,
        owner: str,
        waiting_on: str,
        wake_at: float | None,
        events: list[EventRow],
        *,
        epoch: int | None = None,
    ) -> None:
        with self._lock:
            rec = self._owned(run_id, owner, epoch)
            now = time.time()
            self._add_events(run_id, events, now)
            if rec.cancel_requested or is_answered(
                rec.pending, _oks(self._results.get((run_id, rec.seq), {}))
            ):
                wake_at = now  # answered while we were deciding to park: a worker goes on with it
            self._runs[run_id] = attrs.evolve(
                rec, status="waiting", waiting_on=waiting_on, wake_at=wake_at, updated_at=now, blocked=None
            )

    def finish_run(
        self,
        run_id: str,
        owner: str,
        status: str,
        *,
        output: Any = None,
        error: dict[str, Any] | None = None,
        error_blob: bytes | None = None,
        events: list[EventRow] = (),  # type: ignore[assignment]  # an immutable empty default; never mutated
        epoch: int | None = None,
    ) -> bool:
        assert status in FINAL
        with self._lock:
            rec = self._run(run_id)
            if rec.finished:
                return False
            self._owned(run_id, owner, epoch)
            now = time.time()
            self._add_events(run_id, events, now)
            self._runs[run_id] = self._signed(
                attrs.evolve(
                    rec,
                    status=status,
                    output=copy.deepcopy(output),
                    error=error,
                    error_blob=error_blob,
                    blocked=None,
                    pending=None,
                    waiting_on=None,
                    wake_at=None,
                    updated_at=now,
                )
            )
            return True

    # -- events

    def _add_events(self, run_id: str, events: list[EventRow], now: float) -> None:
        if not events:
            return
        table = self._events.setdefault(run_id, {})
        for seq, n, kind, level, data in events:
            table.setdefault((seq, n), EventRecord(seq, n, kind, level, copy.deepcopy(data), now))

    def add_events(
        self, run_id: str, events: list[EventRow], *, owner: str | None = None, epoch: int | None = None
    ) -> None:
        with self._lock:
            if owner is not None:
                self._owned(run_id, owner, epoch)
            self._add_events(run_id, events, time.time())

    def list_events(self, run_id: str, limit: int | None = None) -> list[EventRecord]:
        events = [e for _k, e in sorted(self._events.get(run_id, {}).items())]
        return events[-limit:] if limit else events

    # -- the durable stream, tenants

    def append_stream(self, run_id: str, kind: str, data: Any) -> int:
        with self._lock:
            events = self._stream.setdefault(run_id, [])
            event = StreamEvent(len(events) + 1, kind, copy.deepcopy(data), time.time())
            events.append(event)
            return event.id

    def read_stream(self, run_id: str, after: int = 0, limit: int | None = None) -> list[StreamEvent]:
        with self._lock:
            events = self._stream.get(run_id, [])[max(int(after), 0) :]
            return events[:limit] if limit else list(events)

    def set_tenant(self, run_id: str, tenant: str) -> None:
        with self._lock:
            self._tenants.setdefault(run_id, tenant)

    def get_tenant(self, run_id: str) -> str | None:
        return self._tenants.get(run_id) if run_id in self._runs else None  # beside its run only

    def tenant_runs(self, tenant: str) -> set[str]:
        with self._lock:
            return {r for r, t in self._tenants.items() if t == tenant and r in self._runs}

    # -- the worker registry

    def advertise_worker(self, info: WorkerInfo) -> None:
        with self._lock:
            self._workers[info.owner] = bounded(info)
            cutoff = time.time() - PRUNE_AFTER_SECONDS
            for owner in [o for o, w in self._workers.items() if w.last_seen < cutoff]:
                del self._workers[owner]

    def list_workers(self) -> list[WorkerInfo]:
        with self._lock:
            return sorted(self._workers.values(), key=lambda w: (w.started_at, w.owner))

    def forget_worker(self, owner: str) -> None:
        with self._lock:
            self._workers.pop(owner, None)

    def close(self) -> None:
        pass


def _oks(slot: dict[int, tuple[bool, bytes]]) -> dict[int, bool]:
    return {idx: ok for idx, (ok, _blob) in slot.items()}


def _runnable(rec: RunRecord, now: float) -> bool:
    """Whether a worker may claim ``rec`` now (see :mod:`agentrt.stores.base`)."""
    if rec.finished:
        return False
    if rec.lease_owner is not None and rec.lease_live(now):
        return False
    if rec.status in ("queued", "running"):
        return True
    return rec.status == "waiting" and rec.wake_at is not None and rec.wake_at <= now


def _at_checkpoint(
    rec: RunRecord, seq: int, pending: Any, now: float, code_required: str | None
) -> RunRecord:
    """``rec`` once checkpoint ``seq`` is its newest: running (no longer blocked), waiting on nothing,
    needing that code."""
    return attrs.evolve(
        rec,
        seq=seq,
        pending=pending,
        status="running",
        waiting_on=None,
        wake_at=None,
        updated_at=now,
        code_required=code_required,
        blocked=None,
    )
