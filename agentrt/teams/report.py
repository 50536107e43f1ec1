"""What ``agentrt teams lint``, ``status`` and ``stats`` compute (pure over files and the store)."""

from __future__ import annotations

from pathlib import Path
from typing import Any  # Any: JSON documents (usage per lane)

from agentrt.exceptions import RunNotFound
from agentrt.stores import Store
from agentrt.stores.base import RunRecord
from agentrt.teams import _yaml
from agentrt.teams.errors import ContractError, TeamRunNotFound
from agentrt.teams.receipts import parse_receipt

__all__ = ["lint_receipts", "team_stats", "team_status"]


def lint_receipts(project: str | Path, run_id: str) -> tuple[list[str], list[str]]:
    """``(ok, problems)`` over ``.agentrt/runs/<run>/handoffs/*.md``: a receipt with no envelope block,
    two or more, one that fails the envelope validator, or a wrapper without ``artifact_category``."""
    root = Path(project) / ".agentrt" / "runs" / run_id / "handoffs"
    if not root.is_dir():
        raise TeamRunNotFound(run_id, str(project), str(root))
    ok: list[str] = []
    problems: list[str] = []
    for path in sorted(root.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        try:
            handoff = parse_receipt(text)
        except ContractError as exc:
            problems.append(f"{path}: {exc}")
            continue
        try:
            header, _ = _yaml.split_front_matter(text, str(path))
        except ContractError as exc:
            problems.append(f"{path}: {exc}")
            continue
        if not header.get("artifact_category"):
            problems.append(f"{path}: front matter has no artifact_category")
            continue
        if header.get("task_id") not in (None, handoff.task_id):
            problems.append(
                f"{path}: front matter task_id {header.get('task_id')!r} != envelope {handoff.task_id!r}"
            )
            continue
        ok.append(str(path))
    return ok, problems


def _descendants(store: Store, run_id: str) -> list[RunRecord]:
    out: list[RunRecord] = []
    stack = [run_id]
    while stack:
        for child in store.children(stack.pop()):
            out.append(child)
            stack.append(child.run_id)
    return out


def _add(into: dict[str, int], tokens: int, calls: int) -> None:
    into["total_tokens"] = into.get("total_tokens", 0) + tokens
    into["model_calls"] = into.get("model_calls", 0) + calls


def team_stats(store: Store, run_id: str) -> dict[str, Any]:
    """Usage per lane and per tier from the journaled usage of the lane runs (advisor calls count
    at ``powerful``); every attempt of a lane counts, a failed one too."""
    lead = store.get_run(run_id)
    if lead is None:
        raise RunNotFound(run_id, store.location)
    lanes: dict[str, dict[str, Any]] = {}
    tiers: dict[str, dict[str, int]] = {}
    for rec in _descendants(store, run_id):
        inp = rec.input if isinstance(rec.input, dict) else {}
        if "task_id" not in inp or "tier" not in inp:
            continue
        usage = rec.usage or {}
        total, calls = int(usage.get("total_tokens", 0)), int(usage.get("model_calls", 0))
        out = rec.output if isinstance(rec.output, dict) else {}
        advisor_tokens = int(out.get("advisor_tokens", 0))
        advisor_calls = int(out.get("advisor_calls", 0))
        lane = lanes.setdefault(
            inp["task_id"],
            {"task_id": inp["task_id"], "specialist": inp["specialist"], "tier": inp["tier"],
             "model": inp["model"], "attempts": 0, "total_tokens": 0, "model_calls": 0,
             "advisor_tokens": 0, "advisor_calls": 0},
        )  # fmt: skip
        lane["attempts"] += 1
        lane["total_tokens"] += total
        lane["model_calls"] += calls
        lane["advisor_tokens"] += advisor_tokens
        lane["advisor_calls"] += advisor_calls
        _add(tiers.setdefault(inp["tier"], {}), total - advisor_tokens, calls - advisor_calls)
        if advisor_calls:
            _add(tiers.setdefault("powerful", {}), advisor_tokens, advisor_calls)
    summed = {
        "total_tokens": sum(t["total_tokens"] for t in tiers.values()),
        "model_calls": sum(t["model_calls"] for t in tiers.values()),
    }
    return {
        "run_id": run_id,
        "status": lead.status,
        "lanes": list(lanes.values()),
        "tiers": tiers,
        "total": summed,
    }


def team_status(store: Store, run_id: str) -> dict[str, Any]:
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
