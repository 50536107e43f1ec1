"""What ``agentrt teams lint``, ``status`` and ``stats`` compute (pure over files and the store)."""

from __future__ import annotations

from pathlib import Path
from typing import Any  # Any: JSON documents (usage per lane)

from agentrt.exceptions import ContractError, RunNotFound, TeamRunNotFound
from agentrt.stores import Store
from agentrt.stores.base import RunRecord
from agentrt.stores.views import team_object
from agentrt.teams import _yaml
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
    """A team run as its lanes (:func:`agentrt.stores.views.team_object`, which the HTTP API's
    ``GET /runs/{id}/team`` answers too)."""
    return team_object(store, run_id)
