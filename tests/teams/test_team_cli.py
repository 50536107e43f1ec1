"""The CLI end to end: plan, the gate answered with ``agentrt resume --reply``, SIGKILL of the
lead mid-run and a resume that does not re-run finished lanes; lint and stats.  The example's
own steps run as it runs them (processes); the commands the test types run in the test process."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from examples import team_demo
from tests.cli import helpers

REPO = Path(__file__).resolve().parents[2]


def setup(tmp_path: Path, name: str) -> tuple[Path, Path, dict[str, str]]:
    work = tmp_path / name
    project = work / "project"
    project.mkdir(parents=True)
    shutil.copy(REPO / "examples" / "team_spec.md", project / "spec.md")
    return work, project, team_demo.environment(work)


def cli(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``agentrt ARGS`` in the test process (tests/cli/inprocess.py), from the test's directory."""
    proc = helpers.cli(*args, env=env, cwd=Path.cwd())
    if check:
        proc.check_returncode()
    return proc


def normalized_output(env: dict[str, str], project: Path) -> Any:
    out = json.loads(cli(env, "show", team_demo.RUN_ID, "--json").stdout)
    assert out["status"] == "completed", out
    return json.loads(json.dumps(out["output"]).replace(str(project), "<project>"))


def receipts(project: Path) -> dict[str, str]:
    root = project / ".agentrt" / "runs" / team_demo.RUN_ID / "handoffs"
    return {p.name: p.read_text() for p in sorted(root.glob("*.md"))}


