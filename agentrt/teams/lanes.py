"""The lead's lane loop: waves, retries with the sticky +1, and the lane review gate.

``run_lanes`` dispatches the approved lanes wave by wave (a lane waits for the lanes it depends
on), each as a durable child run of ``team_lane``; a failed attempt is retried as a fresh child run
(re-scored first: a lane with an advisor consult behind it scores +1, :mod:`agentrt.teams.routing`),
and every lane's receipt is read from its accepted file, never from chat.

**The lane review gate.**  A reviewer lane (``reviews: TASK`` in the spec) runs after the lane it
reviews and answers a ``review_result.v1`` (``verdict``, ``blocking_findings``) about the receipt
it was shown, written to a file the lead reads.  No blocking finding: the reviewed lane passes.
Blocking findings: the reviewed lane is sent back -- dispatched again, its bundle carrying the
findings -- and then reviewed again, at most ``review.max_rounds`` times (default 2); still
blocking after that, the reviewed lane ends ``blocked`` and the lanes that depend on it do not run.

Every value here that crosses an ``await`` is plain data (dicts of JSON, attrs records), so the
lead checkpoints mid-loop and a resume goes on where it stopped.
"""

from __future__ import annotations

from typing import Any  # Any: lane inputs, routing rows and tool answers are JSON

import attrs

import agentrt
from agentrt._sdk.task import Task
from agentrt.exceptions import ContractError
from agentrt.teams.bundle import build_bundle, universal_layer
from agentrt.teams.recall import DEFAULT_THRESHOLD, recall_section
from agentrt.teams.routing import route_lane
from agentrt.teams.skills import skill_section

__all__ = ["REVIEW_FINDINGS", "REVIEW_INSTRUCTIONS", "LaneReport", "run_lanes"]

REVIEW_INSTRUCTIONS = (
    "# Review instructions\n"
    "You review the receipt of lane {target} (its summary is among the upstream receipts). Answer "
    "`verdict` (pass or changes_requested) and `blocking_findings`: each thing that must change before "
    "lane {target} is done, one per item; none when it may pass."
)
REVIEW_FINDINGS = "# Review findings (a reviewer sent this lane back: address each)"


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
    review_rounds: int = 0  # how often its review gate sent it back


def _bundle(
    ctx: dict[str, Any],
    lane: dict[str, Any],
    summaries: dict[str, str],
    findings: list[str],
    recalled: dict[str, Any] | None = None,
) -> str:
    """A lane's bundle: raises :class:`ContractError` when over the cap."""
    sections = []
    skills = skill_section(ctx.get("skills") or [], lane["specialist"])
    if skills is not None:  # approved skills of the lane's role
        sections.append(skills)
    if recalled is not None:  # the lane's files: recalled chunks, or the list to read in full
        sections.append(recall_section(recalled))
        if recalled.get("missing"):
            sections.append("# Files not found\n" + "\n".join(f"- {p}" for p in recalled["missing"]))
    if lane.get("reviews"):
        sections.append(REVIEW_INSTRUCTIONS.format(target=lane["reviews"]))
    if findings:
        sections.append(REVIEW_FINDINGS + "\n" + "\n".join(f"- {f}" for f in findings))
    spec = {"name": lane["specialist"], **(ctx["specialists"].get(lane["specialist"]) or {})}
    return build_bundle(
        ctx["universal"],
        spec,
        lane,
        upstream=[f"{d}: {summaries[d]}" for d in lane.get("depends_on") or [] if d in summaries],
        max_tokens=ctx["config"]["max_tokens"],
        sections=sections,
    )


def _input(ctx: dict[str, Any], lane: dict[str, Any], bundle: str, reviewed_sha256: str) -> dict[str, Any]:
    r = ctx["route_of"][lane["task_id"]]
    models = ctx["config"]["models"]
    short = dict(models.get("shortOutputThreshold") or {})
    return {
        "project": ctx["project"],
        "team_run": ctx["run_id"],
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
        "reviews": lane.get("reviews") or "",
        "reviewed_sha256": reviewed_sha256,
    }


def _report(
    ctx: dict[str, Any], tid: str, status: str, attempts: int, summary: str, **more: Any
) -> LaneReport:
    r = ctx["route_of"][tid]
    lane = ctx["lanes"][tid]
    return LaneReport(tid, lane["specialist"], r["tier"], r["model"], status, attempts, "", summary, **more)


