"""The team's host-side tools: every file the lead or a lane reads or writes goes through one.

Tools run in the host, and their results are journaled, so a resumed lead never re-reads a spec,
re-writes a receipt or re-reads a config it already had: what the run decided stays decided.
Paths are under the project: ``.agentrt/agents/``, ``.agentrt/team/``, ``.agentrt/context/<run>/``
and ``.agentrt/runs/<run>/`` (``handoffs/``, ``bus/``, ``gate/``, ``routing.jsonl``).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any  # Any: JSON/YAML documents in and out of the team tools

from agentrt._sdk.tools import tool
from agentrt.exceptions import ContractError, GateBlocked
from agentrt.teams import _yaml
from agentrt.teams.acceptance import accept_receipt, acceptance_path, at_step, check_accepted
from agentrt.teams.contracts import validate_contract
from agentrt.teams.gate import chain_entry, team_file, verify_trail
from agentrt.teams.interview import boundary_scan
from agentrt.teams.names import check_name, confined
from agentrt.teams.normalize import normalize_contract
from agentrt.teams.plan import parse_spec, propose
from agentrt.teams.recall import recall
from agentrt.teams.receipts import parse_receipt
from agentrt.teams.registry import Registry, Specialist, render_specialist, template_names
from agentrt.teams.skills import render_skill
from agentrt.teams.tiers import TierConfig

__all__ = ["CONFIG_FILE", "TOOLS", "load_config", "run_dir"]

CONFIG_FILE = ".agentrt/teams.yaml"


def run_dir(project: str | os.PathLike[str], run_id: str) -> Path:
    """``.agentrt/runs/<run_id>`` under the project; ``run_id`` must be a plain name."""
    return confined(project, ".agentrt", "runs", check_name(run_id, "team run", "run_id"))


def load_config(project: str | os.PathLike[str]) -> dict[str, Any]:
    """``.agentrt/teams.yaml``: ``models`` (thresholds, tiers, escalationMarkers,
    shortOutputThreshold, advisorRounds, enabled), ``retry.max_attempts``, ``context.max_tokens``,
    ``review.max_rounds`` (how often a lane's review gate may send it back; default 2)."""
    path = Path(project) / CONFIG_FILE
    doc: Any = {}
    if path.is_file():
        doc = _yaml.load(path.read_text(encoding="utf-8"), str(path)) or {}
    if not isinstance(doc, dict):
        raise ContractError(str(path), None, "must be a YAML mapping")
    models = dict(doc.get("models") or {})
    TierConfig.from_config(models)  # refuse a bad config before anything is dispatched
    return {
        "models": models,
        "max_attempts": int((doc.get("retry") or {}).get("max_attempts", 2)),
        "review_rounds": int((doc.get("review") or {}).get("max_rounds", 2)),
        "max_tokens": int((doc.get("context") or {}).get("max_tokens", 6000)),
    }


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@tool
def teams_plan(project: str, spec: str, model_tier: str | None = None) -> dict[str, Any]:
    """Read the spec and the config, compose the team proposal.

    Args:
        project: The project directory.
        spec: The spec file (Markdown with front matter listing lanes), relative to the project.
        model_tier: The run-wide tier pin, if any.
    """
    path = Path(project) / spec
    doc = parse_spec(path.read_text(encoding="utf-8"), str(path))
    config = load_config(project)
    registry = Registry(project)
    proposal = propose(doc, registry, TierConfig.from_config(config["models"], model_tier))
    specialists = {}
    for role in proposal["roles"]:
        found = registry.resolve(role["specialist"])
        if found is not None:
            specialists[found.name] = {**found.to_dict(), "body": found.body}
    return {
        "proposal": proposal,
        "config": config,
        "specialists": specialists,
        "catalogue": registry.catalogue(),
        "body": doc["body"],
    }


@tool
def teams_dispatch_config(project: str, specialists: list[str]) -> dict[str, Any]:
    """The config and the approved team's specialists as they are at dispatch (the scorer confirms
    or replaces the plan's tiers with them; a role added or substituted at the gate is resolved here).

    Args:
        project: The project directory.
        specialists: The names of the approved team's specialists.
    """
    registry = Registry(project)
    resolved = {}
    for name in specialists:
        found = registry.resolve(name)
        if found is not None:
            resolved[name] = {**found.to_dict(), "body": found.body}
    return {"config": load_config(project), "specialists": resolved}


@tool
def teams_gate_record(
    project: str, run_id: str, head: str | None, decision: Any, outcome: str
) -> dict[str, Any]:
    """Verify the decision trail ends at ``head`` (intact, not rolled back), then append one entry.

    Args:
        project: The project directory.
        run_id: The team run.
        head: The trail head the lead last recorded (None before the first decision).
        decision: The decision as received.
        outcome: approved, blocked, or the verb that changed the proposal.
    """
    path = run_dir(project, run_id) / "gate" / "decisions.jsonl"
    entries = []
    if path.is_file():
        entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    try:
        verify_trail(entries, head)
    except GateBlocked as exc:
        return {"ok": False, "blocked": str(exc)}
    entry = chain_entry(entries, decision if isinstance(decision, dict) else {"reply": decision}, outcome)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")
    return {"ok": True, "head": entry["hash"]}


@tool
def teams_draft_specialist(project: str, draft: dict[str, Any], neighbours: list[str]) -> dict[str, Any]:
    """Write a new role's draft to ``.agentrt/agents/proposed/<name>.md`` (not live) and scan its
    boundaries against its neighbours: the named team roles and every project specialist.

    Args:
        project: The project directory.
        draft: The draft specialist (name, purpose, default_tier, tools, boundaries, body).
        neighbours: The other roles of the team.
    """
    registry = Registry(project)
    spec = Specialist(
        draft["name"],
        draft["purpose"],
        draft["default_tier"],
        tuple(draft["tools"]),
        tuple(draft["boundaries"]),
        draft["body"],
    )
    path = confined(registry.root / "proposed", f"{check_name(spec.name, 'specialist', 'name')}.md")
    _write(path, render_specialist(spec))
    others: dict[str, Any] = {}
    for name in [*neighbours, *registry.names()]:
        found = registry.resolve(name)
        if found is not None and name != spec.name:
            others[name] = found.to_dict()
    return {"path": str(path), "overlaps": boundary_scan(draft, others)}


@tool
def teams_recall(project: str, paths: list[str], query: str, threshold: float) -> dict[str, Any]:
    """Recall for one lane: its files (relative to the project, confined to it) chunked and scored
    against its title and brief (:func:`agentrt.teams.recall.recall`).

    Args:
        project: The project directory.
        paths: The lane's files (its spec's read list).
        query: The lane's title and brief.
        threshold: models.recallScoreThreshold.
    """
    files: dict[str, str] = {}
    missing: list[str] = []
    for rel in paths:
        try:
            files[rel] = confined(project, rel).read_text(encoding="utf-8", errors="replace")
        except (OSError, ContractError):
            missing.append(rel)
    return {**recall(files, query, threshold), "missing": missing}


def _skills_dir(project: str) -> Path:
    return confined(project, ".agentrt", "skills")


@tool
def teams_draft_skill(project: str, skill: dict[str, Any], roles: list[str]) -> dict[str, Any]:
    """Draft a skill a gate decision asked for to ``.agentrt/skills/proposed/<name>.md`` (not live)
    and name its clashes: a live skill of that name, a role it is for that left the team.

    Args:
        project: The project directory.
        skill: The skill (skill, reason, for, description, instructions).
        roles: The team's roles now.
    """
    name = check_name(skill["skill"], "skill", "skill")
    path = confined(_skills_dir(project) / "proposed", f"{name}.md")
    _write(path, render_skill(skill))
    clashes = []
    live = confined(_skills_dir(project), f"{name}.md")
    if live.is_file():
        clashes.append(f"a skill {name!r} is live already ({live}); it is kept, this draft is not minted")
    clashes += [f"role {r!r} it is for is not on the team" for r in skill["for"] if r not in roles]
    return {"path": str(path), "clashes": clashes}


@tool
def teams_write_team(project: str, run_id: str, proposal: dict[str, Any], head: str, mints: list[Any]) -> str:
    """On approval: mint the team's templates (and gated new roles), write the team file.

    Args:
        project: The project directory.
        run_id: The team run.
        proposal: The approved proposal.
        head: The decision trail's head, recorded in the team file.
        mints: The gate decisions that asked for a new role (add with mint true).
    """
    registry = Registry(project)
    for decision in mints:  # each new role goes live from its interviewed draft in proposed/
        name = decision["specialist"]
        draft = decision.get("draft")
        if registry.get(name) is None:
            spec = (
                Specialist(
                    name,
                    draft["purpose"],
                    draft["default_tier"],
                    tuple(draft["tools"]),
                    tuple(draft["boundaries"]),
                    draft["body"],
                )
                if draft
                else Specialist(
                    name, "custom", "mid", ("read",), (f"only the lanes given to {name}",), decision["reason"]
                )
            )
            registry.mint_new(spec, decision)
        proposed = registry.root / "proposed" / f"{check_name(name, 'specialist', 'name')}.md"
        proposed.unlink(missing_ok=True)
    for skill in proposal.get("skills") or []:  # approved skills go live, never over a live one
        name = check_name(skill["skill"], "skill", "skill")
        live = confined(_skills_dir(project), f"{name}.md")
        if not live.is_file():
            _write(live, render_skill(skill))
        (_skills_dir(project) / "proposed" / f"{name}.md").unlink(missing_ok=True)
    templates = set(template_names())
    for role in proposal["roles"]:  # a template becomes a project specialist only here, on approval
        if registry.get(role["specialist"]) is None and role["specialist"] in templates:
            registry.mint_from_template(role["specialist"])
    doc = team_file(proposal, head)
    doc["run_id"] = run_id
    slug = check_name(proposal.get("slug"), "team proposal", "slug")
    phase = check_name(proposal.get("phase"), "team proposal", "phase")
    path = confined(project, ".agentrt", "team", f"{slug}.{phase}.yaml")
    _write(path, _yaml.dump(doc))
    return str(path)


@tool
def teams_record_routing(project: str, run_id: str, routing: list[dict[str, Any]]) -> str:
    """Record the dispatch decisions (``lane <id> · score N · tier T · model M``) in the run.

    Args:
        project: The project directory.
        run_id: The team run.
        routing: One decision per lane.
    """
    path = run_dir(project, run_id) / "routing.jsonl"
    _write(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in routing))
    return str(path)


