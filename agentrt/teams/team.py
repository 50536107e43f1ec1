"""The durable team: a lead agent and one lane agent, both ordinary ``agent(...)`` values.

``team_lead`` composes the team from a spec, waits on the team gate as a durable
``task.ui.ask`` (the run leaves memory until someone replies, in any process), writes the team file
on approval, scores and records each lane's routing, and runs each lane as a durable child run of
``team_lane`` (:mod:`agentrt.teams.lanes`: dependency wave by wave, retries, the sticky +1 and the
lane review gate).  It reads each lane's receipt file, never a chat
message, and reports a goal status.  A crash anywhere resumes mid-await: finished lanes are not
run again, and routing decisions live in the lead's checkpoint and the lanes' inputs, so a resume
never changes a lane's model.

``team_lane`` asks its model (``task.llm.generate_text`` at the routed model), consults the advisor
(one powerful call with only the draft and the question) when a trigger fires, up to
``advisor_rounds``, and writes its receipt as its final act.
"""

from __future__ import annotations

from typing import Any  # Any: model results and proposals are JSON of any shape

import attrs

import agentrt
from agentrt._sdk.agent import agent
from agentrt._sdk.task import Task
from agentrt._sdk.tools import ui_tools
from agentrt.exceptions import ContractError, GateBlocked
from agentrt.teams.contracts import SUMMARY_MAX_CHARS, validate_handoff
from agentrt.teams.escalation import INCONCLUSIVE, EscalationConfig, advisor_prompt, escalation_trigger
from agentrt.teams.gate import DECISION_SCHEMA, VERBS, apply_decision, canonical_hash
from agentrt.teams.interview import boundary_prompt, draft_from_answers, interview_prompt
from agentrt.teams.lanes import LaneReport, run_lanes
from agentrt.teams.options import option_replies
from agentrt.teams.routing import route
from agentrt.teams.tools import TOOLS, teams_record_escalation, teams_write_receipt, teams_write_review

__all__ = ["LaneDraft", "LaneInput", "LaneResult", "TeamInput", "TeamOutput", "team_lane", "team_lead"]

LANE_SYSTEM = (
    "You are a specialist lane. Answer with your draft for the task in `body`, a one-paragraph "
    "`summary` (at most 600 characters), `status` done, blocked or escalate (with `escalate_reason`), "
    "and the files you changed in `artifacts`."
)


# ---------------------------------------------------------------------------- the lane


def _summary_fits(_draft: object, _field: object, summary: str) -> None:
    """The envelope's 600-character summary rule, checked on the model's answer: a longer summary is
    a refused answer, fed back to the model and asked again; it is never cut to fit."""
    if isinstance(summary, str) and len(summary) > SUMMARY_MAX_CHARS:
        raise ValueError(
            f"summary is {len(summary)} characters; the handoff envelope allows at most "
            f"{SUMMARY_MAX_CHARS}: write a shorter summary (the details go in body)"
        )


@agentrt.serializable
@attrs.frozen
class LaneDraft:
    """What a lane's model answers (structured output)."""

    status: str
    summary: str = attrs.field(
        validator=_summary_fits, metadata={"description": "one paragraph, at most 600 characters"}
    )
    body: str
    escalate_reason: str = ""
    artifacts: list[str] = attrs.field(factory=list)
    issues: list[str] = attrs.field(factory=list)
    learnings: list[str] = attrs.field(factory=list)
    verdict: str = ""  # a reviewer lane's: pass or changes_requested
    blocking_findings: list[str] = attrs.field(factory=list)  # a reviewer lane's: what must change


@attrs.frozen
class LaneInput:
    project: str
    team_run: str
    specialist: str
    task_id: str
    work_type: str
    tier: str
    model: str
    advisor_model: str
    bundle: str
    attempt: int = 1
    advisor_rounds: int = 2
    markers: list[str] = attrs.field(factory=list)
    short_output: int = 0  # the models.shortOutputThreshold for this work type and tier; 0 = none
    reviews: str = ""  # a reviewer lane: the lane whose receipt it reviews
    reviewed_sha256: str = ""  # ... and the SHA-256 of that receipt (the review names it)


