"""From a spec to a team proposal (pure, given the registry's view of the project).

A spec is Markdown with front matter listing its lanes (the plan half of ``/guild:plan``)::

    ---
    slug: csv-export
    phase: build
    task: Add CSV export to the reports page
    lanes:
      - {task_id: api, specialist: backend, title: ..., work_type: draft, files: 3, brief: ...}
      - {task_id: tests, specialist: qa, work_type: review, depends_on: [api], ...}
    excluded:
      - {specialist: seo, reason: no public pages change}
    ---
    Prose for the humans.

Composition matches each lane's specialist against the project's specialists (reused), the shipped
templates (minted on approval) and the machinery agents; a role found in none is listed as missing
and its lanes go to the generic ``developer`` unless option A (a gated mint) is chosen at the gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any  # Any: specs and proposals are parsed YAML/JSON

from agentrt.exceptions import ContractError
from agentrt.teams import _yaml
from agentrt.teams.gate import OPTIONS, PROPOSAL_SCHEMA, validate_proposal
from agentrt.teams.registry import Registry, Specialist
from agentrt.teams.tiers import Lane, TierConfig, score_lane, unscored_lane

__all__ = ["lane_signals", "parse_spec", "propose"]

_LANE_KEYS = {
    "task_id", "specialist", "title", "work_type", "files", "blast_radius", "depends_on",
    "depends_on_contract", "sensitive", "tier_pin", "brief", "reviews", "read",
}  # fmt: skip


def parse_spec(text: str, where: str = "spec") -> dict[str, Any]:
    header, body = _yaml.split_front_matter(text, where)
    for key in ("slug", "task", "lanes"):
        if key not in header:
            raise ContractError(where, key, "is required in the spec's front matter")
    if not isinstance(header["lanes"], list) or not header["lanes"]:
        raise ContractError(where, "lanes", "must list at least one lane")
    for i, lane in enumerate(header["lanes"]):
        if not isinstance(lane, Mapping):
            raise ContractError(where, f"lanes[{i}]", "must be a mapping")
        for key in ("task_id", "specialist", "work_type"):
            if not isinstance(lane.get(key), str) or not lane[key]:
                raise ContractError(where, f"lanes[{i}].{key}", "is required (a non-empty string)")
        read = lane.get("read", [])
        if not isinstance(read, list) or not all(isinstance(p, str) and p for p in read):
            raise ContractError(
                where, f"lanes[{i}].read", "must be a list of file paths (relative to the project)"
            )
        for key in lane:
            if key not in _LANE_KEYS:
                raise ContractError(
                    where, f"lanes[{i}].{key}", f"is not a lane key ({', '.join(sorted(_LANE_KEYS))})"
                )
    _wire_reviews(header["lanes"], where)
    return {"phase": "build", "excluded": [], **header, "body": body.strip()}


def _wire_reviews(lanes: list[Any], where: str) -> None:
    """A reviewer lane (``reviews: TASK``) runs after the lane it reviews, and a lane that depends on
    a reviewed lane waits for its review too: the reviewed lane is done for others only once its
    review gate passed."""
    ids = [lane["task_id"] for lane in lanes]
    reviewer_of: dict[str, str] = {}
    for i, lane in enumerate(lanes):
        target = lane.get("reviews")
        if target is None:
            continue
        if target not in ids or target == lane["task_id"]:
            raise ContractError(
                where, f"lanes[{i}].reviews", f"must name another lane of the spec, got {target!r}"
            )
        if target in reviewer_of:
            raise ContractError(
                where,
                f"lanes[{i}].reviews",
                f"lane {target!r} already has a reviewer ({reviewer_of[target]})",
            )
        reviewer_of[target] = lane["task_id"]
        lane["depends_on"] = list(dict.fromkeys([*(lane.get("depends_on") or []), target]))
    for lane in lanes:
        for dep in list(lane.get("depends_on") or []):
            reviewer = reviewer_of.get(dep)
            if reviewer is not None and reviewer != lane["task_id"] and reviewer not in lane["depends_on"]:
                lane["depends_on"] = [*lane["depends_on"], reviewer]


def lane_signals(lane: Mapping[str, Any], purpose: str | None, escalations: int = 0) -> Lane:
    """The scorer's view of a lane of a proposal."""
    return Lane(
        task_id=lane["task_id"],
        work_type=lane["work_type"],
        files=int(lane.get("files", 0)),
        blast_radius=lane.get("blast_radius", "low"),
        depends_on_contract=bool(lane.get("depends_on_contract", False)),
        sensitive=bool(lane.get("sensitive", False)),
        escalations=escalations,
        purpose=purpose,
        tier_pin=lane.get("tier_pin"),
    )


def propose(spec: Mapping[str, Any], registry: Registry, config: TierConfig) -> dict[str, Any]:
    """The full team for the spec (no size cap), each role with its reason, excluded roles listed."""
    roles: list[dict[str, Any]] = []
    missing: list[str] = []
    lanes: list[dict[str, Any]] = []
    found: dict[str, Specialist | None] = {}
    for raw in spec["lanes"]:
        name = raw["specialist"]
        if name not in found:
            found[name] = registry.resolve(name)
            if found[name] is None:
                missing.append(name)
        spec_of = found[name]
        lane = {k: raw[k] for k in raw}
        lane.setdefault("depends_on", [])
        if spec_of is None:
            lane["specialist"] = "developer"  # option C by default: the generic implementer
            lane["wanted_specialist"] = name
            spec_of = found.setdefault("developer", registry.resolve("developer"))
        assert spec_of is not None
        signals = lane_signals(lane, spec_of.purpose)
        if config.enabled:
            lane["tier"] = score_lane(signals, config).tier
        else:  # models.enabled: false -- nothing is scored, at plan time either
            lane["tier"] = unscored_lane(signals, spec_of.default_tier, config).tier
        lanes.append(lane)
    for name in dict.fromkeys(lane["specialist"] for lane in lanes):
        spec_of = found[name]
        assert spec_of is not None
        owns = [
            f"{lane['task_id']} ({lane.get('title') or lane['work_type']})"
            for lane in lanes
            if lane["specialist"] == name
        ]
        source = {"project": "existing"}.get(spec_of.source, spec_of.source)
        roles.append(
            {
                "specialist": name,
                "reason": f"{spec_of.purpose}: owns lane{'s' if len(owns) > 1 else ''} {', '.join(owns)}",
                "source": source,
                "default_tier": spec_of.default_tier,
                "purpose": spec_of.purpose,
            }
        )
    excluded = [dict(e) for e in spec.get("excluded") or []]
    excluded += [
        {"specialist": m, "reason": "no project specialist or template fits (option A mints one)"}
        for m in missing
    ]
    proposal = {
        "schema_version": PROPOSAL_SCHEMA,
        "slug": spec["slug"],
        "phase": spec.get("phase", "build"),
        "task": spec["task"],
        "roles": roles,
        "excluded": excluded,
        "missing": missing,
        "options": dict(OPTIONS),
        "lanes": lanes,
    }
    return validate_proposal(proposal)