async def sticky_rescore(
    task: Task, ctx: dict[str, Any], inputs: dict[str, Any], task_ids: list[str]
) -> None:
    """Re-score lanes about to be dispatched again with their advisor consults so far (the sticky
    +1); a lane whose tier changes goes out at the new tier and model, printed and recorded."""
    escalations = await task.tools.teams_lane_escalations(project=ctx["project"], run_id=ctx["run_id"])
    changed = []
    for tid in task_ids:
        if not escalations.get(tid):
            continue
        routed = route_lane(
            ctx["lanes"][tid], ctx["specialists"], ctx["config"], ctx["model_tier"], escalations[tid]
        )
        if routed["tier"] == ctx["route_of"][tid]["tier"]:
            continue
        ctx["route_of"][tid] = routed
        short = dict(ctx["config"]["models"].get("shortOutputThreshold") or {})
        inputs[tid] = {
            **inputs[tid],
            "tier": routed["tier"],
            "model": routed["model"],
            "short_output": int(short.get(f"{inputs[tid]['work_type']}/{routed['tier']}", 0)),
        }
        task.console.info(f"{routed['line']} (prior escalation, sticky +1)")
        changed.append(routed)
    if changed:
        await task.tools.teams_append_routing(project=ctx["project"], run_id=ctx["run_id"], routing=changed)


async def _dispatch(
    task: Task, ctx: dict[str, Any], inputs: dict[str, Any], attempts: dict[str, int], tids: list[str]
) -> dict[str, Any]:
    """Run ``tids`` as child runs, each up to ``max_attempts`` attempts: ``task_id -> LaneResult``,
    or the failure text.  Attempts count on from ``attempts`` (a lane sent back continues them)."""
    budget = {tid: attempts.get(tid, 0) + ctx["config"]["max_attempts"] for tid in tids}
    results: dict[str, Any] = {}
    todo = list(tids)
    while todo:  # a retry: a fresh child run with the same bundle (re-scored: the sticky +1)
        for tid in todo:
            attempts[tid] = attempts.get(tid, 0) + 1
        settled = await task.gather_settled(
            [task.tools.team_lane(**{**inputs[tid], "attempt": attempts[tid]}) for tid in todo]
        )
        again = []
        for tid, outcome in zip(todo, settled, strict=True):
            if isinstance(outcome, agentrt.Fulfilled):
                results[tid] = outcome.value
            elif attempts[tid] < budget[tid]:
                task.console.warn(f"lane {tid} attempt {attempts[tid]} failed: {outcome.error}; retrying")
                again.append(tid)
            else:
                results[tid] = f"failed after {attempts[tid]} attempts: {outcome.error}"
        if again:
            await sticky_rescore(task, ctx, inputs, again)
        todo = again
    return results


async def _settle(
    task: Task, ctx: dict[str, Any], tid: str, result: Any, attempts: int, state: dict[str, Any]
) -> LaneReport:
    """Read a lane's accepted receipt (the file, never chat) into its report."""
    if isinstance(result, str):
        return _report(ctx, tid, "failed", attempts, result)
    read = await task.tools.teams_read_receipt(path=result.receipt, acceptance=result.acceptance or None)
    if not read["ok"]:
        return attrs.evolve(
            _report(ctx, tid, "failed", attempts, f"invalid receipt: {read['error']}"), receipt=result.receipt
        )
    env = read["envelope"]
    state["summaries"][tid] = env["summary"]
    state["shas"][tid] = read["sha256"]
    state["reviews"][tid] = result.review
    status = "inconclusive" if result.outcome == "inconclusive" else env["status"]
    return attrs.evolve(
        _report(ctx, tid, status, attempts, env["summary"]),
        receipt=result.receipt,
        learnings=list(env.get("learnings") or []),
        advisor_rounds=result.advisor_rounds,
    )


async def _run(task: Task, ctx: dict[str, Any], state: dict[str, Any], tids: list[str]) -> None:
    """Build the bundles of ``tids`` (from the summaries and findings so far), dispatch, settle."""
    inputs, bundles, ready = state["inputs"], {}, []
    for tid in tids:
        lane = ctx["lanes"][tid]
        if lane.get("read") and tid not in state["recalls"]:  # once per lane: retries reuse it
            threshold = float(ctx["config"]["models"].get("recallScoreThreshold", DEFAULT_THRESHOLD))
            state["recalls"][tid] = await task.tools.teams_recall(
                project=ctx["project"],
                paths=list(lane["read"]),
                query=f"{lane.get('title', '')} {lane.get('brief', '')}",
                threshold=threshold,
            )
        try:
            bundle = _bundle(
                ctx, lane, state["summaries"], state["findings"].get(tid, []), state["recalls"].get(tid)
            )
        except ContractError as exc:  # over the cap (review findings make a bundle longer)
            state["reports"][tid] = _report(ctx, tid, "blocked", state["attempts"].get(tid, 0), str(exc))
            continue
        bundles[f"{lane['specialist']}-{tid}"] = bundle
        inputs[tid] = _input(ctx, lane, bundle, state["shas"].get(lane.get("reviews") or "", ""))
        ready.append(tid)
    if not ready:
        return
    again = [tid for tid in ready if state["attempts"].get(tid)]
    if again:  # a lane dispatched again (its review sent it back): the sticky +1 applies here too
        await sticky_rescore(task, ctx, inputs, again)
    await task.tools.teams_write_bundles(project=ctx["project"], run_id=ctx["run_id"], bundles=bundles)
    results = await _dispatch(task, ctx, inputs, state["attempts"], ready)
    for tid in ready:
        state["reports"][tid] = await _settle(task, ctx, tid, results[tid], state["attempts"][tid], state)


