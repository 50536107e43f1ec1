"""``MemoryStore``: the in-memory twin of the SQLite store (tests, embedding, benchmarks)."""

from __future__ import annotations

import copy
import threading
import time
from typing import Any

import attrs

from agentrt._sdk.errors import LeaseHeld, RunExists, RunNotFound
from agentrt.stores.base import (
    FINAL,
    CheckpointInfo,
    EventRecord,
    EventRow,
    LeaseLost,
    NewRun,
    RunRecord,
    StreamEvent,
    add_usage,
    owner_is_dead,
)

__all__ = ["MemoryStore"]


class MemoryStore:
    """Keeps everything in dictionaries; same semantics as :class:`SqliteStore`, within one process."""

    def __init__(self, *, retention: int | None = 100) -> None:
        self.location = "memory"
        self.retention = retention
        self._lock = threading.RLock()
        self._runs: dict[str, RunRecord] = {}
        self._checkpoints: dict[str, dict[int, tuple[bytes, Any, float]]] = {}
        self._results: dict[tuple[str, int], dict[int, tuple[bool, bytes]]] = {}
        self._events: dict[str, dict[tuple[int, int], EventRecord]] = {}
        self._children: dict[str, list[str]] = {}
        self._stream: dict[str, list[StreamEvent]] = {}
        self._tenants: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._runs)} runs)"

    # -- runs

    def create_run(self, run: NewRun) -> RunRecord:
        with self._lock:
            if run.run_id in self._runs:
                raise RunExists(f"a run with id {run.run_id!r} already exists in {self.location}")
            now = time.time()
            rec = RunRecord(
                run_id=run.run_id,
                agent=run.agent,
                status="running",
                input=copy.deepcopy(run.input),
                parent_id=run.parent_id,
                parent_seq=run.parent_seq,
                parent_idx=run.parent_idx,
                created_at=now,
                updated_at=now,
            )
            self._runs[run.run_id] = rec
            if run.parent_id is not None:
                self._children.setdefault(run.parent_id, []).append(run.run_id)
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
            held = rec.lease_owner not in (None, owner) and rec.lease_expires is not None
            if held and rec.lease_expires > now and not owner_is_dead(rec.lease_owner):  # type: ignore[operator,arg-type]
                raise LeaseHeld(run_id, rec.lease_owner, rec.lease_expires - now)  # type: ignore[arg-type,operator]
            rec = attrs.evolve(rec, lease_owner=owner, lease_expires=now + ttl_seconds)
            self._runs[run_id] = rec
            return rec

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

    def _owned(self, run_id: str, owner: str) -> RunRecord:
        rec = self._run(run_id)
        if rec.lease_owner != owner:
            raise LeaseLost(
                f"run {run_id!r} is now driven by {rec.lease_owner}; this process stops driving it"
            )
        return rec

    # -- checkpoints

    def save_checkpoint(
        self, run_id: str, owner: str, seq: int, blob: bytes, pending: Any, events: list[EventRow]
    ) -> None:
        with self._lock:
            rec = self._owned(run_id, owner)
            now = time.time()
            cps = self._checkpoints.setdefault(run_id, {})
            cps[seq] = (bytes(blob), pending, now)
            self._add_events(run_id, events, now)
            self._runs[run_id] = attrs.evolve(
                rec, seq=seq, pending=pending, status="running", waiting_on=None, wake_at=None, updated_at=now
            )
            if self.retention is not None:
                for old in [s for s in cps if s <= seq - self.retention]:
                    del cps[old]
                    self._results.pop((run_id, old), None)

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
        self, run_id: str, seq: int, idx: int, ok: bool, blob: bytes, usage: dict[str, int] | None = None
    ) -> bool:
        with self._lock:
            slot = self._results.setdefault((run_id, seq), {})
            if idx in slot:
                return False
            slot[idx] = (ok, bytes(blob))
            rec = self._runs.get(run_id)
            if usage and rec is not None:
                self._runs[run_id] = attrs.evolve(rec, usage=add_usage(rec.usage, usage))
            return True

    def get_results(self, run_id: str, seq: int) -> dict[int, tuple[bool, bytes]]:
        return dict(self._results.get((run_id, seq), {}))

    # -- status

    def set_waiting(
        self, run_id: str, owner: str, waiting_on: str, wake_at: float | None, events: list[EventRow]
    ) -> None:
        with self._lock:
            rec = self._owned(run_id, owner)
            now = time.time()
            self._add_events(run_id, events, now)
            self._runs[run_id] = attrs.evolve(
                rec, status="waiting", waiting_on=waiting_on, wake_at=wake_at, updated_at=now
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
        events: list[EventRow] = (),  # type: ignore[assignment]
    ) -> bool:
        assert status in FINAL
        with self._lock:
            rec = self._run(run_id)
            if rec.finished:
                return False
            self._owned(run_id, owner)
            now = time.time()
            self._add_events(run_id, events, now)
            self._runs[run_id] = attrs.evolve(
                rec,
                status=status,
                output=copy.deepcopy(output),
                error=error,
                error_blob=error_blob,
                pending=None,
                waiting_on=None,
                wake_at=None,
                updated_at=now,
            )
            return True

    # -- events

    def _add_events(self, run_id: str, events: list[EventRow], now: float) -> None:
        if not events:
            return
        table = self._events.setdefault(run_id, {})
        for seq, n, kind, level, data in events:
            table.setdefault((seq, n), EventRecord(seq, n, kind, level, copy.deepcopy(data), now))

    def add_events(self, run_id: str, events: list[EventRow]) -> None:
        with self._lock:
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
            self._tenants[run_id] = tenant

    def get_tenant(self, run_id: str) -> str | None:
        return self._tenants.get(run_id)

    def tenant_runs(self, tenant: str) -> set[str]:
        with self._lock:
            return {r for r, t in self._tenants.items() if t == tenant}

    def close(self) -> None:
        pass
