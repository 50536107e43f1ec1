"""Tier routing: signals, thresholds, the tier -> model map, precedence and the research floor."""

from __future__ import annotations

import attrs
import pytest

from agentrt.teams import ContractError, Lane, TierConfig, routing_line, score_lane, validate_handoff
from agentrt.teams.escalation import (
    CRITIQUE_INSTRUCTION,
    EscalationConfig,
    advisor_prompt,
    escalation_trigger,
)


@pytest.mark.parametrize(
    ("work_type", "points"),
    [
        ("read", 0),
        ("summarize", 0),
        ("draft", 1),
        ("extract", 1),
        ("architect", 2),
        ("review", 2),
        ("schema", 2),
    ],
)
def test_work_type_weights(work_type: str, points: int) -> None:
    assert score_lane(Lane("t", work_type)).score == points


def test_three_tiers_by_default_thresholds() -> None:
    assert [score_lane(Lane("t", w)).tier for w in ("read", "draft", "review")] == ["cheap", "mid", "mid"]
    assert score_lane(Lane("t", "review", sensitive=True)).score == 3
    assert score_lane(Lane("t", "review", sensitive=True)).tier == "powerful"
    assert score_lane(Lane("t", "read")).model == "haiku"
    assert score_lane(Lane("t", "draft")).model == "sonnet"
    assert score_lane(Lane("t", "review", sensitive=True)).model == "opus"


def test_each_signal_adds() -> None:
    base = score_lane(Lane("t", "read")).score
    assert score_lane(Lane("t", "read", blast_radius="medium")).score == base + 1
    assert score_lane(Lane("t", "read", blast_radius="high")).score == base + 2
    assert score_lane(Lane("t", "read", files=4)).score == base + 1
    assert score_lane(Lane("t", "read", files=10)).score == base + 2
    assert score_lane(Lane("t", "read", depends_on_contract=True)).score == base + 1
    assert score_lane(Lane("t", "read", sensitive=True)).score == base + 1


def test_prior_escalation_is_a_sticky_plus_one() -> None:
    assert score_lane(Lane("t", "read", escalations=1)).score == 1
    assert score_lane(Lane("t", "read", escalations=3)).score == 1  # +1, not +3
    assert any("sticky" in r for r in score_lane(Lane("t", "read", escalations=1)).reasons)


def test_pure_same_input_same_output() -> None:
    lane = Lane("t", "architect", files=12, blast_radius="high", depends_on_contract=True)
    assert score_lane(lane) == score_lane(lane)


def test_thresholds_and_models_from_config() -> None:
    cfg = TierConfig.from_config({"thresholds": {"mid": 2, "powerful": 5}, "tiers": {"mid": "gpt-4o-mini"}})
    assert score_lane(Lane("t", "draft"), cfg).tier == "cheap"
    assert score_lane(Lane("t", "review"), cfg).tier == "mid"
    assert score_lane(Lane("t", "review"), cfg).model == "gpt-4o-mini"
    assert cfg.tiers["powerful"] == "opus"  # absent keys keep the default


def test_precedence_run_pin_over_lane_pin_over_thresholds() -> None:
    lane = Lane("t", "read", tier_pin="mid")
    assert score_lane(lane).tier == "mid"
    assert score_lane(lane, TierConfig(model_tier="cheap")).tier == "cheap"
    assert score_lane(Lane("t", "review", sensitive=True), TierConfig(model_tier="cheap")).tier == "cheap"
    assert score_lane(Lane("t", "review", sensitive=True, tier_pin="cheap")).tier == "cheap"


@pytest.mark.parametrize(
    "config", [TierConfig(), TierConfig(model_tier="cheap"), TierConfig(model_tier="mid")]
)
@pytest.mark.parametrize("pin", [None, "cheap", "mid"])
@pytest.mark.parametrize("escalations", [0, 2])
def test_research_floor_beats_every_pin(config: TierConfig, pin: str | None, escalations: int) -> None:
    result = score_lane(Lane("t", "read", purpose="research", tier_pin=pin, escalations=escalations), config)
    assert result.tier == "powerful"
    assert result.model == config.tiers["powerful"]


