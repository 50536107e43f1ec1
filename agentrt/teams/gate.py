"""The team proposal (``guild.team_proposal.v2``), the team decision gate (``guild.team_decision.v1``)
and its hash-chained decision trail.

All pure: proposals and decisions are plain JSON data (so they cross the lead's awaits and sit in its
checkpoints); the lead's tools write them to disk.  The gate opens only on an ``approve`` of the
current proposal with an intact trail.  A missing decision, a decision about another proposal
(stale), or a trail whose chain is broken (tampered) or rolled back (stale) blocks.  ``restructure``,
``add``, ``remove``, ``substitute`` and ``edit_dependencies`` change the proposal and ask again: none
of them is an approval, and no flag or key approves on anyone's behalf.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any  # Any: proposals and decisions are JSON from a model or person

from agentrt.exceptions import ContractError, GateBlocked
from agentrt.teams.contracts import TIERS
from agentrt.teams.names import check_name
from agentrt.teams.options import OPTION_KEYS, apply_option
from agentrt.teams.skills import SKILL_KEYS, add_skill

__all__ = [
    "DECISION_SCHEMA",
    "OPTIONS",
    "PROPOSAL_SCHEMA",
    "VERBS",
    "apply_decision",
    "canonical_hash",
    "chain_entry",
    "team_file",
    "validate_proposal",
    "verify_trail",
]

PROPOSAL_SCHEMA = "guild.team_proposal.v2"
DECISION_SCHEMA = "guild.team_decision.v1"
VERBS = ("approve", "restructure", "add", "remove", "substitute", "edit_dependencies", "option", "add_skill")
#: What to do about missing roles, as the composer offers it.
OPTIONS = {
    "A": "mint a new specialist for each missing role (gated: only on this explicit request)",
    "B": "mint the matching shipped templates into .agentrt/agents/ (the default)",
    "C": "give the missing roles' lanes to an existing specialist or the generic developer",
    "D": "proceed without the missing roles (they are listed as excluded)",
}
GENESIS = "0" * 64
_DECISION_KEYS: dict[str, tuple[str, ...]] = {
    "approve": (),
    "restructure": ("roles", "lanes", "excluded", "reason"),
    "add": ("specialist", "reason", "mint"),
    "remove": ("specialist", "reason", "reassign_to"),
    "substitute": ("old", "new", "reason"),
    "edit_dependencies": ("task_id", "depends_on"),
    "option": OPTION_KEYS,
    "add_skill": SKILL_KEYS,
}


def canonical_hash(value: Any) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces) of ``value``."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _roles(proposal: Mapping[str, Any]) -> list[str]:
    return [r["specialist"] for r in proposal["roles"]]


def validate_proposal(proposal: Any) -> dict[str, Any]:
    """Check a team proposal: reasons on every role and exclusion, options A-D, lanes on known roles,
    dependencies that exist and do not cycle.  There is no size cap."""
    where = PROPOSAL_SCHEMA
    if not isinstance(proposal, Mapping) or proposal.get("schema_version") != PROPOSAL_SCHEMA:
        raise ContractError(where, "schema_version", f'must be "{PROPOSAL_SCHEMA}"')
    for key in ("slug", "phase", "task"):
        if not isinstance(proposal.get(key), str) or not proposal[key]:
            raise ContractError(where, key, "must be a non-empty string")
    for key in ("slug", "phase"):  # they name the team file
        check_name(proposal[key], where, key)
    names: list[str] = []
    for i, role in enumerate(proposal.get("roles") or []):
        if (
            not isinstance(role, Mapping)
            or not isinstance(role.get("specialist"), str)
            or not role["specialist"]
        ):
            raise ContractError(where, f"roles[{i}].specialist", "must name a specialist")
        check_name(role["specialist"], where, f"roles[{i}].specialist")  # it names files
        if not isinstance(role.get("reason"), str) or not role["reason"].strip():
            raise ContractError(
                where, f"roles[{i}].reason", f"every role needs a reason ({role['specialist']} has none)"
            )
        if role.get("default_tier") not in TIERS:
            raise ContractError(where, f"roles[{i}].default_tier", f"must be one of {', '.join(TIERS)}")
        names.append(role["specialist"])
    if not names:
        raise ContractError(where, "roles", "a team needs at least one role")
    if len(set(names)) != len(names):
        raise ContractError(where, "roles", f"lists a specialist twice: {names}")
    if not isinstance(proposal.get("excluded"), list):
        raise ContractError(where, "excluded", "must list the excluded roles (may be empty)")
    for i, ex in enumerate(proposal["excluded"]):
        if not isinstance(ex.get("reason"), str) or not ex["reason"].strip():
            raise ContractError(where, f"excluded[{i}].reason", "every excluded role needs a reason")
    if sorted(proposal.get("options") or {}) != ["A", "B", "C", "D"]:
        raise ContractError(where, "options", "must offer exactly the options A, B, C and D")
    for i, ex in enumerate(proposal["excluded"]):
        if ex.get("specialist") is not None:
            check_name(ex["specialist"], where, f"excluded[{i}].specialist")
    for i, lane in enumerate(proposal.get("lanes") or []):
        if not isinstance(lane, Mapping):
            raise ContractError(where, f"lanes[{i}]", "must be a mapping")
        check_name(lane.get("task_id"), where, f"lanes[{i}].task_id")  # it names files
    ids = [lane["task_id"] for lane in proposal.get("lanes") or []]
    if len(set(ids)) != len(ids):
        raise ContractError(where, "lanes", f"task ids must be unique, got {ids}")
    for lane in proposal.get("lanes") or []:
        if lane.get("specialist") not in names:
            raise ContractError(
                where,
                f"lanes[{lane['task_id']}].specialist",
                f"{lane.get('specialist')!r} is not a role of the team",
            )
        for dep in lane.get("depends_on") or []:
            if dep not in ids:
                raise ContractError(
                    where, f"lanes[{lane['task_id']}].depends_on", f"{dep!r} is not a lane of the team"
                )
        if lane.get("tier") not in TIERS:
            raise ContractError(where, f"lanes[{lane['task_id']}].tier", f"must be one of {', '.join(TIERS)}")
    _check_acyclic(proposal.get("lanes") or [])
    return dict(proposal)


def _check_acyclic(lanes: Sequence[Mapping[str, Any]]) -> None:
    deps = {lane["task_id"]: list(lane.get("depends_on") or []) for lane in lanes}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        if state.get(node) == 2:
            return
        if state.get(node) == 1:
            raise ContractError(
                PROPOSAL_SCHEMA, "depends_on", f"dependency cycle: {' -> '.join([*path, node])}"
            )
        state[node] = 1
        for dep in deps.get(node, []):
            visit(dep, [*path, node])
        state[node] = 2

    for node in deps:
        visit(node, [])


def apply_decision(
    proposal: Mapping[str, Any], decision: Any, catalogue: Mapping[str, Any] | None = None
) -> tuple[bool, dict[str, Any]]:
    """Apply one gate decision: ``(approved, proposal)``; the proposal is changed for every verb but
    ``approve``, and only ``approve`` of the current proposal returns ``approved=True``.

    ``catalogue`` (name -> ``{source, default_tier, purpose}``, from ``teams_plan``) lets ``option``
    and ``add`` check the names they give lanes to and take their default tiers.

    Raises :class:`GateBlocked` for a missing, unknown, malformed or stale decision.
    """
    where = DECISION_SCHEMA
    if not isinstance(decision, Mapping) or not decision.get("verb"):
        raise GateBlocked(where, "verb", f"missing decision: reply with one of {', '.join(VERBS)}")
    verb = decision["verb"]
    if decision.get("schema_version", DECISION_SCHEMA) != DECISION_SCHEMA:
        raise GateBlocked(where, "schema_version", f'must be "{DECISION_SCHEMA}"')
    if verb not in VERBS:
        raise GateBlocked(where, "verb", f"{verb!r} is not a gate verb ({', '.join(VERBS)})")
    allowed = {"schema_version", "verb", "proposal", *_DECISION_KEYS[verb]}
    for key in decision:
        if key not in allowed:
            raise GateBlocked(
                where, key, f"is not a key of a {verb!r} decision (allowed: {', '.join(sorted(allowed))})"
            )
    current = canonical_hash(proposal)
    if decision.get("proposal") != current:
        raise GateBlocked(
            where,
            "proposal",
            f"stale decision: it names proposal {decision.get('proposal')!r}, the current one is {current}",
        )
    if verb == "approve":
        return True, dict(proposal)
    new = copy.deepcopy(dict(proposal))
    reason = decision.get("reason")
    if verb in ("add", "remove", "substitute") and (not isinstance(reason, str) or not reason.strip()):
        raise GateBlocked(where, "reason", f"a {verb!r} decision needs a reason")
    if verb == "restructure":
        for key in ("roles", "lanes", "excluded"):
            if key in decision:
                new[key] = copy.deepcopy(decision[key])
    elif verb == "add":
        name = decision.get("specialist")
        if name in _roles(new):
            raise GateBlocked(where, "specialist", f"{name!r} is already on the team")
        known = (catalogue or {}).get(str(name)) or {}
        source = "new" if decision.get("mint") else known.get("source", "template")
        new["roles"].append(
            {
                "specialist": name,
                "reason": reason,
                "source": source,
                "default_tier": "mid" if decision.get("mint") else known.get("default_tier", "mid"),
            }
        )
        new["excluded"] = [e for e in new["excluded"] if e["specialist"] != name]
        parked_on = set()
        for lane in new["lanes"]:  # a role the spec wanted gets its parked lanes in this decision
            if lane.get("wanted_specialist") == name:
                parked_on.add(lane["specialist"])
                lane["specialist"] = name
                del lane["wanted_specialist"]
        new["missing"] = [m for m in new.get("missing") or [] if m != name]
        busy = {lane["specialist"] for lane in new["lanes"]}
        new["roles"] = [  # a machinery role that only held those lanes leaves the team
            r
            for r in new["roles"]
            if r["specialist"] in busy or r["specialist"] not in parked_on or r.get("source") != "machinery"
        ]
    elif verb == "remove":
        name = decision.get("specialist")
        if name not in _roles(new):
            raise GateBlocked(where, "specialist", f"{name!r} is not on the team")
        target = decision.get("reassign_to", "developer")
        new["roles"] = [r for r in new["roles"] if r["specialist"] != name]
        new["excluded"].append({"specialist": name, "reason": reason})
        if any(lane["specialist"] == name for lane in new["lanes"]) and target not in _roles(new):
            new["roles"].append(
                {
                    "specialist": target,
                    "reason": f"takes the lanes of {name} ({reason})",
                    "source": "machinery",
                    "default_tier": "mid",
                }
            )
        for lane in new["lanes"]:
            if lane["specialist"] == name:
                lane["specialist"] = target
    elif verb == "substitute":
        old, repl = decision.get("old"), decision.get("new")
        if old not in _roles(new):
            raise GateBlocked(where, "old", f"{old!r} is not on the team")
        for role in new["roles"]:
            if role["specialist"] == old:
                role.update(specialist=repl, reason=reason)
        for lane in new["lanes"]:
            if lane["specialist"] == old:
                lane["specialist"] = repl
        new["excluded"].append({"specialist": old, "reason": f"substituted by {repl}: {reason}"})
    elif verb == "option":
        new = apply_option(new, decision, catalogue)
    elif verb == "add_skill":
        new = add_skill(new, decision)
    elif verb == "edit_dependencies":
        task_id = decision.get("task_id")
        lanes = {lane["task_id"]: lane for lane in new["lanes"]}
        if task_id not in lanes:
            raise GateBlocked(where, "task_id", f"{task_id!r} is not a lane of the team")
        deps = decision.get("depends_on")
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            raise GateBlocked(where, "depends_on", "must be a list of task ids")
        lanes[task_id]["depends_on"] = list(deps)
    try:
        validate_proposal(new)
    except ContractError as exc:
        raise GateBlocked(where, exc.key, f"the {verb} would leave an invalid team: {exc.rule}") from None
    return False, new


# -- the decision trail


def chain_entry(
    prev: Sequence[Mapping[str, Any]], decision: Mapping[str, Any], outcome: str
) -> dict[str, Any]:
    """The next trail entry after ``prev``: it carries the previous entry's hash and its own."""
    entry = {
        "schema_version": DECISION_SCHEMA,
        "seq": len(prev) + 1,
        "decision": dict(decision),
        "outcome": outcome,
        "prev": prev[-1]["hash"] if prev else GENESIS,
    }
    entry["hash"] = canonical_hash(entry)
    return entry


