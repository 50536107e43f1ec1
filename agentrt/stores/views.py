"""The JSON shapes of a run record: what ``agentrt runs/show --json`` print and the HTTP API answers.

Kept beside the stores (they read nothing but records) so that the command line and the ASGI
app share one definition without importing each other.
"""

from __future__ import annotations

from typing import Any  # Any: JSON documents for the CLI and HTTP API

from agentrt.exceptions import RunNotFound
from agentrt.stores.base import RunRecord, Store

__all__ = ["MAX_PARENT_DEPTH", "result_object", "root_of", "show_object", "team_object"]

#: How many parents a chain may have before a walk up it stops (deeper nesting is damage or forgery).
MAX_PARENT_DEPTH = 1000


def root_of(store: Store, rec: RunRecord) -> RunRecord:
    """The top-level run above ``rec``, walking ``parent_id`` with a bound and a cycle check.

    A damaged or forged row can make the chain loop (``a -> b -> a``) or run on for ever; the walk
    stops at the first run seen twice, a missing parent, or :data:`MAX_PARENT_DEPTH` steps, and
    answers the last run reached.
    """
    seen = {rec.run_id}
    for _ in range(MAX_PARENT_DEPTH):
        if rec.parent_id is None or rec.parent_id in seen:
            break
        parent = store.get_run(rec.parent_id)
        if parent is None:
            break
        seen.add(parent.run_id)
        rec = parent
    return rec


def result_object(rec: RunRecord, store: Store | None = None) -> dict[str, Any]:
    """What ``--json`` prints: run_id, status, output or error, and what the run waits on."""
    obj: dict[str, Any] = {"run_id": rec.run_id, "status": rec.status, "agent": rec.agent}
    if rec.damaged is not None:  # a column of the row could not be read: it holds its default
        obj["damaged"] = {"column": rec.damaged[0], "why": rec.damaged[1]}
    if not rec.finished:
        obj["interrupted"] = rec.interrupted  # running, but no live process drives it
    if rec.status == "completed":
        obj["output"] = rec.output
    elif rec.status in ("failed", "cancelled"):
        obj["error"] = dict(rec.error or {})
    else:
        obj["seq"] = rec.seq
        if rec.pending is not None:
            obj["pending"] = rec.pending
        if rec.waiting_on:
            obj["waiting_on"] = rec.waiting_on
        if (rec.pending or {}).get("kind") == "ask":
            obj["prompt"] = rec.pending.get("prompt")
    if rec.status == "blocked":  # why, and from which checkpoint (seq) it goes on
        obj["blocked"] = dict(rec.blocked or {})
    if rec.priority:
        obj["priority"] = rec.priority
    if rec.deadline is not None:
        obj["deadline"] = rec.deadline  # time.time() seconds: past it the run is cancelled
    if rec.cancel_requested and not rec.finished:
        obj["cancel_requested"] = True
    if rec.parent_id:
        obj["parent_id"] = rec.parent_id
    if rec.usage:
        obj["usage"] = rec.usage
    return obj


def listing_object(rec: RunRecord) -> dict[str, Any]:
    """A run as a listing shows it (``agentrt runs --json``, ``GET /runs``): the result object, with
    when it was created and last changed (a list of runs reads by age)."""
    return {**result_object(rec), "created_at": rec.created_at, "updated_at": rec.updated_at}


def show_object(store: Store, rec: RunRecord, events: int | None = None) -> dict[str, Any]:
    """What ``agentrt show --json`` prints (and ``GET /runs/{id}`` answers): the result object, the
    input, the checkpoint history, the children and the recorded events (the newest ``events``)."""
    obj = result_object(rec)
    obj.update(
        {
            "input": rec.input,
            "created_at": rec.created_at,
            "updated_at": rec.updated_at,
            "lease_owner": rec.lease_owner if rec.lease_live() else None,
            "checkpoints": [
                {"seq": c.seq, "size_bytes": c.size_bytes, "created_at": c.created_at, "request": c.pending}
                for c in store.list_checkpoints(rec.run_id)
            ],
            "children": [{"run_id": c.run_id, "status": c.status} for c in store.children(rec.run_id)],
            "events": [
                {"seq": e.seq, "n": e.n, "kind": e.kind, "level": e.level, "data": e.data, "at": e.created_at}
                for e in store.list_events(rec.run_id, limit=events)
            ],
        }
    )
    return obj


def _descendants(store: Store, run_id: str) -> list[RunRecord]:
    out: list[RunRecord] = []
    stack = [run_id]
    while stack:
        for child in store.children(stack.pop()):
            out.append(child)
            stack.append(child.run_id)
    return out


def team_object(store: Store, run_id: str) -> dict[str, Any]:
    """A team run as its lanes, the in-process counterpart of the reference's one pane per lane;
    from the store alone (the lane runs' inputs and results), so a page can show it too.

    For each dispatched lane: its tier and model (its newest attempt's, a re-scored retry's
    included); its state (the status the lead reported, else the newest attempt run's); ``live``
    when that run is running under a live process's lease (not a dead one's); attempts; accepted
    receipts; advisor consults (escalations) of its finished attempts; reviews of it; and how often
    its review gate sent it back."""
    lead = store.get_run(run_id)
    if lead is None:
        raise RunNotFound(run_id, store.location)
    runs: dict[str, list[RunRecord]] = {}
    for rec in _descendants(store, run_id):
        inp = rec.input if isinstance(rec.input, dict) else {}
        if "task_id" in inp and "tier" in inp:
            runs.setdefault(str(inp["task_id"]), []).append(rec)
    reported: dict[str, Any] = {}
    if lead.status == "completed" and isinstance(lead.output, dict):
        reported = {lane["task_id"]: lane for lane in lead.output.get("lanes") or []}

    def out(rec: RunRecord) -> dict[str, Any]:
        return rec.output if rec.status == "completed" and isinstance(rec.output, dict) else {}

    lanes = []
    for task_id, attempts in runs.items():
        attempts.sort(key=lambda r: int((r.input or {}).get("attempt", 0)))
        newest = attempts[-1]
        final = reported.get(task_id) or {}
        reviews = [r for rs in runs.values() for r in rs if (r.input or {}).get("reviews") == task_id]
        lanes.append(
            {
                "task_id": task_id,
                "specialist": newest.input["specialist"],
                "tier": newest.input["tier"],
                "model": newest.input["model"],
                "state": final.get("status") or newest.status,
                "live": newest.status == "running" and newest.lease_live(),
                "attempts": len(attempts),
                "receipts": sum(1 for r in attempts if out(r).get("acceptance")),
                "escalations": sum(int(out(r).get("advisor_rounds", 0)) for r in attempts),
                "reviews": sum(1 for r in reviews if out(r).get("review")),
                "review_rounds": int(final.get("review_rounds", 0)),
            }
        )
    gate = None
    if lead.status == "waiting" and isinstance(lead.pending, dict):
        prompt = lead.pending.get("prompt")
        if isinstance(prompt, dict) and (
            prompt.get("gate") or prompt.get("interview") or prompt.get("boundary_scan")
        ):
            gate = prompt.get("blocked") or "waiting for a team decision"
    done = lead.status == "completed" and isinstance(lead.output, dict)
    goal = lead.output.get("goal_status") if done else None
    return {"run_id": run_id, "status": lead.status, "gate": gate, "goal_status": goal, "lanes": lanes}