def lane_runs(work: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(work / "agentrt.db")
    try:
        rows = conn.execute(
            "SELECT run_id, status, input FROM runs WHERE parent_id = ?", (team_demo.RUN_ID,)
        ).fetchall()
    finally:
        conn.close()
    return sorted((run_id, status, json.loads(inp)["task_id"]) for run_id, status, inp in rows)


def test_plan_prints_the_proposal_and_waits(tmp_path: Path) -> None:
    work, project, env = setup(tmp_path, "plan")
    shown = cli(
        env,
        "teams",
        "plan",
        str(project / "spec.md"),
        "--project",
        str(project),
        "--run-id",
        "p1",
        "--log-format",
        "none",
    )
    assert "team proposal for csv-export (build): 3 roles, 2 excluded, 0 missing" in shown.stdout
    assert "excluded seo: the export is behind login" in shown.stdout
    assert "lane tests -> qa · tier mid · depends on api" in shown.stdout
    assert re.search(r"approve:  agentrt resume p1 --reply '\{.*\"verb\": \"approve\"", shown.stdout)
    status = json.loads(cli(env, "show", "p1", "--json").stdout)
    assert status["status"] == "waiting" and status["waiting_on"] == "reply"
    assert not (work / "model_calls.jsonl").exists()
    # no flag approves a team decision
    refused = cli(env, "teams", "plan", str(project / "spec.md"), "--auto-approve", check=False)
    assert refused.returncode == 2 and "--auto-approve" in refused.stderr


def test_kill_the_lead_mid_run_and_resume_without_rerunning_finished_lanes(tmp_path: Path) -> None:
    # the reference: an uninterrupted run in fresh processes
    _, project0, env0 = setup(tmp_path, "straight")
    subprocess.run(team_demo.reply_command(team_demo.plan(project0, env0)), env=env0, check=True)
    expected = normalized_output(env0, project0)

    work, project, env = setup(tmp_path, "crash")
    prompt = team_demo.plan(project, env)
    killed = team_demo.approve_and_kill(project, work, env, prompt)
    before = team_demo.calls(work)
    assert {c["task_id"] for c in before if c["src"] == "lane"} == {"api", "docs", "tests"}
    lead = json.loads(cli(env, "show", team_demo.RUN_ID, "--json").stdout)
    assert (lead["status"], lead["waiting_on"]) == ("waiting", "child")  # mid-await on its lanes
    # the config changes before the resume: routing recorded in the run must not follow it
    (project / ".agentrt" / "teams.yaml").write_text(
        "models:\n  tiers: {mid: other-model, cheap: other-cheap}\n"
    )
    resumed = cli(env, "resume", team_demo.RUN_ID, "--log-format", "none")
    assert resumed.returncode == 0, resumed.stderr
    after = [c for c in team_demo.calls(work) if c["pid"] != killed]
    assert after, "the lane in flight must be dispatched again"
    assert {c["task_id"] for c in after} == {"tests"}  # api and docs are not asked again
    assert {c["model"] for c in team_demo.calls(work) if c["task_id"] == "tests" and c["src"] == "lane"} == {
        "sonnet"
    }
    # the in-flight request is re-sent with the same request id
    first_tests = next(c["key"] for c in before if c["task_id"] == "tests")
    assert first_tests in {c["key"] for c in after}
    # one child run per lane: nothing re-created
    assert sorted((task, status) for _, status, task in lane_runs(work)) == [
        ("api", "completed"),
        ("docs", "completed"),
        ("tests", "completed"),
    ]
    # same outcome and same receipts as the uninterrupted run
    assert normalized_output(env, project) == expected
    assert receipts(project) == receipts(project0)
    # lint and stats from the CLI
    lint = cli(env, "teams", "lint", team_demo.RUN_ID, "--project", str(project), "--enforce")
    assert "3 receipt(s) ok, 0 flagged" in lint.stdout
    stats = json.loads(cli(env, "teams", "stats", team_demo.RUN_ID, "--json").stdout)
    assert {lane["task_id"]: lane["model"] for lane in stats["lanes"]} == {
        "api": "sonnet",
        "docs": "haiku",
        "tests": "sonnet",
    }
    assert stats["tiers"]["powerful"]["model_calls"] == 1  # the advisor
    assert stats["tiers"]["cheap"]["model_calls"] == 1 and stats["tiers"]["mid"]["model_calls"] == 3
    conn = sqlite3.connect(work / "agentrt.db")
    try:
        usage = [
            json.loads(u)
            for (u,) in conn.execute("SELECT usage FROM runs WHERE parent_id = ?", (team_demo.RUN_ID,))
        ]
    finally:
        conn.close()
    assert stats["total"]["total_tokens"] == sum(u["total_tokens"] for u in usage)


def test_lint_flags_missing_duplicate_and_invalid_receipts(tmp_path: Path) -> None:
    _, project, env = setup(tmp_path, "lint")
    subprocess.run(team_demo.reply_command(team_demo.plan(project, env)), env=env, check=True)
    handoffs = project / ".agentrt" / "runs" / team_demo.RUN_ID / "handoffs"
    good = (handoffs / "backend-api.md").read_text()
    block = good[good.index("```json") :]
    (handoffs / "x-none.md").write_text(good[: good.index("```json")])
    (handoffs / "x-dup.md").write_text(good + "\n" + block)
    (handoffs / "x-bad.md").write_text(good.replace('"tier": "mid"', '"tier": "huge"'))
    (handoffs / "x-nocat.md").write_text(good.replace("artifact_category: handoff\n", ""))
    warn = cli(env, "teams", "lint", team_demo.RUN_ID, "--project", str(project))
    assert warn.returncode == 0  # warn mode
    assert "3 receipt(s) ok, 4 flagged" in warn.stdout
    flagged = json.loads(
        cli(env, "teams", "lint", team_demo.RUN_ID, "--project", str(project), "--json").stdout
    )["flagged"]
    by_file = {Path(line.split(": ", 1)[0]).name: line for line in flagged}
    assert "no fenced envelope block" in by_file["x-none.md"]
    assert "duplicate envelope block" in by_file["x-dup.md"]
    assert "tier" in by_file["x-bad.md"]
    assert "artifact_category" in by_file["x-nocat.md"]
    enforce = cli(env, "teams", "lint", team_demo.RUN_ID, "--project", str(project), "--enforce", check=False)
    assert enforce.returncode == 1


def test_lint_bundle_exits_2_over_the_cap(tmp_path: Path) -> None:
    _, project, env = setup(tmp_path, "bundle")
    subprocess.run(team_demo.reply_command(team_demo.plan(project, env)), env=env, check=True)
    bundles = sorted(str(p) for p in (project / ".agentrt" / "context" / team_demo.RUN_ID).glob("*.md"))
    assert len(bundles) == 3
    assert cli(env, "teams", "lint-bundle", *bundles).returncode == 0
    over = cli(env, "teams", "lint-bundle", *bundles, "--max-tokens", "50", check=False)
    assert over.returncode == 2 and "over the cap of 50" in over.stderr


def test_the_example_script_runs() -> None:
    args = [sys.executable, str(REPO / "examples" / "team_demo.py"), "--kill"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "3 receipt(s) ok, 0 flagged" in done.stdout
    assert "finished lanes asked their model again after the kill: 0" in done.stdout


def test_lint_of_an_unknown_run_exits_with_the_not_found_status(tmp_path: Path) -> None:
    _, project, env = setup(tmp_path, "unknown")
    done = cli(env, "teams", "lint", "no-such-run", "--project", str(project), check=False)
    assert done.returncode == 2, done.stderr  # the README's "usage or unknown thing", not 3 (store trouble)
    assert "no team run 'no-such-run' in project" in done.stderr and "--project" in done.stderr


def test_lint_bundle_honours_the_projects_context_max_tokens(tmp_path: Path) -> None:
    _, project, env = setup(tmp_path, "cap")
    context = project / ".agentrt" / "context" / "r1"
    context.mkdir(parents=True)
    bundle = context / "qa-tests.md"
    bundle.write_text("word " * 400)  # 2000 characters: about 500 tokens
    assert cli(env, "teams", "lint-bundle", str(bundle)).returncode == 0  # the default cap, 6000
    (project / ".agentrt" / "teams.yaml").write_text("context:\n  max_tokens: 100\n")
    over = cli(env, "teams", "lint-bundle", str(bundle), check=False)
    assert over.returncode == 2 and "over the cap of 100" in over.stderr
    # --project names the project whose config applies; --max-tokens wins over both
    elsewhere = tmp_path / "bundle.md"
    elsewhere.write_text(bundle.read_text())
    assert cli(env, "teams", "lint-bundle", str(elsewhere), check=False).returncode == 0
    assert (
        cli(env, "teams", "lint-bundle", str(elsewhere), "--project", str(project), check=False).returncode
        == 2
    )
    assert cli(env, "teams", "lint-bundle", str(bundle), "--max-tokens", "1000").returncode == 0


def test_the_demo_docstring_names_the_tier_the_tests_lane_runs_at() -> None:
    from agentrt.teams import TierConfig, score_lane
    from agentrt.teams.plan import lane_signals, parse_spec

    spec = parse_spec((REPO / "examples" / "team_spec.md").read_text(), "team_spec.md")
    lane = next(lane for lane in spec["lanes"] if lane["task_id"] == "tests")
    tier = score_lane(lane_signals(lane, "qa"), TierConfig()).tier
    doc = " ".join((team_demo.__doc__ or "").split())
    assert f"it runs at ``{tier}``" in doc
    assert "cheap draft" not in doc


def test_status_shows_the_team_as_its_lanes(tmp_path: Path) -> None:
    _, project, env = setup(tmp_path, "status")
    prompt = team_demo.plan(project, env)
    at_gate = json.loads(cli(env, "teams", "status", team_demo.RUN_ID, "--json").stdout)
    assert (at_gate["status"], at_gate["gate"], at_gate["lanes"]) == (
        "waiting",
        "waiting for a team decision",
        [],
    )
    subprocess.run(team_demo.reply_command(prompt), env=env, check=True)
    shown = cli(env, "teams", "status", team_demo.RUN_ID)
    assert "team run team-demo (completed, goal complete)" in shown.stdout
    status = json.loads(cli(env, "teams", "status", team_demo.RUN_ID, "--json").stdout)
    lanes = {lane["task_id"]: lane for lane in status["lanes"]}
    assert sorted(lanes) == ["api", "docs", "tests"]
    assert {
        (t, lane["tier"], lane["state"], lane["attempts"], lane["receipts"]) for t, lane in lanes.items()
    } == {
        ("api", "mid", "done", 1, 1),
        ("docs", "cheap", "done", 1, 1),
        ("tests", "mid", "done", 1, 1),
    }
    assert lanes["tests"]["escalations"] == 1 and lanes["api"]["escalations"] == 0
    assert not any(lane["live"] for lane in lanes.values())
    missing = cli(env, "teams", "status", "nope", check=False)
    assert missing.returncode == 2 and "no run 'nope'" in missing.stderr


@pytest.mark.slow
def test_the_crash_trial_matches_the_uncrashed_run() -> None:
    args = [sys.executable, str(REPO / "examples" / "team_crash_trial.py"), "--kills", "4", "--seed", "5"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "receipts byte-identical: True" in done.stdout and "output identical: True" in done.stdout
    assert re.search(r"max events per receipt\s+1\s+1", done.stdout)
