"""The durable team: a lead agent and one lane agent, both ordinary ``agent(...)`` values.

``team_lead`` composes the team from a spec, waits on the team gate as a durable
``task.ui.ask`` (the run leaves memory until someone replies, in any process), writes the team file
on approval, scores and records each lane's routing, and runs each lane as a durable child run of
``team_lane`` (``task.gather_settled``), dependency wave by wave, retrying a failed lane with the
same bundle and tier up to ``max_attempts``.  It reads each lane's receipt file, never a chat
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
from agentrt.teams.bundle import build_bundle, universal_layer
from agentrt.teams.contracts import SUMMARY_MAX_CHARS, validate_handoff
from agentrt.teams.errors import ContractError, GateBlocked
from agentrt.teams.escalation import INCONCLUSIVE, EscalationConfig, advisor_prompt, escalation_trigger
from agentrt.teams.gate import DECISION_SCHEMA, VERBS, apply_decision, canonical_hash
from agentrt.teams.options import option_replies
from agentrt.teams.routing import route, route_lane
from agentrt.teams.tools import TOOLS, teams_record_escalation, teams_write_receipt

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
    )


team_lane = agent(
    input=LaneInput,
    output=LaneResult,
    tools=[teams_write_receipt, teams_record_escalation],
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
class LaneReport:
    task_id: str
    specialist: str
    tier: str
    model: str
    status: str  # done, blocked, escalate, inconclusive, failed, upstream-blocked
    attempts: int
    receipt: str
    summary: str
    learnings: list[str] = attrs.field(factory=list)  # candidates only, never auto-promoted
    advisor_rounds: int = 0  # the escalation trail: advisor consults of the accepted attempt


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
        if outcome != "blocked":
            mints += _mints_asked(proposal, reply)
        proposal = changed
        note = f"changed by {outcome}; approve the new proposal to go on" if outcome != "blocked" else note


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
    reports = await run_lanes(task, input, proposal, specialists, config, routing, planned["body"])
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


async def sticky_rescore(
    task: Task,
    input: TeamInput,
    lanes: dict[str, dict[str, Any]],
    specialists: dict[str, Any],
    config: dict[str, Any],
    route_of: dict[str, dict[str, Any]],
    inputs: dict[str, dict[str, Any]],
    task_ids: list[str],
) -> None:
    """Re-score the lanes about to be dispatched again with their advisor consults so far (the
    reference's sticky +1 after an escalation); a lane whose tier changes goes out at the new tier
    and model, printed and recorded like every dispatch."""
    escalations = await task.tools.teams_lane_escalations(project=input.project, run_id=task.run_id)
    changed = []
    for tid in task_ids:
        if not escalations.get(tid):
            continue
        routed = route_lane(lanes[tid], specialists, config, input.model_tier, escalations[tid])
        if routed["tier"] == route_of[tid]["tier"]:
            continue
        route_of[tid] = routed
        inputs[tid] = {**inputs[tid], "tier": routed["tier"], "model": routed["model"]}
        short = dict(config["models"].get("shortOutputThreshold") or {})
        inputs[tid]["short_output"] = int(short.get(f"{inputs[tid]['work_type']}/{routed['tier']}", 0))
        task.console.info(f"{routed['line']} (prior escalation, sticky +1)")
        changed.append(routed)
    if changed:
        await task.tools.teams_append_routing(project=input.project, run_id=task.run_id, routing=changed)


async def run_lanes(
    task: Task,
    input: TeamInput,
    proposal: dict[str, Any],
    specialists: dict[str, Any],
    config: dict[str, Any],
    routing: list[dict[str, Any]],
    body: str,
) -> list[LaneReport]:
    """Dispatch the lanes wave by wave (a lane waits for the lanes it depends on)."""
    universal = universal_layer(task.run_id, f"{proposal['task']}\n\n{body}".strip())  # once per run
    route_of = {r["task_id"]: r for r in routing}
    lanes_by_id = {lane["task_id"]: lane for lane in proposal["lanes"]}
    models = config["models"]
    short = dict(models.get("shortOutputThreshold") or {})
    reports: dict[str, LaneReport] = {}
    summaries: dict[str, str] = {}
    pending = list(proposal["lanes"])
    while pending:
        ready = [lane for lane in pending if all(d in reports for d in lane.get("depends_on") or [])]
        if not ready:
            break
        pending = [lane for lane in pending if lane not in ready]
        inputs: dict[str, dict[str, Any]] = {}
        bundles: dict[str, str] = {}
        for lane in ready:
            r = route_of[lane["task_id"]]
            upstream_bad = [d for d in lane.get("depends_on") or [] if reports[d].status != "done"]
            if upstream_bad:
                reports[lane["task_id"]] = LaneReport(
                    lane["task_id"], lane["specialist"], r["tier"], r["model"], "upstream-blocked", 0, "",
                    f"not run: upstream lanes {', '.join(upstream_bad)} did not finish done",
                )  # fmt: skip
                continue
            spec = {"name": lane["specialist"], **(specialists.get(lane["specialist"]) or {})}
            try:
                bundle = build_bundle(
                    universal,
                    spec,
                    lane,
                    upstream=[f"{d}: {summaries[d]}" for d in lane.get("depends_on") or []],
                    max_tokens=config["max_tokens"],
                )
            except ContractError as exc:
                reports[lane["task_id"]] = LaneReport(
                    lane["task_id"], lane["specialist"], r["tier"], r["model"], "blocked", 0, "", str(exc)
                )
                continue
            bundles[f"{lane['specialist']}-{lane['task_id']}"] = bundle
            inputs[lane["task_id"]] = {
                "project": input.project,
                "team_run": task.run_id,
                "specialist": lane["specialist"],
                "task_id": lane["task_id"],
                "work_type": lane["work_type"],
                "tier": r["tier"],
                "model": r["model"],
                "advisor_model": r["advisor_model"],
                "bundle": bundle,
                "advisor_rounds": int(models.get("advisorRounds", 2)),
                "markers": list(models.get("escalationMarkers") or []),
                "short_output": int(short.get(f"{lane['work_type']}/{r['tier']}", 0)),
            }
        if bundles:
            await task.tools.teams_write_bundles(project=input.project, run_id=task.run_id, bundles=bundles)
        attempts = dict.fromkeys(inputs, 0)
        results: dict[str, Any] = {}
        todo = list(inputs)
        while todo:  # a retry: a fresh child run with the same bundle and tier
            for tid in todo:
                attempts[tid] += 1
            settled = await task.gather_settled(
                [task.tools.team_lane(**{**inputs[tid], "attempt": attempts[tid]}) for tid in todo]
            )
            again = []
            for tid, outcome in zip(todo, settled, strict=True):
                if isinstance(outcome, agentrt.Fulfilled):
                    results[tid] = outcome.value
                elif attempts[tid] < config["max_attempts"]:
                    task.console.warn(f"lane {tid} attempt {attempts[tid]} failed: {outcome.error}; retrying")
                    again.append(tid)
                else:
                    results[tid] = f"failed after {attempts[tid]} attempts: {outcome.error}"
            if again:  # the sticky +1: a lane that escalated is re-scored before its retry
                await sticky_rescore(task, input, lanes_by_id, specialists, config, route_of, inputs, again)
            todo = again
        for tid in inputs:
            r = route_of[tid]
            lane_result = results[tid]
            if isinstance(lane_result, str):
                reports[tid] = LaneReport(
                    tid,
                    inputs[tid]["specialist"],
                    r["tier"],
                    r["model"],
                    "failed",
                    attempts[tid],
                    "",
                    lane_result,
                )
                continue
            read = await task.tools.teams_read_receipt(  # the accepted file, never chat
                path=lane_result.receipt, acceptance=lane_result.acceptance or None
            )
            learnings: list[str] = []
            if not read["ok"]:
                status, summary = "failed", f"invalid receipt: {read['error']}"
            else:
                env = read["envelope"]
                status = "inconclusive" if lane_result.outcome == "inconclusive" else env["status"]
                summary = env["summary"]
                summaries[tid] = summary
                learnings = list(env.get("learnings") or [])
            reports[tid] = LaneReport(
                tid,
                inputs[tid]["specialist"],
                r["tier"],
                r["model"],
                status,
                attempts[tid],
                lane_result.receipt,
                summary,
                learnings,
                lane_result.advisor_rounds,
            )
    for lane in pending:  # a dependency that never became ready
        r = route_of[lane["task_id"]]
        reports[lane["task_id"]] = LaneReport(
            lane["task_id"],
            lane["specialist"],
            r["tier"],
            r["model"],
            "upstream-blocked",
            0,
            "",
            "dependencies never finished",
        )
    return [reports[lane["task_id"]] for lane in proposal["lanes"]]


team_lead = agent(
    input=TeamInput,
    output=TeamOutput,
    tools=[*TOOLS, team_lane, *ui_tools],
    run=lead_run,
    name="team_lead",
    description="Proposes a team for a spec, waits for the team gate, runs each lane as a child run.",
)
