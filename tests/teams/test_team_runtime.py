"""The durable team in one process: the gate as a durable ask, routing, lanes as child runs,
advisor escalation and its cap, retries with the same bundle and tier, receipts read from files."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrt import MemoryStore, Runtime
from agentrt.llm import ExecutorRequest, Executors, GenerateResult
from agentrt.teams import canonical_hash, parse_receipt
from agentrt.teams.team import team_lead
from examples import team_executors

SPEC = Path(__file__).resolve().parents[2] / "examples" / "team_spec.md"


class Recorder:
    """The offline executor, recording each request; ``fail`` may raise for chosen calls."""

    def __init__(self, fail: Callable[[ExecutorRequest, int], bool] | None = None) -> None:
        self.calls: list[ExecutorRequest] = []
        self.fail = fail

    async def generate_text(self, request: ExecutorRequest) -> GenerateResult:
        self.calls.append(request)
        if self.fail is not None and self.fail(request, len(self.calls)):
            raise RuntimeError(f"provider hiccup on call {len(self.calls)}")
        return await team_executors.generate_text(request)

    def executors(self) -> Executors:
        return Executors(generate_text=self.generate_text)

    def lane_calls(self, task_id: str, src: str = "lane") -> list[ExecutorRequest]:
        return [c for c in self.calls if c.src == src and c.metadata.get("task_id") == task_id]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(SPEC, tmp_path / "spec.md")
    return tmp_path


def write_config(project: Path, text: str) -> None:
    (project / ".agentrt").mkdir(exist_ok=True)
    (project / ".agentrt" / "teams.yaml").write_text(text)


class Team:
    """One runtime driving one team run, with helpers to read what the gate asks."""

    def __init__(self, project: Path, recorder: Recorder, **input: Any) -> None:
        self.project = project
        self.recorder = recorder
        self.input = {"spec": "spec.md", "project": str(project), **input}
        self.rt = Runtime(MemoryStore(), executors=recorder.executors(), step_budget_seconds=None)
        self.run_id = "team1"

    async def start(self) -> dict[str, Any]:
        await self.rt.start(team_lead, self.input, run_id=self.run_id)
        return await self.prompt()

    async def prompt(self) -> dict[str, Any]:
        rec = await self.rt.settle(self.run_id)
        assert rec.status == "waiting", (rec.status, rec.error)
        prompt = rec.pending["prompt"]
        assert isinstance(prompt, dict)
        return prompt

    async def reply(self, value: Any) -> dict[str, Any] | None:
        await self.rt.reply(self.run_id, value)
        rec = await self.rt.settle(self.run_id)
        if rec.status == "waiting":
            return rec.pending["prompt"]
        assert rec.status == "completed", rec.error
        return None

    def output(self) -> dict[str, Any]:
        return self.rt.status(self.run_id).output

    def run_dir(self) -> Path:
        return self.project / ".agentrt" / "runs" / self.run_id


def approve(prompt: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": "guild.team_decision.v1",
        "verb": "approve",
        "proposal": prompt["proposal_sha256"],
    }


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def run_approved(project: Path, rec: Recorder) -> dict[str, Any]:
    """Start the team, approve its proposal at the gate, and return the output once the lanes ran."""

    async def main() -> dict[str, Any]:
        team = Team(project, rec)
        try:
            await team.reply(approve(await team.start()))
            return team.output()
        finally:
            await team.rt.close()

    return run(main())


def test_gate_waits_then_lanes_run_as_child_runs(project: Path) -> None:
    rec = Recorder()

    async def main() -> None:
        team = Team(project, rec)
        try:
            prompt = await team.start()
            # the gate holds: nothing dispatched, nothing minted, no team file
            assert rec.calls == [] and team.rt.store.children(team.run_id) == []
            assert not (project / ".agentrt" / "agents").exists()
            proposal = prompt["proposal"]
            assert proposal["schema_version"] == "guild.team_proposal.v2"
            assert prompt["proposal_sha256"] == canonical_hash(proposal)
            assert [r["specialist"] for r in proposal["roles"]] == ["backend", "doc-writer", "qa"]
            assert all(r["reason"] for r in proposal["roles"])
            assert {e["specialist"] for e in proposal["excluded"]} == {"seo", "frontend"}
            assert sorted(proposal["options"]) == ["A", "B", "C", "D"]
            assert await team.reply(approve(prompt)) is None
            out = team.output()
            children = team.rt.store.children(team.run_id)
        finally:
            await team.rt.close()
        assert out["goal_status"] == "complete"
        assert out["routing"] == [
            "lane api · score 2 · tier mid · model sonnet",
            "lane docs · score 0 · tier cheap · model haiku",
            "lane tests · score 2 · tier mid · model sonnet",
        ]
        assert [c.agent.rsplit(":", 1)[-1] for c in children] == ["team_lane"] * 3
        assert {c.input["task_id"]: c.input["model"] for c in children} == {
            "api": "sonnet",
            "docs": "haiku",
            "tests": "sonnet",
        }
        # each lane asked its routed model
        for task_id, model in (("api", "sonnet"), ("docs", "haiku"), ("tests", "sonnet")):
            assert {c.model for c in rec.lane_calls(task_id)} == {model}
        # the team file, minted templates (only the team's), routing record
        team_yaml = (project / ".agentrt" / "team" / "csv-export.build.yaml").read_text()
        assert "default_tier: cheap" in team_yaml and "name: doc-writer" in team_yaml
        assert sorted(p.stem for p in (project / ".agentrt" / "agents").glob("*.md")) == [
            "backend",
            "doc-writer",
            "qa",
        ]
        rows = [
            json.loads(line)
            for line in (project / ".agentrt/runs/team1/routing.jsonl").read_text().splitlines()
        ]
        assert [r["line"] for r in rows] == out["routing"]
        # receipts: one valid envelope each, at .agentrt/runs/<run>/handoffs/<specialist>-<task>.md
        for lane in out["lanes"]:
            assert lane["receipt"].endswith(
                f"/.agentrt/runs/team1/handoffs/{lane['specialist']}-{lane['task_id']}.md"
            )
            assert parse_receipt(Path(lane["receipt"]).read_text()).task_id == lane["task_id"]
        # the bus got one handoff event per lane, published at the lane's tier
        log = [
            json.loads(line)
            for line in (project / ".agentrt/runs/team1/bus/log.jsonl").read_text().splitlines()
        ]
        assert sorted((e["topic"], e["publisher_tier"]) for e in log) == [
            ("handoff/team1/api", "mid"), ("handoff/team1/docs", "cheap"), ("handoff/team1/tests", "mid")
        ]  # fmt: skip
        # phase result is a valid guild.phase_result.v1
        from agentrt.teams import validate_contract

        assert validate_contract(
            json.loads((project / ".agentrt/runs/team1/phase_result.json").read_text())
        ) == ("guild.phase_result.v1")

    run(main())


def test_bundles_share_a_byte_identical_universal_layer(project: Path) -> None:
    rec = Recorder()

    async def main() -> None:
        team = Team(project, rec)
        try:
            await team.reply(approve(await team.start()))
        finally:
            await team.rt.close()

    run(main())
    bundles = sorted((project / ".agentrt" / "context" / "team1").glob("*.md"))
    assert [b.stem for b in bundles] == ["backend-api", "doc-writer-docs", "qa-tests"]
    prefixes = {b.read_text().split("\n# Role\n")[0] for b in bundles}
    assert len(prefixes) == 1 and next(iter(prefixes)).startswith("# Universal\n")
    # the downstream lane's bundle carries its upstream receipt's summary, read from the file
    assert "- api: api: CSV endpoint for reports (sonnet)." in (bundles[2]).read_text()
    # the prompt each lane got is its bundle
    first: dict[str, str] = {}
    for c in rec.calls:
        if c.src == "lane":
            first.setdefault(c.metadata["task_id"], c.prompt or "")
    for b in bundles:
        assert first[b.stem.split("-")[-1]] == b.read_text()


def test_advisor_sees_only_the_draft_and_the_question_and_the_lane_continues(project: Path) -> None:
    rec = Recorder()

    out = run_approved(project, rec)
    advisor = rec.lane_calls("tests", "advisor")
    assert len(advisor) == 1
    assert advisor[0].model == "opus"  # one powerful call
    assert "# Universal" not in advisor[0].prompt and "# Role" not in advisor[0].prompt  # never the bundle
    assert "Question: which approach fits Test matrix for the export?" in advisor[0].prompt
    lane = rec.lane_calls("tests")
    assert [c.model for c in lane] == ["sonnet", "sonnet"]  # continued at its tier, not re-run on opus
    assert "# Advisor answer" in lane[1].prompt
    assert out["lanes"][2]["status"] == "done"
    assert out["lanes"][2]["advisor_rounds"] == 1  # the escalation trail, recorded in the run


@pytest.mark.parametrize(("rounds", "expected_calls"), [(None, 2), (1, 1), (0, 0)])
def test_advisor_rounds_cap_then_inconclusive(project: Path, rounds: int | None, expected_calls: int) -> None:
    cfg = "models:\n  escalationMarkers: ['Done:']\n"  # every draft trips the marker
    if rounds is not None:
        cfg += f"  advisorRounds: {rounds}\n"
    write_config(project, cfg)
    rec = Recorder()

    out = run_approved(project, rec)
    assert len(rec.lane_calls("api", "advisor")) == expected_calls
    api = out["lanes"][0]
    assert api["status"] == "inconclusive"
    assert api["advisor_rounds"] == expected_calls
    handoff = parse_receipt(Path(api["receipt"]).read_text())
    assert handoff.notes == "inconclusive: advisor budget exhausted"
    assert handoff.status == "escalate"
    assert out["goal_status"] == "blocked"
    assert out["lanes"][2]["status"] == "upstream-blocked"  # tests depends on api


def test_short_output_trigger_is_per_type_and_tier(project: Path) -> None:
    write_config(project, "models:\n  shortOutputThreshold: {summarize/cheap: 500}\n  advisorRounds: 1\n")
    rec = Recorder()

    out = run_approved(project, rec)
    assert len(rec.lane_calls("docs", "advisor")) == 1  # summarize/cheap: short output fires
    assert rec.lane_calls("api", "advisor") == []  # draft/mid: no threshold configured
    assert out["lanes"][1]["status"] == "inconclusive"


def test_retry_uses_the_same_bundle_and_tier_up_to_max_attempts(project: Path) -> None:
    seen: list[int] = []

    def fail(request: ExecutorRequest, n: int) -> bool:
        if request.src == "lane" and request.metadata.get("task_id") == "docs":
            seen.append(n)
            return len(seen) == 1  # the first docs call fails
        return False

    rec = Recorder(fail)

    async def main() -> tuple[dict[str, Any], list[Any]]:
        team = Team(project, rec)
        try:
            await team.reply(approve(await team.start()))
            return team.output(), team.rt.store.children(team.run_id)
        finally:
            await team.rt.close()

    out, children = run(main())
    docs = rec.lane_calls("docs")
    assert len(docs) == 2
    assert docs[0].prompt == docs[1].prompt and docs[0].model == docs[1].model == "haiku"
    runs = [c for c in children if c.input["task_id"] == "docs"]
    assert [c.status for c in runs] == ["failed", "completed"]  # a retry is a fresh child run
    assert [c.input["attempt"] for c in runs] == [1, 2]
    assert out["lanes"][1]["attempts"] == 2 and out["lanes"][1]["status"] == "done"


def test_max_attempts_exhausted_fails_the_lane(project: Path) -> None:
    write_config(project, "retry: {max_attempts: 3}\n")
    rec = Recorder(lambda r, n: r.src == "lane" and r.metadata.get("task_id") == "docs")

    out = run_approved(project, rec)
    assert len(rec.lane_calls("docs")) == 3
    assert out["lanes"][1]["status"] == "failed" and out["goal_status"] == "partial"


def test_gate_blocks_on_missing_stale_restructure_and_tampered_trail(project: Path) -> None:
    rec = Recorder()

    async def main() -> None:
        team = Team(project, rec)
        try:
            prompt = await team.start()
            first = prompt["proposal_sha256"]
            p = await team.reply({"note": "looks fine"})  # missing decision
            assert p is not None and "missing decision" in p["blocked"]
            p = await team.reply({"verb": "approve", "proposal": "0" * 64})  # stale
            assert p is not None and "stale decision" in p["blocked"]
            p = await team.reply({"verb": "approve", "proposal": first, "auto_approve": True})
            assert p is not None and "auto_approve" in p["blocked"]
            lanes = p["proposal"]["lanes"]
            lanes[1]["tier_pin"] = "mid"
            lanes[1]["tier"] = "mid"
            p = await team.reply({"verb": "restructure", "proposal": first, "lanes": lanes})
            assert p is not None and p["blocked"] is None  # restructure is not an approval
            assert p["proposal_sha256"] != first
            p = await team.reply({"verb": "approve", "proposal": first})  # the old proposal is stale now
            assert p is not None and "stale decision" in p["blocked"]
            # tamper with the trail: even a correct approval is blocked
            trail = team.run_dir() / "gate" / "decisions.jsonl"
            good = trail.read_text()
            trail.write_text(good.replace('"outcome": "blocked"', '"outcome": "approved"', 1))
            p = await team.reply(approve(p))
            assert p is not None and "tampered trail" in p["blocked"]
            assert rec.calls == []
            trail.write_text(good)  # restored: the next approval goes through
            assert await team.reply(approve(p)) is None
            out = team.output()
        finally:
            await team.rt.close()
        assert (
            out["lanes"][1]["tier"] == "mid" and out["lanes"][1]["model"] == "sonnet"
        )  # the restructured pin
        entries = [
            json.loads(line)
            for line in (project / ".agentrt/runs/team1/gate/decisions.jsonl").read_text().splitlines()
        ]
        assert [e["outcome"] for e in entries] == [
            "blocked",
            "blocked",
            "blocked",
            "restructure",
            "blocked",
            "approved",
        ]

    run(main())


def test_rescore_differing_from_the_approved_tier_goes_back_to_the_gate(project: Path) -> None:
    rec = Recorder()

    async def main() -> None:
        team = Team(project, rec)
        try:
            prompt = await team.start()
            assert [lane["tier"] for lane in prompt["proposal"]["lanes"]] == ["mid", "cheap", "mid"]
            # config changes between the plan and the dispatch
            write_config(
                project, "models:\n  thresholds: {mid: 1, powerful: 2}\n  tiers: {powerful: big-model}\n"
            )
            p = await team.reply(approve(prompt))
            assert p is not None, "a differing re-score must not be picked silently"
            assert "api mid -> powerful" in p["note"] and "tests mid -> powerful" in p["note"]
            assert rec.calls == []
            assert [lane["tier"] for lane in p["proposal"]["lanes"]] == ["powerful", "cheap", "powerful"]
            assert await team.reply(approve(p)) is None
            out = team.output()
        finally:
            await team.rt.close()
        assert out["routing"][0] == "lane api · score 2 · tier powerful · model big-model"
        assert {c.model for c in rec.lane_calls("api")} == {"big-model"}

    run(main())


def test_run_wide_pin_and_research_floor(project: Path) -> None:
    spec = (project / "spec.md").read_text().replace("specialist: doc-writer", "specialist: researcher")
    (project / "spec.md").write_text(spec)
    rec = Recorder()

    async def main() -> dict[str, Any]:
        team = Team(project, rec, model_tier="cheap")
        try:
            prompt = await team.start()
            assert [lane["tier"] for lane in prompt["proposal"]["lanes"]] == ["cheap", "powerful", "cheap"]
            await team.reply(approve(prompt))
            return team.output()
        finally:
            await team.rt.close()

    out = run(main())
    assert [lane["model"] for lane in out["lanes"]] == ["haiku", "opus", "haiku"]
    assert {c.model for c in rec.lane_calls("docs")} == {"opus"}  # research: floored at powerful


def test_bundle_over_the_cap_blocks_the_lane(project: Path) -> None:
    write_config(project, "context: {max_tokens: 100}\n")
    rec = Recorder()

    out = run_approved(project, rec)
    assert rec.calls == []
    assert {lane["status"] for lane in out["lanes"][:2]} == {"blocked"}
    assert "over the cap of 100" in out["lanes"][0]["summary"]
    assert out["goal_status"] == "blocked"


ANSWERS = {
    "purpose": "data-stewardship",
    "boundaries": ["does not write endpoints", "does not deploy"],
    "default_tier": "mid",
    "tools": ["read"],
    "body": "Keeps the CSV schema and its column names consistent.",
}


async def interviewed(team: Team, prompt: dict[str, Any] | None) -> dict[str, Any]:
    """Answer a new role's interview (and keep its boundaries if the scan asks); the gate's next question."""
    assert prompt is not None and prompt.get("interview") == "agentrt.specialist_interview.v1", prompt
    prompt = await team.reply(ANSWERS)
    while prompt is not None and prompt.get("boundary_scan"):
        prompt = await team.reply({"verb": "keep"})
    assert prompt is not None and prompt.get("gate"), prompt
    return prompt


def test_new_role_minted_only_through_the_gate(project: Path) -> None:
    rec = Recorder()

    async def main() -> None:
        team = Team(project, rec)
        try:
            prompt = await team.start()
            p = await team.reply(
                {
                    "verb": "add",
                    "proposal": prompt["proposal_sha256"],
                    "specialist": "data-steward",
                    "reason": "owns the CSV schema",
                    "mint": True,
                }
            )
            p = await interviewed(team, p)
            assert not (project / ".agentrt" / "agents" / "data-steward.md").exists()  # not before approval
            assert await team.reply(approve(p)) is None
        finally:
            await team.rt.close()

    run(main())
    text = (project / ".agentrt" / "agents" / "data-steward.md").read_text()
    assert "name: data-steward" in text and "owns the CSV schema" in text


def test_models_enabled_false_skips_scoring_but_keeps_the_research_floor(project: Path) -> None:
    spec = (project / "spec.md").read_text().replace("specialist: doc-writer", "specialist: researcher")
    (project / "spec.md").write_text(spec)
    rec = Recorder()

    async def main() -> dict[str, Any]:
        team = Team(project, rec)
        try:
            prompt = await team.start()
            write_config(project, "models:\n  enabled: false\n  thresholds: {mid: 0, powerful: 0}\n")
            assert await team.reply(approve(prompt)) is None  # no re-score, so no trip back to the gate
            return team.output()
        finally:
            await team.rt.close()

    out = run(main())
    assert out["routing"] == [
        "lane api · score 0 · tier mid · model sonnet",
        "lane docs · score 0 · tier powerful · model opus",
        "lane tests · score 0 · tier mid · model sonnet",
    ]
    assert out["lanes"][0]["learnings"] == ["the offline model is deterministic"]  # recorded, not promoted


def test_a_researcher_substituted_at_the_gate_is_floored_and_sent_back_to_the_gate(project: Path) -> None:
    rec = Recorder()

    async def main() -> dict[str, Any]:
        team = Team(project, rec)
        try:
            prompt = await team.start()
            p = await team.reply(
                {"verb": "substitute", "proposal": prompt["proposal_sha256"], "old": "qa",
                 "new": "researcher", "reason": "the test matrix needs prior art"}
            )  # fmt: skip
            assert p is not None and p["proposal"]["lanes"][2]["specialist"] == "researcher"
            p = await team.reply(approve(p))
            assert p is not None and "tests mid -> powerful" in p["note"]  # the research floor, re-scored
            assert await team.reply(approve(p)) is None
            return team.output()
        finally:
            await team.rt.close()

    out = run(main())
    assert out["lanes"][2]["model"] == "opus"
    assert {c.model for c in rec.lane_calls("tests")} == {"opus"}
    agents = sorted(p.stem for p in (project / ".agentrt" / "agents").glob("*.md"))
    assert agents == ["backend", "doc-writer", "researcher"]  # qa was never minted


def test_a_summary_over_600_characters_is_refused_and_asked_again_never_cut(project: Path) -> None:
    long_summary = "docs: " + "x" * 694  # 700 characters

    class LongFirst(Recorder):
        async def generate_text(self, request: ExecutorRequest) -> GenerateResult:
            result = await super().generate_text(request)
            first_docs = request.src == "lane" and request.metadata.get("task_id") == "docs"
            if first_docs and not request.attempts:
                return GenerateResult(output={**result.output, "summary": long_summary}, usage=result.usage)
            return result

    rec = LongFirst()
    out = run_approved(project, rec)
    docs = rec.lane_calls("docs")
    assert len(docs) == 2  # the same request, asked again with the refusal fed back
    assert docs[1].attempts and "700 characters" in docs[1].attempts[0].error
    assert "at most 600" in docs[1].attempts[0].error
    lane = out["lanes"][1]
    assert lane["status"] == "done" and lane["attempts"] == 1
    assert lane["summary"] == "docs: Document the export (haiku)."  # the second answer, not a cut
    receipt = parse_receipt(Path(lane["receipt"]).read_text())
    assert receipt.summary == lane["summary"] and long_summary[:600] not in Path(lane["receipt"]).read_text()


def test_models_enabled_false_does_not_score_at_plan_time(project: Path) -> None:
    # thresholds that would make every scored lane powerful: with scoring off, none is
    write_config(project, "models:\n  enabled: false\n  thresholds: {mid: 0, powerful: 0}\n")
    rec = Recorder()

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        team = Team(project, rec)
        try:
            prompt = await team.start()
            assert await team.reply(approve(prompt)) is None  # the plan's tiers stand at dispatch
            return prompt, team.output()
        finally:
            await team.rt.close()

    prompt, out = run(main())
    # each lane at its specialist's default_tier (backend mid, doc-writer cheap, qa mid)
    assert {lane["task_id"]: lane["tier"] for lane in prompt["proposal"]["lanes"]} == {
        "api": "mid",
        "docs": "cheap",
        "tests": "mid",
    }
    assert out["routing"] == [
        "lane api · score 0 · tier mid · model sonnet",
        "lane docs · score 0 · tier cheap · model haiku",
        "lane tests · score 0 · tier mid · model sonnet",
    ]


def test_option_a_at_the_gate_mints_the_missing_role_and_runs_its_lane(project: Path) -> None:
    spec = (project / "spec.md").read_text().replace("specialist: doc-writer", "specialist: data-steward")
    (project / "spec.md").write_text(spec)
    rec = Recorder()

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        team = Team(project, rec)
        try:
            prompt = await team.start()
            assert prompt["proposal"]["missing"] == ["data-steward"]
            reply = {**prompt["options_for_missing"]["A"], "reason": "the ledger needs an owner"}
            changed = await interviewed(team, await team.reply(reply))
            assert changed["proposal"]["missing"] == []
            docs = next(lane for lane in changed["proposal"]["lanes"] if lane["task_id"] == "docs")
            assert docs["specialist"] == "data-steward"  # its lane, in the same decision
            assert not (project / ".agentrt" / "agents" / "data-steward.md").exists()  # not before approval
            assert await team.reply(approve(changed)) is None
            return changed, team.output()
        finally:
            await team.rt.close()

    _, out = run(main())
    docs = out["lanes"][1]
    assert (docs["specialist"], docs["status"]) == ("data-steward", "done")
    assert docs["receipt"].endswith("/handoffs/data-steward-docs.md")
    minted = (project / ".agentrt" / "agents" / "data-steward.md").read_text()
    assert "name: data-steward" in minted and "the ledger needs an owner" in minted
    trail = (project / ".agentrt/runs/team1/gate/decisions.jsonl").read_text()
    assert '"choice": "A"' in trail


def test_a_retry_after_an_escalation_is_rescored_with_the_sticky_plus_one(project: Path) -> None:
    failed: list[int] = []

    def fail(request: ExecutorRequest, n: int) -> bool:
        # the tests lane's first attempt dies after its advisor consult
        folded = request.src == "lane" and "# Advisor answer" in (request.prompt or "")
        if folded and request.metadata.get("task_id") == "tests" and not failed:
            failed.append(n)
            return True
        return False

    rec = Recorder(fail)
    out = run_approved(project, rec)
    calls = rec.lane_calls("tests")
    # attempt 1 at mid (score 2): draft, consult, folded call (fails); attempt 2 re-scored 2+1 = 3
    assert [c.model for c in calls] == ["sonnet", "sonnet", "opus", "opus"]
    lane = out["lanes"][2]
    assert (lane["tier"], lane["model"], lane["attempts"], lane["status"]) == ("powerful", "opus", 2, "done")
    rows = [
        json.loads(line) for line in (project / ".agentrt/runs/team1/routing.jsonl").read_text().splitlines()
    ]
    last = [r for r in rows if r["task_id"] == "tests"][-1]
    assert last["line"] == "lane tests · score 3 · tier powerful · model opus"
    assert "prior escalation (sticky) +1" in last["reasons"] and last["escalations"] >= 1
    trail = sorted(p.name for p in (project / ".agentrt/runs/team1/escalations").glob("*.json"))
    assert trail[0] == "tests.1.1.json"
    # the receipt was published at the tier the lane now holds
    log = [
        json.loads(line) for line in (project / ".agentrt/runs/team1/bus/log.jsonl").read_text().splitlines()
    ]
    assert ("handoff/team1/tests", "powerful") in [(e["topic"], e["publisher_tier"]) for e in log]


def test_a_retry_without_an_escalation_keeps_its_tier(project: Path) -> None:
    rec = Recorder(lambda r, n: r.src == "lane" and r.metadata.get("task_id") == "api" and n <= 2)
    out = run_approved(project, rec)
    assert {c.model for c in rec.lane_calls("api")} == {"sonnet"}
    assert out["lanes"][0]["tier"] == "mid" and out["lanes"][0]["attempts"] == 2


REVIEWER = """  - task_id: api-review
    specialist: qa
    title: Review the CSV endpoint
    work_type: review
    reviews: api
    brief: Check the endpoint against the spec. [block-once]
