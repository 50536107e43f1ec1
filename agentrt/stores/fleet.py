"""The fleet as the store sees it: live workers, the runs each holds, and the stranded runs.

What ``agentrt workers`` prints (and ``--json``): it reads the worker registry
(:mod:`agentrt.stores.registry`) and the unfinished run rows, nothing else, so it works on a
read-only store from any machine.

A run is *stranded* when its newest checkpoint needs code (``code_required``) that at least one
live worker has judged it lacks and no live worker has judged it carries: as the fleet stands,
nobody will resume it (it waits or is blocked, it is not failed) until a worker with its code starts or
``agentrt upgrade`` moves it.  A run nobody has met yet (parked on a reply, say) is not counted:
workers judge a requirement when they claim a run that needs it.
"""

from __future__ import annotations

import time
from typing import Any  # Any: JSON documents

import attrs

from agentrt.stores.base import RunRecord, Store, owner_is_dead
from agentrt.stores.registry import WorkerInfo, requirement_key, requirement_summary

__all__ = ["Fleet", "Stranded", "fleet_object", "is_live", "read_fleet"]

_UNFINISHED = ("queued", "running", "waiting", "blocked")


def is_live(info: WorkerInfo, now: float | None = None) -> bool:
    """Seen within its liveness window, and not a dead pid on this machine."""
    return info.live(now) and not owner_is_dead(info.owner)


@attrs.frozen
class Stranded:
    """An unfinished run no live worker can resume, and why: ``(owner, reason)`` per live worker
    that judged its code."""

    run: RunRecord
    reasons: tuple[tuple[str, str], ...]


@attrs.frozen
class Fleet:
    """One reading of the registry and of the unfinished runs (see the module docstring)."""

    location: str
    at: float
    live: tuple[WorkerInfo, ...]
    gone: tuple[WorkerInfo, ...]
    #: owner -> the run ids it holds a live lease on
    holding: dict[str, tuple[str, ...]]
    stranded: tuple[Stranded, ...]


def read_fleet(store: Store, now: float | None = None) -> Fleet:
    """Read the registry and the unfinished runs of ``store`` once."""
    now = time.time() if now is None else now
    workers = store.list_workers()
    alive = [is_live(w, now) for w in workers]
    live = tuple(w for w, up in zip(workers, alive, strict=True) if up)
    gone = tuple(w for w, up in zip(workers, alive, strict=True) if not up)
    runs = [r for status in _UNFINISHED for r in store.list_runs(status=status)]
    holding: dict[str, list[str]] = {w.owner: [] for w in live}
    for rec in runs:
        if rec.lease_owner in holding and rec.lease_live(now):
            holding[rec.lease_owner].append(rec.run_id)
    carried = {v.key for w in live for v in w.carried}
    lacking: dict[str, list[tuple[str, str]]] = {}
    for w in live:
        for v in w.lacking:
            lacking.setdefault(v.key, []).append((w.owner, v.reason))
    stranded = []
    for rec in sorted(runs, key=lambda r: (r.created_at, r.run_id)):
        if not rec.code_required or rec.lease_live(now):
            continue
        key = requirement_key(rec.code_required)
        if key in lacking and key not in carried:
            stranded.append(Stranded(rec, tuple(lacking[key])))
    return Fleet(
        location=store.location,
        at=now,
        live=live,
        gone=gone,
        holding={owner: tuple(ids) for owner, ids in holding.items()},
        stranded=tuple(stranded),
    )


def _worker_object(w: WorkerInfo, fleet: Fleet, live: bool) -> dict[str, Any]:
    return {
        "owner": w.owner,
        "live": live,
        "host": w.host,
        "pid": w.pid,
        "python": w.python,
        "version": w.version,
        "reads_formats": list(w.reads_formats),
        "writes_format": w.writes_format,
        "started_at": w.started_at,
        "last_seen": w.last_seen,
        "age_seconds": round(max(fleet.at - w.started_at, 0.0), 3),
        "seen_seconds_ago": round(max(fleet.at - w.last_seen, 0.0), 3),
        "lease_seconds": w.lease_seconds,
        "concurrency": w.concurrency,
        "runs": list(fleet.holding.get(w.owner, ())),
        "agents": [{"spec": a.spec, "code": a.code} for a in w.agents],
        "carried": [{"key": v.key, "summary": v.summary} for v in w.carried],
        "lacking": [{"key": v.key, "summary": v.summary, "reason": v.reason} for v in w.lacking],
        **({"damaged": {"column": w.damaged[0], "why": w.damaged[1]}} if w.damaged else {}),
    }


def fleet_object(fleet: Fleet) -> dict[str, Any]:
    """What ``agentrt workers --json`` prints: the live workers first, then those gone (seen, then
    silent for longer than their liveness window), then the stranded runs."""
    return {
        "store": fleet.location,
        "workers": [_worker_object(w, fleet, True) for w in fleet.live]
        + [_worker_object(w, fleet, False) for w in fleet.gone],
        "stranded": [
            {
                "run_id": s.run.run_id,
                "agent": s.run.agent,
                "status": s.run.status,
                "code_required": requirement_key(s.run.code_required or ""),
                "summary": requirement_summary(s.run.code_required or ""),
                "reasons": [{"owner": owner, "reason": reason} for owner, reason in s.reasons],
            }
            for s in fleet.stranded
        ],
    }
