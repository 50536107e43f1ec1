"""The team proposal, the gate verbs and the hash-chained decision trail."""

from __future__ import annotations

import copy

import pytest

from agentrt.teams import (
    ContractError,
    GateBlocked,
    apply_decision,
    canonical_hash,
    chain_entry,
    validate_proposal,
    verify_trail,
)
from agentrt.teams.gate import OPTIONS, team_file


def proposal(n_roles: int = 3) -> dict:
    roles = [
        {"specialist": f"r{i}", "reason": f"does part {i}", "source": "template", "default_tier": "mid"}
        for i in range(n_roles)
    ]
    lanes = [
        {"task_id": f"L{i}", "specialist": f"r{i}", "work_type": "draft", "depends_on": [], "tier": "mid"}
        for i in range(n_roles)
    ]
    return {
        "schema_version": "guild.team_proposal.v2",
        "slug": "demo",
        "phase": "build",
        "task": "build it",
        "roles": roles,
        "excluded": [{"specialist": "seo", "reason": "no public pages"}],
        "missing": [],
        "options": dict(OPTIONS),
        "lanes": lanes,
    }


def decide(p: dict, verb: str, **args: object) -> dict:
    return {"schema_version": "guild.team_decision.v1", "verb": verb, "proposal": canonical_hash(p), **args}


def test_valid_proposal_no_size_cap() -> None:
    assert validate_proposal(proposal(40))["slug"] == "demo"


def test_every_role_needs_a_reason() -> None:
    p = proposal()
    p["roles"][1]["reason"] = ""
    with pytest.raises(ContractError, match="every role needs a reason"):
        validate_proposal(p)


def test_excluded_roles_listed_with_reasons_and_options_a_to_d() -> None:
    p = proposal()
    del p["excluded"]
    with pytest.raises(ContractError, match="excluded"):
        validate_proposal(p)
    p = proposal()
    p["excluded"][0]["reason"] = " "
    with pytest.raises(ContractError, match="excluded"):
        validate_proposal(p)
    p = proposal()
    del p["options"]["D"]
    with pytest.raises(ContractError, match="A, B, C and D"):
        validate_proposal(p)


def test_approve_opens_the_gate() -> None:
    p = proposal()
    approved, same = apply_decision(p, decide(p, "approve"))
    assert approved and same == p


@pytest.mark.parametrize("reply", [None, {}, {"verb": ""}, "approve", {"note": "looks fine"}])
def test_missing_decision_blocks(reply: object) -> None:
    with pytest.raises(GateBlocked, match="missing decision"):
        apply_decision(proposal(), reply)


def test_stale_decision_blocks() -> None:
    p = proposal()
    old = decide(p, "approve")
    _, changed = apply_decision(p, decide(p, "add", specialist="qa", reason="tests"))
    with pytest.raises(GateBlocked, match="stale decision"):
        apply_decision(changed, old)
    with pytest.raises(GateBlocked, match="stale decision"):
        apply_decision(p, {"verb": "approve"})


@pytest.mark.parametrize("flag", ["auto_approve", "auto", "force", "yes"])
def test_no_flag_auto_approves(flag: str) -> None:
    p = proposal()
    with pytest.raises(GateBlocked, match=flag):
        apply_decision(p, {**decide(p, "approve"), flag: True})
    with pytest.raises(GateBlocked):
        apply_decision(p, {"verb": "approve", flag: True})


def test_unknown_verb_blocks() -> None:
    p = proposal()
    with pytest.raises(GateBlocked, match="not a gate verb"):
        apply_decision(p, decide(p, "accept"))


def test_restructure_is_not_an_approval() -> None:
    p = proposal()
    lanes = copy.deepcopy(p["lanes"])
    lanes[0]["tier"] = "powerful"
    approved, new = apply_decision(p, decide(p, "restructure", lanes=lanes))
    assert not approved
    assert new["lanes"][0]["tier"] == "powerful"
    assert canonical_hash(new) != canonical_hash(p)
    approved, _ = apply_decision(new, decide(new, "approve"))
    assert approved


def test_add_remove_substitute_edit_dependencies() -> None:
    p = proposal()
    approved, p2 = apply_decision(p, decide(p, "add", specialist="seo", reason="now public pages"))
    assert not approved and "seo" in [r["specialist"] for r in p2["roles"]]
    assert all(e["specialist"] != "seo" for e in p2["excluded"])
    approved, p3 = apply_decision(p2, decide(p2, "remove", specialist="r0", reason="not needed"))
    assert not approved
    assert "r0" not in [r["specialist"] for r in p3["roles"]]
    assert {"specialist": "r0", "reason": "not needed"} in p3["excluded"]
    assert p3["lanes"][0]["specialist"] == "developer"  # the generic implementer takes its lanes
    approved, p4 = apply_decision(p3, decide(p3, "substitute", old="r1", new="backend", reason="better fit"))
    assert not approved and p4["lanes"][1]["specialist"] == "backend"
    approved, p5 = apply_decision(p4, decide(p4, "edit_dependencies", task_id="L2", depends_on=["L0", "L1"]))
    assert not approved and p5["lanes"][2]["depends_on"] == ["L0", "L1"]


def test_verbs_need_reasons_and_valid_results() -> None:
    p = proposal()
    with pytest.raises(GateBlocked, match="needs a reason"):
        apply_decision(p, decide(p, "add", specialist="qa"))
    with pytest.raises(GateBlocked, match="already on the team"):
        apply_decision(p, decide(p, "add", specialist="r0", reason="x"))
    with pytest.raises(GateBlocked, match="not a lane"):
        apply_decision(p, decide(p, "edit_dependencies", task_id="L0", depends_on=["L9"]))
    _, p2 = apply_decision(p, decide(p, "edit_dependencies", task_id="L0", depends_on=["L1"]))
    with pytest.raises(GateBlocked, match="cycle"):
        apply_decision(p2, decide(p2, "edit_dependencies", task_id="L1", depends_on=["L0"]))


def trail(n: int) -> list[dict]:
    entries: list[dict] = []
    for i in range(n):
        entries.append(chain_entry(entries, {"verb": "add", "i": i}, "restructured"))
    return entries


def test_trail_verifies_when_intact() -> None:
    entries = trail(3)
    verify_trail(entries, entries[-1]["hash"])
    verify_trail([], None)


def test_tampered_trail_blocks() -> None:
    entries = trail(3)
    head = entries[-1]["hash"]
    entries[1]["decision"]["verb"] = "approve"
    with pytest.raises(GateBlocked, match="tampered"):
        verify_trail(entries, head)
    entries = trail(3)
    del entries[1]
    with pytest.raises(GateBlocked, match="tampered"):
        verify_trail(entries, head)


def test_stale_trail_blocks() -> None:
    entries = trail(3)
    with pytest.raises(GateBlocked, match="stale trail"):
        verify_trail(entries[:2], entries[-1]["hash"])  # rolled back
    more = [*entries, chain_entry(entries, {"verb": "approve"}, "approved")]
    with pytest.raises(GateBlocked, match="stale trail"):
        verify_trail(more, entries[-1]["hash"])  # extended by someone else


def test_team_file_gives_each_specialist_its_default_tier() -> None:
    p = proposal()
    doc = team_file(p, "h" * 64)
    assert [s["default_tier"] for s in doc["specialists"]] == ["mid"] * 3
    assert doc["approved_proposal"] == canonical_hash(p)