async def review_gate(task: Task, ctx: dict[str, Any], state: dict[str, Any], reviewer: str) -> None:
    """The lane review gate for the lane ``reviewer`` reviews (see the module doc)."""
    target = ctx["lanes"][reviewer]["reviews"]
    reports = state["reports"]
    rounds = 0
    max_rounds = int(ctx["config"].get("review_rounds", 2))
    while True:
        why = None
        review: dict[str, Any] = {}
        if reports[reviewer].status != "done" or not state["reviews"].get(reviewer):
            why = f"reviewer lane {reviewer} ended {reports[reviewer].status} without a review"
        else:
            read = await task.tools.teams_read_review(path=state["reviews"][reviewer])
            if read["ok"]:
                review = read["review"]
            else:
                why = f"the review of reviewer lane {reviewer} is invalid: {read['error']}"
        blocking = list(review.get("blocking_findings") or [])
        if why is None and not blocking:
            return  # passed
        if why is None and rounds >= max_rounds:
            listed = "; ".join(blocking)
            why = f"{len(blocking)} blocking finding(s) after {rounds} round(s) sent back: {listed}"
        if why is not None:
            reports[target] = attrs.evolve(
                reports[target], status="blocked", summary=f"review gate: {why}"[:600], review_rounds=rounds
            )
            task.console.warn(f"lane {target}: review gate blocked ({why})")
            return
        rounds += 1
        task.console.warn(
            f"lane {target}: {len(blocking)} blocking finding(s) from {reviewer}; sent back "
            f"(review round {rounds} of {max_rounds})"
        )
        state["findings"][target] = blocking
        await _run(task, ctx, state, [target])
        reports[target] = attrs.evolve(reports[target], review_rounds=rounds)
        if reports[target].status != "done":
            return  # it did not finish: its own status says why; dependents will not run
        await _run(task, ctx, state, [reviewer])


async def run_lanes(
    task: Task,
    *,
    project: str,
    model_tier: str | None,
    proposal: dict[str, Any],
    specialists: dict[str, Any],
    config: dict[str, Any],
    routing: list[dict[str, Any]],
    body: str,
) -> list[LaneReport]:
    """Dispatch the lanes wave by wave; a reviewed lane is done for others once its review passed."""
    ctx: dict[str, Any] = {
        "project": project,
        "run_id": task.run_id,
        "model_tier": model_tier,
        "config": config,
        "specialists": specialists,
        "lanes": {lane["task_id"]: lane for lane in proposal["lanes"]},
        "route_of": {r["task_id"]: r for r in routing},
        "skills": list(proposal.get("skills") or []),
        "universal": universal_layer(task.run_id, f"{proposal['task']}\n\n{body}".strip()),  # once per run
    }
    state: dict[str, Any] = {
        "reports": {},
        "summaries": {},
        "shas": {},
        "reviews": {},
        "findings": {},
        "recalls": {},
        "inputs": {},
        "attempts": {},
    }
    reports: dict[str, LaneReport] = state["reports"]
    pending = list(proposal["lanes"])
    while pending:
        ready = [lane for lane in pending if all(d in reports for d in lane.get("depends_on") or [])]
        if not ready:
            break
        pending = [lane for lane in pending if lane not in ready]
        wave = []
        for lane in ready:
            tid = lane["task_id"]
            upstream_bad = [d for d in lane.get("depends_on") or [] if reports[d].status != "done"]
            if upstream_bad:
                reports[tid] = _report(
                    ctx,
                    tid,
                    "upstream-blocked",
                    0,
                    f"not run: upstream lanes {', '.join(upstream_bad)} did not finish done",
                )
                continue
            try:
                _bundle(ctx, lane, state["summaries"], [])
            except ContractError as exc:
                reports[tid] = _report(ctx, tid, "blocked", 0, str(exc))
                continue
            wave.append(tid)
        if wave:
            await _run(task, ctx, state, wave)
        for tid in wave:
            if ctx["lanes"][tid].get("reviews"):
                await review_gate(task, ctx, state, tid)
    for lane in pending:  # a dependency that never became ready
        reports[lane["task_id"]] = _report(
            ctx, lane["task_id"], "upstream-blocked", 0, "dependencies never finished"
        )
    return [reports[lane["task_id"]] for lane in proposal["lanes"]]