@attrs.frozen
class LaneResult:
    """A lane's answer to the lead: where its receipt is, and the one liveness line."""

    task_id: str
    receipt: str
    line: str
    outcome: str
    advisor_rounds: int
    lane_tokens: int
    advisor_tokens: int
    lane_calls: int
    advisor_calls: int
    acceptance: str = ""  # the attempt's acceptance record: the receipt bytes the lead may trust
    review: str = ""  # a reviewer lane's review_result.v1 file


def _tokens(result: Any) -> int:
    return int(result.usage.total_tokens) if result.usage is not None else 0


async def lane_run(input: LaneInput, task: Task) -> LaneResult:
    config = EscalationConfig(
        markers=tuple(input.markers),
        short_output={f"{input.work_type}/{input.tier}": input.short_output} if input.short_output else {},
        advisor_rounds=input.advisor_rounds,
    )
    prompt = input.bundle
    rounds = 0
    lane_tokens = advisor_tokens = lane_calls = 0
    outcome = "done"
    consults: list[str] = []
    while True:
        answer = await task.llm.generate_text(
            prompt=prompt,
            system=LANE_SYSTEM,
            model=input.model,
            output=LaneDraft,
            src="lane",
            metadata={"tier": input.tier, "task_id": input.task_id, "specialist": input.specialist},
        )
        lane_tokens += _tokens(answer)
        lane_calls += 1
        draft: LaneDraft = answer.output
        reason = draft.escalate_reason.strip() if draft.status == "escalate" else ""
        trigger = escalation_trigger(draft.body, work_type=input.work_type, tier=input.tier, config=config)
        if draft.status == "escalate":
            trigger = f"status escalate: {reason or '(no reason given)'}"
        if trigger is None:
            outcome = draft.status
            break
        if rounds >= config.advisor_rounds:
            outcome = "inconclusive"
            break
        question = reason or trigger
        advice = await task.llm.generate_text(
            prompt=advisor_prompt(draft.body, question),
            model=input.advisor_model,
            src="advisor",
            metadata={"tier": "powerful", "task_id": input.task_id},
        )
        advisor_tokens += _tokens(advice)
        rounds += 1
        consults.append(f"advisor round {rounds}: {question}")
        await task.tools.teams_record_escalation(  # the run's escalation trail; the sticky +1 reads it
            project=input.project,
            run_id=input.team_run,
            task_id=input.task_id,
            attempt=input.attempt,
            round=rounds,
            question=question,
        )
        prompt = (
            f"{input.bundle}\n# Advisor answer (fold it in and continue)\n{advice.output}\n\n"
            f"# Your previous draft\n{draft.body}\n"
        )
    envelope: dict[str, Any] = {
        "schema_version": "guild.handoff.v2",
        "task_id": input.task_id,
        "tier": input.tier,
        "status": "escalate" if outcome == "inconclusive" else draft.status,
        "summary": draft.summary or f"{input.task_id}: (no summary)",  # never cut: see _summary_fits
        "artifacts": list(draft.artifacts),
        "issues": list(draft.issues),
    }
    if envelope["status"] == "escalate":
        envelope["escalate_reason"] = reason or trigger or "escalated"
    if outcome == "inconclusive":
        envelope["notes"] = INCONCLUSIVE
    if draft.learnings:
        envelope["learnings"] = list(draft.learnings)
    validate_handoff(envelope)  # a malformed answer fails the attempt; the lead retries it
    review_path = ""
    if input.reviews:  # a reviewer lane: its verdict goes to a file the lead reads, before its receipt
        review_path = await task.tools.teams_write_review(
            project=input.project,
            run_id=input.team_run,
            reviewed=input.reviews,
            reviewer=input.task_id,
            attempt=input.attempt,
            review={
                "packet_id": f"{input.team_run}/{input.reviews}",
                "artifact_sha256_reviewed": input.reviewed_sha256,
                "verdict": draft.verdict,
                "blocking_findings": list(draft.blocking_findings),
            },
        )
    sections = {
        "changed_files": list(draft.artifacts),
        "opens_for": [],
        "assumptions": [f"tier {input.tier}, model {input.model}, attempt {input.attempt}"],
        "evidence": [draft.body[:2000]],
        "followups": [*draft.issues, *consults],
    }
    written = await task.tools.teams_write_receipt(
        project=input.project,
        run_id=input.team_run,
        specialist=input.specialist,
        envelope=envelope,
        sections=sections,
        attempt=input.attempt,
    )
    return LaneResult(
        task_id=input.task_id,
        receipt=written["receipt"],
        line=written["line"],
        outcome=outcome,
        advisor_rounds=rounds,
        lane_tokens=lane_tokens,
        advisor_tokens=advisor_tokens,
        lane_calls=lane_calls,
        advisor_calls=rounds,
        acceptance=written["acceptance"],
        review=review_path,
    )


