"""The composer's options A-D for a missing role, as gate replies that do what they say, and an
``add`` with ``mint: true`` that gives the new role its lanes in the same decision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrt.teams import GateBlocked, Registry, TierConfig, apply_decision, canonical_hash
from agentrt.teams.options import option_replies
from agentrt.teams.plan import parse_spec, propose

SPEC = """---
slug: ledger
task: Reconcile the ledger
lanes:
  - {task_id: api, specialist: backend, work_type: draft}
  - {task_id: schema, specialist: data-steward, work_type: schema}
  - {task_id: audit, specialist: data-steward, work_type: review}
  - {task_id: docs, specialist: doc-writer, work_type: summarize}
excluded:
  - {specialist: seo, reason: nothing public}
---
"""


@pytest.fixture
def planned(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    registry = Registry(tmp_path)
    return propose(parse_spec(SPEC), registry, TierConfig()), registry.catalogue()


def option(p: dict[str, Any], choice: str, **args: Any) -> dict[str, Any]:
    return {"verb": "option", "proposal": canonical_hash(p), "choice": choice, "reason": "because", **args}


def owners(p: dict[str, Any]) -> dict[str, str]:
    return {lane["task_id"]: lane["specialist"] for lane in p["lanes"]}


def roles(p: dict[str, Any]) -> list[str]:
    return [r["specialist"] for r in p["roles"]]


def test_the_missing_role_is_parked_on_developer_with_four_replies_offered(planned: Any) -> None:
    p, _ = planned
    assert p["missing"] == ["data-steward"]
    assert owners(p) == {"api": "backend", "schema": "developer", "audit": "developer", "docs": "doc-writer"}
    replies = option_replies(p, canonical_hash(p))
    assert sorted(replies) == ["A", "B", "C", "D"]
    assert replies["B"]["templates"] == {"data-steward": "TEMPLATE"}
    assert option_replies({**p, "missing": []}, "x") == {}


def test_option_a_mints_the_role_and_gives_it_its_lanes_in_the_same_decision(planned: Any) -> None:
    p, catalogue = planned
    approved, new = apply_decision(p, option(p, "A"), catalogue)
    assert not approved  # an option is not an approval
    assert owners(new)["schema"] == owners(new)["audit"] == "data-steward"
    role = next(r for r in new["roles"] if r["specialist"] == "data-steward")
    assert role["source"] == "new"
    assert "developer" not in roles(new)  # it only held the parked lanes
    assert new["missing"] == [] and [e["specialist"] for e in new["excluded"]] == ["seo"]
    assert all("wanted_specialist" not in lane for lane in new["lanes"])


def test_option_b_gives_the_lanes_to_the_named_template(planned: Any) -> None:
    p, catalogue = planned
    _, new = apply_decision(p, option(p, "B", templates={"data-steward": "architect"}), catalogue)
    assert owners(new)["schema"] == "architect"
    role = next(r for r in new["roles"] if r["specialist"] == "architect")
    assert (role["source"], role["default_tier"]) == ("template", catalogue["architect"]["default_tier"])
    with pytest.raises(GateBlocked, match="names a shipped template for each missing role"):
        apply_decision(p, option(p, "B"), catalogue)
    with pytest.raises(GateBlocked, match="is not one of the template or existing specialists"):
        apply_decision(p, option(p, "B", templates={"data-steward": "nobody"}), catalogue)


def test_option_c_gives_the_lanes_to_an_existing_specialist(planned: Any) -> None:
    p, catalogue = planned
    _, new = apply_decision(p, option(p, "C", to="backend"), catalogue)
    assert owners(new) == {"api": "backend", "schema": "backend", "audit": "backend", "docs": "doc-writer"}
    assert "developer" not in roles(new) and roles(new).count("backend") == 1
    _, default = apply_decision(p, option(p, "C"), catalogue)
    assert owners(default)["schema"] == "developer" and default["missing"] == []
    with pytest.raises(GateBlocked, match="'to'"):
        apply_decision(p, option(p, "C", to="../evil"), catalogue)


def test_option_d_drops_the_lanes_and_excludes_the_role(planned: Any) -> None:
    p, catalogue = planned
    _, new = apply_decision(p, option(p, "D"), catalogue)
    assert sorted(owners(new)) == ["api", "docs"]
    assert {"specialist": "data-steward", "reason": "option D: because"} in new["excluded"]
    assert "developer" not in roles(new)
    # a lane that depends on a dropped one: refused, with the way out named
    p2 = {**p, "lanes": [*p["lanes"], {**p["lanes"][0], "task_id": "ship", "depends_on": ["audit"]}]}
    with pytest.raises(GateBlocked, match="lane ship depends on; edit_dependencies first"):
        apply_decision(p2, option(p2, "D"), catalogue)


def test_options_need_a_reason_a_missing_role_and_their_own_arguments(planned: Any) -> None:
    p, catalogue = planned
    with pytest.raises(GateBlocked, match="needs a reason"):
        apply_decision(p, {**option(p, "A"), "reason": ""}, catalogue)
    with pytest.raises(GateBlocked, match="must be one of A, B, C, D"):
        apply_decision(p, option(p, "E"), catalogue)
    with pytest.raises(GateBlocked, match="is not an argument of option A"):
        apply_decision(p, option(p, "A", to="backend"), catalogue)
    _, settled = apply_decision(p, option(p, "A"), catalogue)
    with pytest.raises(GateBlocked, match="no role is missing"):
        apply_decision(settled, option(settled, "D"), catalogue)


def test_add_with_mint_gives_the_new_role_its_lanes_in_the_same_decision(planned: Any) -> None:
    p, catalogue = planned
    add = {
        "verb": "add",
        "proposal": canonical_hash(p),
        "specialist": "data-steward",
        "mint": True,
        "reason": "owns the ledger schema",
    }
    _, new = apply_decision(p, add, catalogue)
    assert owners(new)["schema"] == owners(new)["audit"] == "data-steward"
    assert new["missing"] == [] and "developer" not in roles(new)


def test_add_skill_adds_a_skill_for_team_roles_and_blocks_a_bad_one(planned: Any) -> None:
    p, catalogue = planned
    skill = {
        "verb": "add_skill",
        "proposal": canonical_hash(p),
        "skill": "ledger-math",
        "reason": "rounding errors",
        "for": ["backend"],
        "description": "exact decimal arithmetic",
        "instructions": "Use Decimal, never float.",
    }
    approved, new = apply_decision(p, skill, catalogue)
    assert not approved and new["skills"] == [
        {k: v for k, v in skill.items() if k not in ("verb", "proposal")}
    ]
    with pytest.raises(GateBlocked, match="needs instructions"):
        apply_decision(p, {**skill, "instructions": ""}, catalogue)
    with pytest.raises(GateBlocked, match="is not a plain name"):
        apply_decision(p, {**skill, "skill": "../x"}, catalogue)
    with pytest.raises(GateBlocked, match="already a skill"):
        apply_decision(new, {**skill, "proposal": canonical_hash(new)}, catalogue)
