"""The reference's guild.handoff.v2 table, receipts, and the closed registry of six result contracts."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from agentrt import AgentrtError
from agentrt.teams import (
    ContractError,
    Handoff,
    parse_receipt,
    render_receipt,
    validate_contract,
    validate_handoff,
)
from agentrt.teams.contracts import CONTRACTS, HANDOFF_KEYS


def env(**over: object) -> dict:
    base = {
        "schema_version": "guild.handoff.v2",
        "task_id": "T1",
        "tier": "mid",
        "status": "done",
        "summary": "Did it.",
        "artifacts": [],
        "issues": [],
    }
    base.update(over)
    return {k: v for k, v in base.items() if v is not DROP}


DROP = object()


def rejects(obj: object, key: str | None, words: str) -> ContractError:
    with pytest.raises(ContractError) as info:
        validate_handoff(obj)
    assert info.value.key == key
    assert words in str(info.value)
    assert isinstance(info.value, AgentrtError)
    return info.value


def test_minimal_envelope_validates_and_round_trips() -> None:
    h = validate_handoff(env())
    assert h == Handoff(task_id="T1", tier="mid", status="done", summary="Did it.")
    assert validate_handoff(h.to_dict()) == h


def test_all_optional_keys_accepted() -> None:
    h = validate_handoff(
        env(learnings=["x"], notes="n" * 200, injection_clean="flagged", escalate_reason="not needed")
    )
    assert h.learnings == ("x",) and h.notes == "n" * 200 and h.injection_clean == "flagged"
    assert set(h.to_dict()) == set(HANDOFF_KEYS)


def test_strict_rejects_unknown_key() -> None:
    rejects(env(extra=1), "extra", "strict")


@pytest.mark.parametrize("value", ["guild.handoff.v1", "guild.handoff.v3", None])
def test_schema_version_exactly(value: object) -> None:
    rejects(env(schema_version=value), "schema_version", "guild.handoff.v2")


@pytest.mark.parametrize(
    "key", ["schema_version", "task_id", "tier", "status", "summary", "artifacts", "issues"]
)
def test_required_keys(key: str) -> None:
    rejects(env(**{key: DROP}), key, "required")


@pytest.mark.parametrize("value", ["", "   ", 7, None])
def test_task_id_non_empty_string(value: object) -> None:
    rejects(env(task_id=value), "task_id", "non-empty string")


@pytest.mark.parametrize("tier", ["cheap", "mid", "powerful"])
def test_tiers_accepted(tier: str) -> None:
    assert validate_handoff(env(tier=tier)).tier == tier


def test_tier_rejected() -> None:
    rejects(env(tier="huge"), "tier", "cheap, mid, powerful")


@pytest.mark.parametrize("status", ["done", "blocked"])
def test_statuses(status: str) -> None:
    assert validate_handoff(env(status=status)).status == status


def test_status_rejected() -> None:
    rejects(env(status="finished"), "status", "done, blocked, escalate")


def test_summary_rules() -> None:
    assert validate_handoff(env(summary="s" * 600)).summary == "s" * 600
    rejects(env(summary="s" * 601), "summary", "at most 600")
    rejects(env(summary=""), "summary", "non-empty")


@pytest.mark.parametrize("key", ["artifacts", "issues"])
def test_arrays_of_strings(key: str) -> None:
    assert getattr(validate_handoff(env(**{key: ["a", "b"]})), key) == ("a", "b")
    rejects(env(**{key: "a"}), key, "array of strings")
    rejects(env(**{key: [1]}), key, "array of strings")


def test_escalate_reason_required_on_escalate() -> None:
    rejects(env(status="escalate"), "escalate_reason", "non-empty")
    rejects(env(status="escalate", escalate_reason=" "), "escalate_reason", "non-empty")
    assert validate_handoff(env(status="escalate", escalate_reason="why")).escalate_reason == "why"


def test_learnings_notes_injection() -> None:
    rejects(env(learnings="x"), "learnings", "array of strings")
    rejects(env(notes="n" * 201), "notes", "at most 200")
    rejects(env(notes=3), "notes", "string")
    rejects(env(injection_clean="dirty"), "injection_clean", "clean, flagged, unverified")


def test_not_an_object() -> None:
    rejects(["x"], None, "JSON object")


# -- receipts


def receipt(h: Handoff) -> str:
    return render_receipt(h, run_id="r1", specialist="backend", sections={"changed_files": ["a.py"]})


def test_receipt_wrapper_has_front_matter_five_sections_and_one_block() -> None:
    h = validate_handoff(env())
    text = receipt(h)
    assert text.startswith("---\nschema_version: guild.handoff_receipt.v1\n")
    for section in ("changed_files", "opens_for", "assumptions", "evidence", "followups"):
        assert f"\n## {section}\n" in text
    assert text.count("```json") == 1
    assert parse_receipt(text) == h


def test_receipt_without_block_is_invalid() -> None:
    text = receipt(validate_handoff(env())).split("## envelope")[0]
    with pytest.raises(ContractError, match="no fenced envelope block"):
        parse_receipt(text)


def test_receipt_with_two_blocks_is_a_duplicate_defect() -> None:
    text = receipt(validate_handoff(env()))
    block = "\n```json\n" + json.dumps(env(summary="other")) + "\n```\n"
    with pytest.raises(ContractError, match="duplicate envelope block"):
        parse_receipt(text + block)


def test_receipt_block_that_fails_the_validator() -> None:
    text = "# r\n\n```json\n" + json.dumps(env(tier="huge")) + "\n```\n"
    with pytest.raises(ContractError, match="tier"):
        parse_receipt(text)
    broken = '```json\n{"schema_version": "guild.handoff.v2", \n```\n'
    with pytest.raises(ContractError, match="not valid JSON"):
        parse_receipt(broken)


def test_other_fenced_blocks_do_not_count() -> None:
    text = receipt(validate_handoff(env())) + "\n```python\nprint('hi')\n```\n"
    assert parse_receipt(text).task_id == "T1"


# -- the closed registry of six


def core(version: str, **fields: object) -> dict:
    return {"schema_version": version, "run_id": "r1", "ts": "2026-12-01T00:00:00Z", **fields}


GOOD = {
    "guild.handoff.v2": env(),
    "review_result.v1": {
        "schema_version": "review_result.v1",
        "packet_id": "p",
        "artifact_sha256_reviewed": "ab" * 32,
        "verdict": "pass",
        "blocking_findings": [],
    },
    "guild.phase_result.v1": core(
        "guild.phase_result.v1", phase="build", status="complete", gate_passed=True, outputs=[]
    ),
    "guild.permission_receipt.v1": core(
        "guild.permission_receipt.v1",
        requested_mode="ask",
        selected_mode="ask",
        gate_policy="prompted_inline",
        scope=["fs"],
    ),
    "guild.host_event.v1": core(
        "guild.host_event.v1", host_id="h", event_type="tool", name="Edit", detail="x"
    ),
    "guild.qa_result.v1": core(
        "guild.qa_result.v1", checks=[{"id": "c1", "status": "pass"}], gaps=[], failures=[], release_ok=True
    ),
}


def test_registry_is_closed_and_six() -> None:
    assert set(CONTRACTS) == set(GOOD)
    assert len(CONTRACTS) == 6
    assert CONTRACTS["review_result.v1"][0] == "lenient"
    assert {mode for name, (mode, _) in CONTRACTS.items() if name != "review_result.v1"} == {"strict"}


@pytest.mark.parametrize("version", sorted(GOOD))
def test_each_contract_accepts_its_good_value(version: str) -> None:
    assert validate_contract(GOOD[version]) == version


@pytest.mark.parametrize(
    "version",
    ["guild.phase_result.v1", "guild.permission_receipt.v1", "guild.host_event.v1", "guild.qa_result.v1"],
)
@pytest.mark.parametrize("key", ["run_id", "ts"])
def test_orchestration_contracts_require_run_id_and_ts(version: str, key: str) -> None:
    obj = dict(GOOD[version])
    del obj[key]
    with pytest.raises(ContractError) as info:
        validate_contract(obj)
    assert info.value.key == key


@pytest.mark.parametrize(
    ("version", "key", "bad"),
    [
        ("guild.phase_result.v1", "phase", "deploy"),
        ("guild.phase_result.v1", "status", "done"),
        ("guild.phase_result.v1", "gate_passed", "yes"),
        ("guild.phase_result.v1", "outputs", "x"),
        ("guild.qa_result.v1", "checks", [{"id": "c", "status": "ok"}]),
        ("guild.qa_result.v1", "gaps", None),
        ("guild.qa_result.v1", "failures", [1]),
        ("guild.qa_result.v1", "release_ok", 1),
        ("guild.host_event.v1", "host_id", ""),
        ("guild.host_event.v1", "event_type", "click"),
        ("guild.host_event.v1", "name", None),
        ("guild.host_event.v1", "detail", 5),
        ("guild.permission_receipt.v1", "requested_mode", ""),
        ("guild.permission_receipt.v1", "selected_mode", None),
        ("guild.permission_receipt.v1", "gate_policy", "yolo"),
        ("guild.permission_receipt.v1", "scope", "fs"),
    ],
)
def test_orchestration_required_core_is_strict(version: str, key: str, bad: object) -> None:
    with pytest.raises(ContractError) as info:
        validate_contract({**GOOD[version], key: bad})
    assert info.value.key is not None and info.value.key.startswith(key)


@pytest.mark.parametrize(
    "version",
    ["guild.phase_result.v1", "guild.permission_receipt.v1", "guild.host_event.v1", "guild.qa_result.v1"],
)
def test_extra_keys_tolerated_on_the_four(version: str) -> None:
    assert validate_contract({**GOOD[version], "extra": 1}) == version


def test_handoff_through_the_registry_stays_strict() -> None:
    with pytest.raises(ContractError, match="strict"):
        validate_contract({**env(), "extra": 1})


def test_review_result_is_lenient_about_schema_version_but_exact_when_present() -> None:
    body = {k: v for k, v in GOOD["review_result.v1"].items() if k != "schema_version"}
    assert validate_contract(body) == "review_result.v1"
    assert validate_contract({**body, "extra": True}) == "review_result.v1"
    with pytest.raises(ContractError, match=r"review_result\.v1"):
        validate_contract({**body, "schema_version": "guild.review_result.v1"})
    with pytest.raises(ContractError) as info:
        validate_contract({**body, "blocking_findings": "none"})
    assert info.value.key == "blocking_findings"
    for key in ("packet_id", "artifact_sha256_reviewed", "verdict"):
        with pytest.raises(ContractError):
            validate_contract({k: v for k, v in body.items() if k != key})


@pytest.mark.parametrize(
    "value", [{"schema_version": "guild.other.v1"}, "All good, shipped it.", {"text": "prose"}]
)
def test_anything_else_is_rejected_never_prose(value: object) -> None:
    with pytest.raises(ContractError):
        validate_contract(value)


# ---------------------------------------------------------------------------- the normalizer

REVIEW = {
    "packet_id": "r1/api",
    "artifact_sha256_reviewed": "a" * 64,
    "verdict": "pass",
    "blocking_findings": [],
}


@pytest.mark.parametrize(
    "shape",
    [
        REVIEW,
        json.dumps(REVIEW),
        f"Here is my review.\n\n```json\n{json.dumps(REVIEW, indent=2)}\n```\n",
        {"result": REVIEW, "reasoning": "looked at it"},
        {"result": json.dumps(REVIEW)},
        json.dumps(REVIEW).encode(),
    ],
    ids=["object", "json-text", "fenced-block", "envelope", "envelope-of-text", "bytes"],
)
def test_the_normalizer_unwraps_the_shapes_results_arrive_in(shape: Any) -> None:
    from agentrt.teams.normalize import normalize_contract

    version, result = normalize_contract(shape)
    assert version == "review_result.v1" and result["verdict"] == "pass"
    assert normalize_contract(shape, expect="review_result.v1")[1]["schema_version"] == "review_result.v1"


@pytest.mark.parametrize(
    ("value", "expect", "message"),
    [
        ("Looks good to me!", None, "is prose, not a result"),
        (f"```json\n{json.dumps(REVIEW)}\n```\n```json\n{json.dumps(REVIEW)}\n```", None, "2 fenced blocks"),
        ("{not json", None, "looks like JSON but is not"),
        ([REVIEW], None, "a result is a JSON object, got list"),
        ({**REVIEW, "schema_version": "guild.mystery.v9"}, None, "not in the closed registry"),
        ({**REVIEW, "blocking_findings": "none"}, None, "blocking_findings"),
        (
            {"schema_version": "guild.handoff.v2", "task_id": "x"},
            "review_result.v1",
            "expected a review_result.v1",
        ),
        (REVIEW, "guild.mystery.v9", "is not one of the six contracts"),
    ],
)
def test_the_normalizer_refuses_anything_else_never_as_prose(
    value: Any, expect: str | None, message: str
) -> None:
    from agentrt.teams.normalize import normalize_contract

    with pytest.raises(ContractError, match=re.escape(message)):
        normalize_contract(value, expect=expect)


def test_the_normalizer_checks_strict_contracts_strictly() -> None:
    from agentrt.teams.normalize import normalize_contract

    phase = {
        "schema_version": "guild.phase_result.v1",
        "run_id": "r1",
        "ts": "2026-01-01T00:00:00Z",
        "phase": "build",
        "status": "complete",
        "gate_passed": True,
        "outputs": [],
    }
    assert normalize_contract(f"```\n{json.dumps(phase)}\n```")[0] == "guild.phase_result.v1"
    with pytest.raises(ContractError, match="phase"):
        normalize_contract({**phase, "phase": "party"})