excluded:"""


def with_reviewer(project: Path) -> None:
    spec = (project / "spec.md").read_text().replace("excluded:", REVIEWER, 1)
    (project / "spec.md").write_text(spec)


def test_the_review_gate_sends_a_lane_back_once_then_passes_it(project: Path) -> None:
    with_reviewer(project)
    rec = Recorder()
    out = run_approved(project, rec)
    lanes = {lane["task_id"]: lane for lane in out["lanes"]}
    api, review = lanes["api"], lanes["api-review"]
    assert (api["status"], api["attempts"], api["review_rounds"]) == ("done", 2, 1)
    assert "The review addressed." in api["summary"]
    assert (review["status"], review["attempts"]) == ("done", 2)
    # the second api dispatch carried the findings; tests waited for the review to pass
    api_calls = rec.lane_calls("api")
    assert "# Review findings" not in api_calls[0].prompt
    assert "- Review the CSV endpoint: cover the error path" in api_calls[-1].prompt
    assert "The review addressed." in rec.lane_calls("tests")[0].prompt
    assert out["goal_status"] == "complete"
    # the reviews are review_result.v1 files naming the receipt they reviewed
    from agentrt.teams import validate_contract

    reviews = sorted((project / ".agentrt/runs/team1/reviews").glob("*.json"))
    assert [p.name for p in reviews] == ["api.api-review.1.json", "api.api-review.2.json"]
    first = json.loads(reviews[0].read_text())
    assert validate_contract(first) == "review_result.v1"
    assert first["verdict"] == "changes_requested" and first["blocking_findings"]
    assert first["packet_id"] == "team1/api" and len(first["artifact_sha256_reviewed"]) == 64
    assert json.loads(reviews[1].read_text())["blocking_findings"] == []


def test_the_review_gate_is_bounded_then_blocks_the_lane_and_its_dependents(project: Path) -> None:
    with_reviewer(project)
    write_config(project, "review:\n  max_rounds: 0\n")
    rec = Recorder()
    out = run_approved(project, rec)
    lanes = {lane["task_id"]: lane for lane in out["lanes"]}
    assert lanes["api"]["status"] == "blocked"
    assert lanes["api"]["summary"].startswith("review gate: 1 blocking finding(s) after 0 round(s) sent back")
    assert lanes["tests"]["status"] == "upstream-blocked" and rec.lane_calls("tests") == []
    assert len(rec.lane_calls("api")) == 1 and out["goal_status"] == "partial"


def test_a_reviews_key_must_name_another_lane(project: Path) -> None:
    from agentrt.teams import ContractError
    from agentrt.teams.plan import parse_spec

    text = (
        (project / "spec.md")
        .read_text()
        .replace("excluded:", REVIEWER.replace("reviews: api", "reviews: nope"), 1)
    )
    with pytest.raises(ContractError, match="must name another lane of the spec"):
        parse_spec(text)


def test_a_new_role_is_interviewed_drafted_in_proposed_and_its_boundaries_scanned(project: Path) -> None:
    rec = Recorder()
    agents = project / ".agentrt" / "agents"

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        team = Team(project, rec)
        try:
            prompt = await team.start()
            add = {
                "verb": "add",
                "proposal": prompt["proposal_sha256"],
                "specialist": "data-steward",
                "reason": "owns the CSV schema",
                "mint": True,
            }
            asked = await team.reply(add)
            assert asked is not None and asked["interview"] == "agentrt.specialist_interview.v1"
            again = await team.reply({"purpose": "data-stewardship"})  # incomplete: asked again, saying why
            assert again is not None and again["interview"] and "key 'body': is required" in again["blocked"]
            overlapping = {**ANSWERS, "boundaries": ["reports schema failures", "does not deploy"]}
            scan = await team.reply(overlapping)
            assert scan is not None and scan["boundary_scan"] == "agentrt.boundary_scan.v1"
            assert scan["overlaps"] == [
                "boundary 'reports schema failures' overlaps qa's boundary "
                "'reports failures with reproductions' (shared: failures, reports)"
            ]
            draft = (agents / "proposed" / "data-steward.md").read_text()
            assert "reports schema failures" in draft and not (agents / "data-steward.md").exists()
            bad = await team.reply({"verb": "boundaries", "boundaries": []})  # gated: refused, asked again
            assert bad is not None and bad["boundary_scan"] and "non-empty list" in bad["blocked"]
            gate = await team.reply({"verb": "boundaries", "boundaries": ["does not write tests"]})
            assert gate is not None and gate["gate"]  # scanned again: clean, back to the team gate
            assert "does not write tests" in (agents / "proposed" / "data-steward.md").read_text()
            role = next(r for r in gate["proposal"]["roles"] if r["specialist"] == "data-steward")
            assert (role["purpose"], role["default_tier"], role["source"]) == (
                "data-stewardship",
                "mid",
                "new",
            )
            assert await team.reply(approve(gate)) is None
            return gate, team.output()
        finally:
            await team.rt.close()

    run(main())
    live = (agents / "data-steward.md").read_text()
    assert "purpose: data-stewardship" in live and "does not write tests" in live
    assert "Keeps the CSV schema" in live and "owns the CSV schema" in live
    assert not (agents / "proposed" / "data-steward.md").exists()  # went live on approval
    trail = [
        json.loads(line)
        for line in (project / ".agentrt/runs/team1/gate/decisions.jsonl").read_text().splitlines()
    ]
    assert [e["outcome"] for e in trail] == [
        "add",
        "blocked",
        "interview",
        "blocked",
        "boundaries",
        "approved",
    ]


def test_a_skill_is_minted_through_the_gate_and_carried_by_its_roles_lanes(project: Path) -> None:
    rec = Recorder()
    skills = project / ".agentrt" / "skills"

    async def main() -> None:
        team = Team(project, rec)
        try:
            prompt = await team.start()
            skill = {
                "verb": "add_skill",
                "proposal": prompt["proposal_sha256"],
                "skill": "csv-streaming",
                "reason": "large reports time out",
                "for": ["backend"],
                "description": "stream CSV rows",
                "instructions": "Write rows as they come; flush every 1000 rows.",
            }
            blocked = await team.reply({**skill, "for": ["seo"]})
            assert blocked is not None and "must list roles of the team" in blocked["blocked"]
            gate = await team.reply({**skill, "proposal": blocked["proposal_sha256"]})
            assert gate is not None and gate["note"].startswith("skill csv-streaming drafted at ")
            assert (skills / "proposed" / "csv-streaming.md").is_file() and not (
                skills / "csv-streaming.md"
            ).exists()
            assert gate["proposal"]["skills"][0]["for"] == ["backend"]
            assert await team.reply(approve(gate)) is None
        finally:
            await team.rt.close()

    run(main())
    live = (skills / "csv-streaming.md").read_text()
    assert (
        "name: csv-streaming" in live and "flush every 1000 rows" in live and "large reports time out" in live
    )
    assert not (skills / "proposed" / "csv-streaming.md").exists()
    assert "# Skills\n## csv-streaming: stream CSV rows" in rec.lane_calls("api")[0].prompt
    assert "# Skills" not in rec.lane_calls("docs")[0].prompt


def test_a_lane_sent_back_after_an_escalation_is_redispatched_with_the_sticky_plus_one(project: Path) -> None:
    reviewer = REVIEWER.replace("reviews: api", "reviews: tests").replace(
        "task_id: api-review", "task_id: tests-review"
    )
    spec = (project / "spec.md").read_text().replace("excluded:", reviewer, 1)
    (project / "spec.md").write_text(spec)
    rec = Recorder()
    out = run_approved(project, rec)
    lanes = {lane["task_id"]: lane for lane in out["lanes"]}
    # tests escalated at mid (score 2) in its first attempt; sent back, it is dispatched at 2+1 = 3
    assert [c.model for c in rec.lane_calls("tests")] == ["sonnet", "sonnet", "opus", "opus"]
    assert (lanes["tests"]["tier"], lanes["tests"]["review_rounds"], lanes["tests"]["status"]) == (
        "powerful",
        1,
        "done",
    )
