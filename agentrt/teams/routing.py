"""Routing at dispatch: each lane's score, tier and model, and the sticky +1 after an escalation.

Pure (the lead's tools read the config and the escalation trail; this module only decides), so
the same inputs always route the same way and a dispatch trace is reproducible.  A lane that has
had an advisor consult in this run scores +1 from then on (the reference's "prior escalation on
this lane: +1, sticky for the run"): a retry of it, and any later dispatch of it, is re-scored with
the count of its consults, and goes out at the new tier when that differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any  # Any: proposals and config are JSON

from agentrt.teams.plan import lane_signals
from agentrt.teams.tiers import TierConfig, routing_line, score_lane, unscored_lane

__all__ = ["route", "route_lane"]


def route_lane(
    lane: Mapping[str, Any],
    specialists: Mapping[str, Any],
    config: Mapping[str, Any],
    model_tier: str | None,
    escalations: int = 0,
) -> dict[str, Any]:
    """One lane's routing decision (the row ``routing.jsonl`` keeps)."""
    tiers = TierConfig.from_config(config["models"], model_tier)
    purpose = (specialists.get(lane["specialist"]) or {}).get("purpose")
    signals = lane_signals(lane, purpose, escalations)
    # models.enabled false: no scoring, the approved tier stands (pins and the research floor apply)
    scored = score_lane(signals, tiers) if tiers.enabled else unscored_lane(signals, lane["tier"], tiers)
    return {
        "task_id": lane["task_id"],
        "specialist": lane["specialist"],
        "score": scored.score,
        "tier": scored.tier,
        "model": scored.model,
        "advisor_model": tiers.tiers["powerful"],
        "approved_tier": lane["tier"],
        "escalations": escalations,
        "reasons": list(scored.reasons),
        "line": routing_line(lane["task_id"], scored),
    }


def route(
    proposal: Mapping[str, Any],
    specialists: Mapping[str, Any],
    config: Mapping[str, Any],
    model_tier: str | None,
    escalations: Mapping[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Score every lane of the proposal at dispatch; ``escalations``: consults so far per lane."""
    esc = escalations or {}
    return [
        route_lane(lane, specialists, config, model_tier, esc.get(lane["task_id"], 0))
        for lane in proposal["lanes"]
    ]