team_lane = agent(
    input=LaneInput,
    output=LaneResult,
    tools=[teams_write_receipt, teams_record_escalation, teams_write_review],
    run=lane_run,
    name="team_lane",
    description="One specialist lane: drafts at its routed model, consults the advisor, writes its receipt.",
)


# ---------------------------------------------------------------------------- the lead


@attrs.frozen
class TeamInput:
    spec: str  # the spec file, relative to the project
    project: str = "."
    model_tier: str | None = None  # the run-wide pin (--model-tier)


@attrs.frozen
class TeamOutput:
    goal_status: str  # complete, partial, blocked
    team_file: str
    routing: list[str]
    lanes: list[LaneReport]


def gate_prompt(proposal: dict[str, Any], blocked: str | None, note: str | None) -> dict[str, Any]:
    digest = canonical_hash(proposal)
    options = option_replies(proposal, digest)
    return {
        "options_for_missing": options,  # the replies that take option A, B, C or D (when a role is missing)
        "gate": DECISION_SCHEMA,
        "question": f"Approve the team for {proposal['slug']} ({proposal['phase']})?",
        "blocked": blocked,
        "note": note,
        "proposal_sha256": digest,
        "proposal": proposal,
        "verbs": list(VERBS),
        "reply_with": {"schema_version": DECISION_SCHEMA, "verb": "approve", "proposal": digest},
    }


def _mints_asked(proposal: dict[str, Any], reply: Any) -> list[dict[str, Any]]:
    """The new roles a decision asks to mint: ``add`` with ``mint: true``, or option A (one per
    missing role, each naming it, as :meth:`Registry.mint_new` requires)."""
    if not isinstance(reply, dict):
        return []
    if reply.get("verb") == "add" and reply.get("mint") is True:
        return [dict(reply)]
    if reply.get("verb") == "option" and reply.get("choice") == "A":
        return [{**reply, "specialist": name} for name in proposal.get("missing") or []]
    return []


async def _record(task: Task, project: str, head: str | None, decision: Any, outcome: str) -> dict[str, Any]:
    """Append one entry to the decision trail (verified first): ``{"ok", "head"}``, or ``{"ok":
    False, "blocked"}`` when the trail is not the one the lead last wrote."""
    recorded: dict[str, Any] = await task.tools.teams_gate_record(
        project=project, run_id=task.run_id, head=head, decision=decision, outcome=outcome
    )
    return recorded


