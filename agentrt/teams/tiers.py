"""Tier routing: a pure lane scorer (no model call, same lane and config -> same tier).

The score adds the reference's signals; ``TierConfig.thresholds`` cut it into ``cheap`` / ``mid`` /
``powerful`` and ``TierConfig.tiers`` maps a tier to a model.  Precedence, strongest first: the
run-wide pin (``model_tier``, the CLI's ``--model-tier``), the lane's ``tier_pin``, then the
thresholds.  A lane whose specialist has ``purpose: research`` is floored at ``powerful`` above all of
them, so no pin, retry, resume or advisor consult runs it lower.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any  # Any: YAML configuration of any shape, checked here

import attrs

from agentrt.exceptions import ContractError
from agentrt.teams.contracts import TIERS

__all__ = [
    "BLAST_RADIUS_WEIGHTS",
    "DEFAULT_MODELS",
    "DEFAULT_THRESHOLDS",
    "WORK_TYPE_WEIGHTS",
    "Lane",
    "LaneScore",
    "TierConfig",
    "routing_line",
    "score_lane",
]

#: The work-type verb: read or summarize 0, draft or extract +1, architect, review or schema +2.
WORK_TYPE_WEIGHTS: dict[str, int] = {
    "read": 0,
    "summarize": 0,
    "draft": 1,
    "extract": 1,
    "architect": 2,
    "review": 2,
    "schema": 2,
}
#: Blast radius: how much breaks if the lane is wrong.
BLAST_RADIUS_WEIGHTS: dict[str, int] = {"low": 0, "medium": 1, "high": 2}
#: File count: a lane touching at least this many files adds 1, at least the second adds 2.
FILES_WIDE = 4
FILES_VERY_WIDE = 10
DEFAULT_THRESHOLDS: dict[str, int] = {"mid": 1, "powerful": 3}
#: The tier -> model map's default (the reference's Claude binding).
DEFAULT_MODELS: dict[str, str] = {"cheap": "haiku", "mid": "sonnet", "powerful": "opus"}


def _tier(value: Any, what: str) -> str | None:
    if value is not None and value not in TIERS:
        raise ContractError(
            "tier routing", what, f"must be one of {', '.join(TIERS)} or unset; got {value!r}"
        )
    tier: str | None = value  # None or one of TIERS (checked above)
    return tier


@attrs.frozen
class Lane:
    """The signals of one lane (a task given to one specialist)."""

    task_id: str
    work_type: str
    files: int = 0
    blast_radius: str = "low"
    depends_on_contract: bool = False
    sensitive: bool = False
    escalations: int = 0
    purpose: str | None = None
    tier_pin: str | None = None


@attrs.frozen
class LaneScore:
    """The scorer's answer; ``reasons`` says which signal added what, and which pin or floor won."""

    score: int
    tier: str
    model: str
    reasons: tuple[str, ...]


@attrs.frozen
class TierConfig:
    """``models.thresholds`` / ``models.tiers`` from config, and the run-wide ``--model-tier`` pin."""

    thresholds: Mapping[str, int] = attrs.field(factory=lambda: dict(DEFAULT_THRESHOLDS))
    tiers: Mapping[str, str] = attrs.field(factory=lambda: dict(DEFAULT_MODELS))
    model_tier: str | None = None
    enabled: bool = True  # models.enabled: false skips scoring (see unscored_lane)

    def __attrs_post_init__(self) -> None:
        for key in ("mid", "powerful"):
            if not isinstance(self.thresholds.get(key), int) or isinstance(self.thresholds.get(key), bool):
                raise ContractError(
                    "models.thresholds", key, f"must be an integer, got {self.thresholds.get(key)!r}"
                )
        if not 0 <= self.thresholds["mid"] <= self.thresholds["powerful"]:
            raise ContractError(
                "models.thresholds", None, f"need 0 <= mid <= powerful, got {dict(self.thresholds)}"
            )
        for tier in TIERS:
            if not isinstance(self.tiers.get(tier), str) or not self.tiers[tier]:
                raise ContractError("models.tiers", tier, f"must name a model, got {self.tiers.get(tier)!r}")
        _tier(self.model_tier, "model_tier")

    @classmethod
    def from_config(cls, models: Mapping[str, Any] | None, model_tier: str | None = None) -> TierConfig:
        """From a config's ``models:`` mapping; absent keys keep the built-in defaults."""
        models = models or {}
        thresholds = {**DEFAULT_THRESHOLDS, **dict(models.get("thresholds") or {})}
        tiers = {**DEFAULT_MODELS, **dict(models.get("tiers") or {})}
        enabled = models.get("enabled", True)
        if not isinstance(enabled, bool):
            raise ContractError("models.enabled", None, f"must be true or false, got {enabled!r}")
        return cls(thresholds=thresholds, tiers=tiers, model_tier=model_tier, enabled=enabled)

    def tier_of(self, score: int) -> str:
        if score >= self.thresholds["powerful"]:
            return "powerful"
        if score >= self.thresholds["mid"]:
            return "mid"
        return "cheap"