def verify_trail(entries: Sequence[Mapping[str, Any]], head: str | None) -> None:
    """Check the chain (tampered if any entry's hash or link is wrong) and that it ends at ``head``,
    the hash the lead last wrote (stale if it was rolled back or extended by someone else)."""
    where = "team decision trail"
    prev = GENESIS
    for i, entry in enumerate(entries):
        body = {k: v for k, v in entry.items() if k != "hash"}
        if entry.get("prev") != prev or entry.get("seq") != i + 1:
            raise GateBlocked(
                where, f"entry {i + 1}", "tampered trail: the chain link to the previous entry is broken"
            )
        if canonical_hash(body) != entry.get("hash"):
            raise GateBlocked(where, f"entry {i + 1}", "tampered trail: the entry does not match its hash")
        prev = str(entry["hash"])
    last = entries[-1]["hash"] if entries else None
    if last != head:
        raise GateBlocked(where, None, f"stale trail: it ends at {last!r}, the lead last recorded {head!r}")


def team_file(proposal: Mapping[str, Any], trail_head: str) -> dict[str, Any]:
    """The approved team as ``.agentrt/team/<slug>.<phase>.yaml`` holds it."""
    return {
        "schema_version": "agentrt.team.v1",
        "slug": proposal["slug"],
        "phase": proposal["phase"],
        "task": proposal["task"],
        "approved_proposal": canonical_hash(proposal),
        "decision_trail_head": trail_head,
        "backend": "in-process child runs",  # an audit mirror, as in the reference
        "specialists": [
            {"name": r["specialist"], "default_tier": r["default_tier"], "reason": r["reason"]}
            for r in proposal["roles"]
        ],
        "lanes": [
            {
                "task_id": lane["task_id"],
                "specialist": lane["specialist"],
                "tier": lane["tier"],
                "depends_on": list(lane.get("depends_on") or []),
            }
            for lane in proposal["lanes"]
        ],
    }