async def interview(
    task: Task, project: str, proposal: dict[str, Any], head: str | None, mint: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """The new role's interview, its ``proposed/`` draft and the gated boundary edits
    (:mod:`agentrt.teams.interview`); every answer goes on the decision trail.  Returns the draft."""
    name, reason = mint["specialist"], mint.get("reason") or ""
    blocked: str | None = None
    draft: dict[str, Any] | None = None
    while draft is None:
        answers = await task.ui.ask(interview_prompt(name, reason, blocked))
        try:
            draft, blocked = draft_from_answers(name, reason, answers), None
        except ContractError as exc:
            blocked = str(exc)
        recorded = await _record(
            task,
            project,
            head,
            {"interview": name, "answers": answers},
            "blocked" if blocked else "interview",
        )
        if not recorded["ok"]:
            draft, blocked = None, recorded["blocked"]
            continue
        head = recorded["head"]
    neighbours = [r["specialist"] for r in proposal["roles"] if r["specialist"] != name]
    scan = await task.tools.teams_draft_specialist(project=project, draft=draft, neighbours=neighbours)
    while scan["overlaps"]:
        reply = await task.ui.ask(boundary_prompt(draft, scan["overlaps"], blocked))
        verb = reply.get("verb") if isinstance(reply, dict) else None
        edited = reply.get("boundaries") if isinstance(reply, dict) else None
        valid = (
            isinstance(edited, list)
            and bool(edited)
            and all(isinstance(b, str) and b.strip() for b in edited)
        )
        if verb == "keep" or (verb == "boundaries" and valid):
            outcome, blocked = str(verb), None
        else:
            outcome = "blocked"
            blocked = (
                'reply {"verb": "boundaries", "boundaries": [...]} (a non-empty list) or {"verb": "keep"}'
            )
        recorded = await _record(task, project, head, {"boundaries_of": name, "reply": reply}, outcome)
        if not recorded["ok"]:
            blocked = recorded["blocked"]
            continue
        head = recorded["head"]
        if outcome == "keep":
            break
        if outcome == "boundaries" and isinstance(edited, list):
            draft = {**draft, "boundaries": [b.strip() for b in edited]}
            scan = await task.tools.teams_draft_specialist(
                project=project, draft=draft, neighbours=neighbours
            )
    return draft, head


def _with_drafts(proposal: dict[str, Any], drafts: list[dict[str, Any]]) -> dict[str, Any]:
    """The proposal with each interviewed role's purpose and default tier."""
    by_name = {d["name"]: d for d in drafts}
    roles = [
        {
            **r,
            "purpose": by_name[r["specialist"]]["purpose"],
            "default_tier": by_name[r["specialist"]]["default_tier"],
        }
        if r["specialist"] in by_name
        else r
        for r in proposal["roles"]
    ]
    return {**proposal, "roles": roles}


async def run_gate(
    task: Task,
    project: str,
    proposal: dict[str, Any],
    head: str | None,
    note: str | None,
    catalogue: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], str, list[Any]]:
    """Ask until an ``approve`` of the current proposal lands on an intact trail.  Returns the
    approved proposal, the trail head, and the mint requests made on the way."""
    blocked: str | None = None
    mints: list[Any] = []
    while True:
        reply = await task.ui.ask(gate_prompt(proposal, blocked, note))
        try:
            approved, changed = apply_decision(proposal, reply, catalogue)
            outcome = "approved" if approved else reply["verb"]
            blocked = None
        except GateBlocked as exc:
            approved, changed, outcome, blocked = False, proposal, "blocked", str(exc)
        recorded = await task.tools.teams_gate_record(
            project=project, run_id=task.run_id, head=head, decision=reply, outcome=outcome
        )
        if not recorded["ok"]:
            blocked = recorded["blocked"]
            continue
        head = recorded["head"]
        if approved:
            assert head is not None
            return proposal, head, mints
        if outcome == "add_skill":  # drafted in proposed/ until the team is approved
            skill = changed["skills"][-1]
            roles = [r["specialist"] for r in changed["roles"]]
            drafted = await task.tools.teams_draft_skill(project=project, skill=skill, roles=roles)
            note = f"skill {skill['skill']} drafted at {drafted['path']}" + (
                "; clashes: " + "; ".join(drafted["clashes"]) if drafted["clashes"] else ""
            )
        if outcome != "blocked":
            drafts = []
            for asked in _mints_asked(proposal, reply):  # a new role is interviewed before it is drafted
                draft, head = await interview(task, project, changed, head, asked)
                mints.append({**asked, "draft": draft})
                drafts.append(draft)
            changed = _with_drafts(changed, drafts)
        proposal = changed
        if outcome not in ("blocked", "add_skill"):
            note = f"changed by {outcome}; approve the new proposal to go on"