@tool
def teams_append_routing(project: str, run_id: str, routing: list[dict[str, Any]]) -> str:
    """Add re-scored dispatch decisions to the run's routing record (a retry at a new tier); the
    last line of a lane is its tier now, for the bus's tier check too.

    Args:
        project: The project directory.
        run_id: The team run.
        routing: The new decisions, one per re-scored lane.
    """
    path = run_dir(project, run_id) / "routing.jsonl"
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    rows = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in routing)
    if not old.endswith(rows):  # a replay after a crash appends nothing twice
        _write(path, old + rows)
    return str(path)


def _escalations_dir(project: str, run_id: str) -> Path:
    return run_dir(project, run_id) / "escalations"


@tool
def teams_record_escalation(
    project: str, run_id: str, task_id: str, attempt: int, round: int, question: str
) -> str:
    """Record one advisor consult of a lane (the run's escalation trail; the sticky +1 reads it).

    One file per lane, attempt and round, written whole: a replay writes the same file again.

    Args:
        project: The project directory.
        run_id: The team run.
        task_id: The lane.
        attempt: The lane's attempt.
        round: The advisor round (1, 2, ...).
        question: What the lane asked the advisor.
    """
    check_name(task_id, "escalation record", "task_id")
    name = f"{task_id}.{int(attempt)}.{int(round)}.json"
    path = confined(_escalations_dir(project, run_id), name)
    record = {"task_id": task_id, "attempt": attempt, "round": round, "question": question}
    _write(path, json.dumps(record, sort_keys=True) + "\n")
    return str(path)