def test_bad_inputs_are_contract_errors() -> None:
    with pytest.raises(ContractError, match="work_type"):
        score_lane(Lane("t", "dance"))
    with pytest.raises(ContractError, match="blast_radius"):
        score_lane(Lane("t", "read", blast_radius="huge"))
    with pytest.raises(ContractError, match="tier_pin"):
        score_lane(Lane("t", "read", tier_pin="max"))
    with pytest.raises(ContractError, match="model_tier"):
        TierConfig(model_tier="max")
    with pytest.raises(ContractError, match="mid <= powerful"):
        TierConfig(thresholds={"mid": 4, "powerful": 3})
    with pytest.raises(ContractError, match="powerful"):
        TierConfig(tiers={"cheap": "a", "mid": "b"})


def test_routing_line() -> None:
    assert (
        routing_line("L1", score_lane(Lane("L1", "draft"))) == "lane L1 · score 1 · tier mid · model sonnet"
    )


# -- escalation triggers and the advisor


def test_trigger_status_escalate_with_reason() -> None:
    h = validate_handoff(
        {
            "schema_version": "guild.handoff.v2",
            "task_id": "t",
            "tier": "cheap",
            "status": "escalate",
            "escalate_reason": "which index?",
            "summary": "s",
            "artifacts": [],
            "issues": [],
        }
    )
    assert escalation_trigger(
        "long enough", work_type="draft", tier="cheap", config=EscalationConfig(), handoff=h
    ) == ("status escalate: which index?")


def test_trigger_marker_phrase_only_when_configured() -> None:
    text = "I am NOT SURE which API applies."
    assert escalation_trigger(text, work_type="draft", tier="cheap", config=EscalationConfig()) is None
    cfg = EscalationConfig(markers=("not sure",))
    assert "marker phrase" in (escalation_trigger(text, work_type="draft", tier="cheap", config=cfg) or "")


def test_trigger_short_output_only_for_its_type_and_tier() -> None:
    cfg = EscalationConfig.from_config({"shortOutputThreshold": {"draft/cheap": 40}})
    assert "shorter than 40" in (
        escalation_trigger("tiny", work_type="draft", tier="cheap", config=cfg) or ""
    )
    assert escalation_trigger("tiny", work_type="draft", tier="mid", config=cfg) is None
    assert escalation_trigger("tiny", work_type="read", tier="cheap", config=cfg) is None
    assert escalation_trigger("x" * 40, work_type="draft", tier="cheap", config=cfg) is None
    assert escalation_trigger("tiny", work_type="draft", tier="cheap", config=EscalationConfig()) is None


def test_advisor_rounds_default_and_validation() -> None:
    assert EscalationConfig().advisor_rounds == 2
    assert EscalationConfig.from_config({"advisorRounds": 1}).advisor_rounds == 1
    with pytest.raises(ContractError):
        EscalationConfig(advisor_rounds=-1)


def test_advisor_sees_only_draft_question_and_instruction() -> None:
    prompt = advisor_prompt("the draft", "the question")
    assert prompt == f"{CRITIQUE_INSTRUCTION}\n\nQuestion: the question\n\nDraft:\nthe draft"


def test_unscored_lane_keeps_the_given_tier_under_the_pins_and_the_floor() -> None:
    from agentrt.teams.tiers import unscored_lane

    wide = Lane("L", "architect", files=12, blast_radius="high", sensitive=True)  # would score 7
    off = TierConfig.from_config({"enabled": False})
    assert off.enabled is False and TierConfig.from_config({}).enabled is True
    got = unscored_lane(wide, "cheap", off)
    assert (got.score, got.tier, got.model) == (0, "cheap", "haiku")
    assert got.reasons[0] == "models.enabled false: scoring skipped"
    assert unscored_lane(attrs.evolve(wide, tier_pin="mid"), "cheap", off).tier == "mid"
    assert unscored_lane(wide, "cheap", attrs.evolve(off, model_tier="powerful")).tier == "powerful"
    assert unscored_lane(attrs.evolve(wide, purpose="research"), "cheap", off).tier == "powerful"
    with pytest.raises(ContractError, match=r"models\.enabled"):
        TierConfig.from_config({"enabled": "no"})
