"""Specialists: files with front matter, reuse never re-create, 15 shipped templates, gated minting."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrt.teams import ContractError, Registry, Specialist
from agentrt.teams.bundle import build_bundle, lint_bundle, universal_layer
from agentrt.teams.registry import (
    MACHINERY,
    parse_specialist,
    render_specialist,
    template_names,
    template_text,
)

SHIPPED = {
    "architect", "researcher", "backend", "frontend", "devops", "qa", "mobile", "security",
    "copywriter", "doc-writer", "technical-writer", "social-media", "seo",
    "marketing", "sales",
}  # fmt: skip


def test_fifteen_templates_ship_as_package_data() -> None:
    assert set(template_names()) == SHIPPED
    for name in SHIPPED:
        spec = parse_specialist(template_text(name), name)
        assert spec.name == name and spec.tools and spec.boundaries
    assert parse_specialist(template_text("researcher")).purpose == "research"


def test_a_template_is_not_a_project_specialist_until_minted(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    assert reg.names() == []
    assert reg.resolve("qa") is not None and reg.resolve("qa").source == "template"  # type: ignore[union-attr]
    assert reg.compose(["qa", "advisor", "wizard"]) == {
        "existing": [], "template": ["qa"], "machinery": ["advisor"], "missing": ["wizard"]
    }  # fmt: skip
    reg.mint_from_template("qa")
    assert reg.names() == ["qa"]
    assert reg.compose(["qa"])["existing"] == ["qa"]


def test_existing_specialist_is_reused_never_recreated(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    custom = Specialist("qa", "verification", "powerful", ("read",), ("only ours",), "Our own QA.")
    reg.root.mkdir(parents=True)
    reg.path("qa").write_text(render_specialist(custom))
    before = reg.path("qa").read_text()
    got = reg.mint_from_template("qa")
    assert got.default_tier == "powerful" and got.boundaries == ("only ours",)
    assert reg.path("qa").read_text() == before


def test_new_role_minted_only_through_the_gate(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    wizard = Specialist("wizard", "magic", "mid", ("read",), ("no spells in prod",), "Casts.")
    with pytest.raises(ContractError, match="explicit request through the team gate"):
        reg.mint_new(wizard, {})
    with pytest.raises(ContractError):
        reg.mint_new(wizard, {"verb": "add", "specialist": "wizard", "reason": "x"})  # no mint: true
    with pytest.raises(ContractError):
        reg.mint_new(wizard, {"verb": "approve", "mint": True, "specialist": "wizard"})
    assert reg.names() == []
    reg.mint_new(wizard, {"verb": "add", "specialist": "wizard", "mint": True, "reason": "needed"})
    assert reg.get("wizard") == wizard


def test_specialist_front_matter_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="front matter"):
        parse_specialist("no header")
    with pytest.raises(ContractError, match="default_tier"):
        parse_specialist("---\nname: x\npurpose: p\ndefault_tier: huge\ntools: []\nboundaries: []\n---\n")
    with pytest.raises(ContractError, match="boundaries"):
        parse_specialist("---\nname: x\npurpose: p\ndefault_tier: mid\ntools: []\n---\n")


def test_machinery_agents_resolve_but_are_not_templates(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    assert set(MACHINERY) == {"advisor", "context-manager", "developer", "team-lead"}
    assert reg.resolve("advisor").default_tier == "powerful"  # type: ignore[union-attr]
    assert reg.resolve("developer").default_tier == "mid"  # type: ignore[union-attr]
    with pytest.raises(ContractError):
        reg.mint_from_template("developer")


# -- context bundles


def test_universal_layer_byte_identical_across_lanes_and_cap_enforced(tmp_path: Path) -> None:
    uni = universal_layer("run1", "Build the thing.")
    spec = parse_specialist(template_text("backend")).to_dict()
    a = build_bundle(uni, spec, {"task_id": "L1", "work_type": "draft", "brief": "one"})
    b = build_bundle(uni, spec, {"task_id": "L2", "work_type": "review", "brief": "two"})
    assert a.startswith(uni) and b.startswith(uni)
    with pytest.raises(ContractError, match="over the cap of 6000"):
        build_bundle(uni, spec, {"task_id": "L3", "work_type": "draft", "brief": "x" * 30000})
    path = tmp_path / "b.md"
    path.write_text(a)
    assert lint_bundle(path)[0] == 0
    path.write_text("x" * 24004)
    code, message = lint_bundle(path)
    assert code == 2 and "over the cap" in message