@tool
def teams_lane_escalations(project: str, run_id: str) -> dict[str, int]:
    """How many advisor consults each lane of the run has had so far, over all its attempts.

    Args:
        project: The project directory.
        run_id: The team run.
    """
    root = _escalations_dir(project, run_id)
    counts: dict[str, int] = {}
    for path in sorted(root.glob("*.json")) if root.is_dir() else []:
        task_id = json.loads(path.read_text(encoding="utf-8"))["task_id"]
        counts[task_id] = counts.get(task_id, 0) + 1
    return counts


@tool
def teams_write_bundles(project: str, run_id: str, bundles: dict[str, str]) -> list[str]:
    """Write the lanes' context bundles to ``.agentrt/context/<run>/<specialist>-<task>.md``.

    Args:
        project: The project directory.
        run_id: The team run.
        bundles: File stem (specialist-task) to bundle text.
    """
    out = []
    check_name(run_id, "team run", "run_id")
    for stem in bundles:  # all checked before any is written
        check_name(stem, "context bundles", "stem")
    for stem, text in bundles.items():
        path = confined(Path(project) / ".agentrt" / "context" / run_id, f"{stem}.md")
        _write(path, text)
        out.append(str(path))
    return out


@tool
def teams_write_receipt(
    project: str,
    run_id: str,
    specialist: str,
    envelope: dict[str, Any],
    sections: dict[str, list[str]],
    attempt: int = 1,
) -> dict[str, str]:
    """A lane's final act: write its receipt file, publish it on the run's bus, accept it; once per
    lane attempt, however often a crash makes the call again (:mod:`agentrt.teams.acceptance`).

    Args:
        project: The project directory.
        run_id: The team run.
        specialist: The lane's specialist.
        envelope: The guild.handoff.v2 envelope.
        sections: The five human sections.
        attempt: The lane's attempt (1, 2, ...): with the lane, the key of the acceptance record.
    """
    record = accept_receipt(project, run_id, specialist, envelope, sections, attempt)
    accepted = acceptance_path(project, run_id, specialist, record["task_id"], attempt)
    return {"receipt": record["receipt"], "line": record["line"], "acceptance": str(accepted)}


