"""A team of specialists end to end: a spec becomes a plan and three lanes, on the offline executors.

1. ``agentrt teams plan examples/team_spec.md`` composes the team (backend, doc-writer, qa; seo and
   frontend excluded with reasons) and waits at the team gate: the process exits, the run waits
   in the store;
2. the gate is answered with ``agentrt resume RUN --reply '{"verb": "approve", "proposal": ...}'``
   and the lanes run as child runs: ``api`` and ``docs`` at once, then ``tests`` (it depends on
   ``api``; it runs at ``mid`` -- score 2: a draft, +1 for its upstream contract -- and its mid
   draft escalates once and the advisor answers at ``powerful``);
3. with ``--kill``, that process gets SIGKILL once ``api`` and ``docs`` wrote their receipts and
   ``tests`` is in flight; ``agentrt resume RUN`` in a new process finishes the team without
   running the finished lanes again;
4. ``agentrt teams lint RUN`` checks the receipts and ``agentrt teams stats RUN`` reports usage per
   tier and per lane.

    python examples/team_demo.py [--kill] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RUN_ID = "team-demo"


def banner(text: str) -> None:
    print(f"\n== {text}", flush=True)


def environment(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["AGENTRT_STORE"] = str(work / "agentrt.db")
    env["AGENTRT_EXECUTORS"] = f"{REPO / 'examples' / 'team_executors.py'}:offline"
    env["AGENTRT_EXAMPLE_SIDE_EFFECTS"] = str(work / "model_calls.jsonl")
    return env


def agentrt(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentrt", *args]


def plan(project: Path, env: dict[str, str], run_id: str = RUN_ID) -> dict[str, Any]:
    """Run ``agentrt teams plan`` (printed), then return the gate's question as JSON."""
    spec = project / "spec.md"
    subprocess.run(
        agentrt(
            "teams", "plan", str(spec), "--project", str(project), "--run-id", run_id, "--log-format", "none"
        ),
        env=env,
        check=True,
    )
    shown = subprocess.run(
        agentrt("show", run_id, "--json"), env=env, check=True, capture_output=True, text=True
    )
    prompt: dict[str, Any] = json.loads(shown.stdout)["prompt"]
    return prompt


def reply_command(prompt: dict[str, Any], run_id: str = RUN_ID) -> list[str]:
    return agentrt("resume", run_id, "--reply", json.dumps(prompt["reply_with"]), "--log-format", "none")


def calls(work: Path) -> list[dict[str, Any]]:
    path = work / "model_calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def approve_and_kill(project: Path, work: Path, env: dict[str, str], prompt: dict[str, Any]) -> int:
    """Approve in a slowed-down process; SIGKILL it once api and docs are done and tests is in flight."""
    slow = dict(env, AGENTRT_TEAM_PAUSE="1.5")
    proc = subprocess.Popen(reply_command(prompt), env=slow)
    handoffs = project / ".agentrt" / "runs" / RUN_ID / "handoffs"
    deadline = time.monotonic() + 120
    while True:
        done = (handoffs / "backend-api.md").exists() and (handoffs / "doc-writer-docs.md").exists()
        if done and any(c["task_id"] == "tests" for c in calls(work)):
            break
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(
                f"team_demo: the lanes ended early (exit {proc.returncode}) or never reached 'tests'"
            )
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return proc.pid


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kill", action="store_true", help="SIGKILL the lead mid-run, then resume it")
    parser.add_argument("--keep", action="store_true", help="keep the temporary project directory")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentrt-team-"))
    project = work / "project"
    project.mkdir()
    shutil.copy(REPO / "examples" / "team_spec.md", project / "spec.md")
    env = environment(work)
    try:
        banner(f"1. agentrt teams plan spec.md --project {project}")
        prompt = plan(project, env)
        banner("2. agentrt resume RUN --reply (the team decision: approve)")
        if args.kill:
            pid = approve_and_kill(project, work, env, prompt)
            print(f"process {pid} killed with SIGKILL while lane 'tests' was in flight")
            banner(f"3. agentrt resume {RUN_ID} (a new process)")
            subprocess.run(agentrt("resume", RUN_ID, "--log-format", "none"), env=env, check=True)
            again = [c for c in calls(work) if c["pid"] != pid and c["task_id"] in ("api", "docs")]
            print(f"finished lanes asked their model again after the kill: {len(again)}")
        else:
            subprocess.run(reply_command(prompt), env=env, check=True)
        banner(f"4. agentrt teams lint {RUN_ID} / agentrt teams stats {RUN_ID}")
        subprocess.run(
            agentrt("teams", "lint", RUN_ID, "--project", str(project), "--enforce"), env=env, check=True
        )
        subprocess.run(agentrt("teams", "stats", RUN_ID), env=env, check=True)
        return 0
    finally:
        if args.keep:
            print(f"\nproject kept in {project}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