def score_lane(lane: Lane, config: TierConfig = TierConfig()) -> LaneScore:
    """Score ``lane`` and pick its tier and model; pure, so a dispatch trace is reproducible."""
    if lane.work_type not in WORK_TYPE_WEIGHTS:
        raise ContractError(
            f"lane {lane.task_id}",
            "work_type",
            f"must be one of {', '.join(WORK_TYPE_WEIGHTS)}; got {lane.work_type!r}",
        )
    if lane.blast_radius not in BLAST_RADIUS_WEIGHTS:
        raise ContractError(
            f"lane {lane.task_id}",
            "blast_radius",
            f"must be one of {', '.join(BLAST_RADIUS_WEIGHTS)}; got {lane.blast_radius!r}",
        )
    _tier(lane.tier_pin, "tier_pin")
    reasons: list[str] = []
    score = 0

    def add(points: int, why: str) -> None:
        nonlocal score
        if points:
            score += points
            reasons.append(f"{why} +{points}")

    add(WORK_TYPE_WEIGHTS[lane.work_type], f"work_type {lane.work_type}")
    add(BLAST_RADIUS_WEIGHTS[lane.blast_radius], f"blast_radius {lane.blast_radius}")
    add(2 if lane.files >= FILES_VERY_WIDE else 1 if lane.files >= FILES_WIDE else 0, f"files {lane.files}")
    add(1 if lane.depends_on_contract else 0, "depends_on contract")
    add(1 if lane.sensitive else 0, "security/correctness sensitive")
    add(1 if lane.escalations > 0 else 0, "prior escalation (sticky)")
    tier = config.tier_of(score)
    reasons.append(f"thresholds -> {tier}")
    tier = _overridden(lane, tier, config, reasons)
    return LaneScore(score=score, tier=tier, model=config.tiers[tier], reasons=tuple(reasons))


def _overridden(lane: Lane, tier: str, config: TierConfig, reasons: list[str]) -> str:
    """``tier`` after what outranks a lane's own tier, in order: its pin, the run-wide
    ``--model-tier``, then the research floor; each change is appended to ``reasons``."""
    if lane.tier_pin is not None:
        tier = lane.tier_pin
        reasons.append(f"lane tier pin -> {tier}")
    if config.model_tier is not None:
        tier = config.model_tier
        reasons.append(f"run-wide --model-tier -> {tier}")
    if lane.purpose == "research" and tier != "powerful":
        tier = "powerful"
        reasons.append("research floor -> powerful")
    return tier


def unscored_lane(lane: Lane, tier: str, config: TierConfig = TierConfig()) -> LaneScore:
    """A lane's tier when ``models.enabled`` is false: no signal is scored (score 0); ``tier`` (the
    specialist's ``default_tier`` at plan time, the approved tier at dispatch) stands, under the same
    pins and research floor as :func:`score_lane`."""
    _tier(tier, "tier")
    _tier(lane.tier_pin, "tier_pin")
    reasons = ["models.enabled false: scoring skipped", f"given tier -> {tier}"]
    tier = _overridden(lane, tier, config, reasons)
    return LaneScore(score=0, tier=tier, model=config.tiers[tier], reasons=tuple(reasons))


def routing_line(task_id: str, result: LaneScore) -> str:
    """The line every dispatch prints and the run records."""
    return f"lane {task_id} · score {result.score} · tier {result.tier} · model {result.model}"