def _goal(reports: list[LaneReport]) -> str:
    done = sum(1 for r in reports if r.status == "done")
    return "complete" if done == len(reports) else "blocked" if done == 0 else "partial"


async def lead_run(input: TeamInput, task: Task) -> TeamOutput:
    planned = await task.tools.teams_plan(project=input.project, spec=input.spec, model_tier=input.model_tier)
    proposal = planned["proposal"]
    specialists = planned["specialists"]
    head: str | None = None
    note: str | None = None
    mints: list[Any] = []
    while True:  # the gate; back to it when a re-score at dispatch differs from the approved tier
        proposal, head, asked = await run_gate(
            task, input.project, proposal, head, note, planned.get("catalogue")
        )
        new_roles = {r["specialist"] for r in proposal["roles"] if r.get("source") == "new"}
        mints = [m for m in [*mints, *asked] if m["specialist"] in new_roles]  # a role removed since: none
        dispatch = await task.tools.teams_dispatch_config(
            project=input.project, specialists=[r["specialist"] for r in proposal["roles"]]
        )
        config, specialists = dispatch["config"], {**specialists, **dispatch["specialists"]}
        for mint in mints:  # a new role is not live before the team file: route and brief it by its draft
            specialists.setdefault(mint["specialist"], mint["draft"])
        routing = route(proposal, specialists, config, input.model_tier)
        differ = [r for r in routing if r["tier"] != r["approved_tier"]]
        if not differ:
            break
        rescored = {r["task_id"]: r["tier"] for r in differ}
        proposal = {
            **proposal,
            "lanes": [
                {**lane, "tier": rescored.get(lane["task_id"], lane["tier"])} for lane in proposal["lanes"]
            ],
        }
        note = "re-scored at dispatch, differs from the approved tier: " + "; ".join(
            f"{r['task_id']} {r['approved_tier']} -> {r['tier']}" for r in differ
        )
        task.console.warn(note)
    team_path = await task.tools.teams_write_team(
        project=input.project, run_id=task.run_id, proposal=proposal, head=head, mints=mints
    )
    for r in routing:
        task.console.info(r["line"])
    await task.tools.teams_record_routing(project=input.project, run_id=task.run_id, routing=routing)
    reports = await run_lanes(
        task,
        project=input.project,
        model_tier=input.model_tier,
        proposal=proposal,
        specialists=specialists,
        config=config,
        routing=routing,
        body=planned["body"],
    )
    goal = _goal(reports)
    await task.tools.teams_write_phase_result(
        project=input.project,
        run_id=task.run_id,
        result={
            "schema_version": "guild.phase_result.v1",
            "run_id": task.run_id,
            "phase": proposal["phase"]
            if proposal["phase"] in ("init", "ideate", "plan", "build", "qa", "ops")
            else "build",
            "status": {"complete": "complete", "partial": "partial", "blocked": "blocked"}[goal],
            "gate_passed": True,
            "outputs": [r.receipt for r in reports if r.receipt],
        },
    )
    return TeamOutput(
        goal_status=goal, team_file=team_path, routing=[r["line"] for r in routing], lanes=reports
    )


team_lead = agent(
    input=TeamInput,
    output=TeamOutput,
    tools=[*TOOLS, team_lane, *ui_tools],
    run=lead_run,
    name="team_lead",
    description="Proposes a team for a spec, waits for the team gate, runs each lane as a child run.",
)