@tool
def teams_read_receipt(path: str, acceptance: str | None = None) -> dict[str, Any]:
    """The lead reads a receipt file (never chat) and validates its one envelope block.

    Args:
        path: The receipt file.
        acceptance: The lane attempt's acceptance record: the receipt must be the bytes it accepted.
    """
    at_step("lead.reading")
    try:
        text = check_accepted(path, acceptance) if acceptance else Path(path).read_text(encoding="utf-8")
        digest = hashlib.sha256(text.encode()).hexdigest()
        return {"ok": True, "envelope": parse_receipt(text).to_dict(), "sha256": digest}
    except (OSError, ValueError, ContractError) as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def _review_path(project: str, run_id: str, reviewed: str, reviewer: str, attempt: int) -> Path:
    for key, name in (("reviewed", reviewed), ("reviewer", reviewer)):
        check_name(name, "review result", key)
    return confined(run_dir(project, run_id) / "reviews", f"{reviewed}.{reviewer}.{int(attempt)}.json")


@tool
def teams_write_review(
    project: str, run_id: str, reviewed: str, reviewer: str, attempt: int, review: dict[str, Any]
) -> str:
    """A reviewer lane's verdict on a lane: its ``review_result.v1``, validated, written whole to
    ``.agentrt/runs/<run>/reviews/<reviewed>.<reviewer>.<attempt>.json`` (the lead reads the file).

    Args:
        project: The project directory.
        run_id: The team run.
        reviewed: The lane reviewed.
        reviewer: The reviewer lane.
        attempt: The reviewer lane's attempt.
        review: The review_result.v1 (packet_id, artifact_sha256_reviewed, verdict, blocking_findings).
    """
    validate_contract({"schema_version": "review_result.v1", **review})
    path = _review_path(project, run_id, reviewed, reviewer, attempt)
    _write(
        path, json.dumps({"schema_version": "review_result.v1", **review}, indent=2, sort_keys=True) + "\n"
    )
    return str(path)


@tool
def teams_read_review(path: str) -> dict[str, Any]:
    """The lead reads a review file (never chat) and validates it as ``review_result.v1``.

    Args:
        path: The review file.
    """
    try:
        _, review = normalize_contract(Path(path).read_text(encoding="utf-8"), expect="review_result.v1")
        return {"ok": True, "review": review}
    except (OSError, ValueError, ContractError) as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


@tool
def teams_write_phase_result(project: str, run_id: str, result: dict[str, Any]) -> str:
    """Write the team's ``guild.phase_result.v1`` (validated, stamped with ``ts`` here) to the run directory.

    Args:
        project: The project directory.
        run_id: The team run.
        result: The phase result.
    """
    result = {**result, "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    validate_contract(result)
    path = run_dir(project, run_id) / "phase_result.json"
    _write(path, json.dumps(result, indent=2, sort_keys=True) + "\n")
    return str(path)


TOOLS = [
    teams_plan,
    teams_draft_skill,
    teams_recall,
    teams_draft_specialist,
    teams_dispatch_config,
    teams_gate_record,
    teams_write_team,
    teams_record_routing,
    teams_append_routing,
    teams_lane_escalations,
    teams_write_bundles,
    teams_read_receipt,
    teams_read_review,
    teams_write_phase_result,
]
