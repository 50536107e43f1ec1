"""A whole team killed again and again, beside the same team never killed.

The team: four lanes and three specialists (``api`` by backend, ``docs`` by doc-writer, ``tests``
by qa, and ``api-review`` by qa reviewing ``api``), a gate approval, and a ``hook`` subscriber on
the bus.  The crashed run is driven by ``agentrt resume`` processes that get SIGKILL at random
moments (up to ``--kills`` of them, each 0.1-1.2 s after it started, seeded) until one
finishes; the other run goes through once.  Printed side by side: kills, model calls per lane,
bus events, hook deliveries, and whether the receipts and the output are byte-identical.

    python examples/team_crash_trial.py [--kills 11] [--seed 28] [--keep]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from examples import team_demo  # noqa: E402  (the repository root is on sys.path only now)

REVIEWER = """  - task_id: api-review
    specialist: qa
    title: Review the CSV endpoint
    work_type: review
    reviews: api
    brief: Check the endpoint against the spec. [block-once]
excluded:"""


def setup(work: Path) -> tuple[Path, dict[str, str]]:
    project = work / "project"
    project.mkdir(parents=True)
    spec = (REPO / "examples" / "team_spec.md").read_text().replace("excluded:", REVIEWER, 1)
    (project / "spec.md").write_text(spec)
    return project, team_demo.environment(work)


def subscribe(project: Path) -> None:
    from agentrt.teams import Bus

    Bus(project / ".agentrt" / "runs" / team_demo.RUN_ID).subscribe("watcher", ["handoff/**"], "hook")


def status(env: dict[str, str]) -> str:
    shown = subprocess.run(
        team_demo.agentrt("show", team_demo.RUN_ID, "--json"), env=env, capture_output=True, text=True
    )
    return str(json.loads(shown.stdout)["status"]) if shown.returncode == 0 else "?"


def effects(work: Path, project: Path, env: dict[str, str]) -> dict[str, Any]:
    from agentrt.teams import Bus

    run = project / ".agentrt" / "runs" / team_demo.RUN_ID
    bus = Bus(run)
    shown = subprocess.run(
        team_demo.agentrt("show", team_demo.RUN_ID, "--json"),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    output = json.loads(json.dumps(json.loads(shown.stdout)["output"]).replace(str(project), "<project>"))
    return {
        "calls": Counter(f"{c['task_id']}:{c['src']}" for c in team_demo.calls(work)),
        "events": len(bus.events()),
        "deliveries": len(bus.deliveries()),
        "per_receipt": Counter(e.key for e in bus.events()),  # receipt/<task>/<attempt>
        "receipts": {p.name: p.read_bytes() for p in sorted((run / "handoffs").glob("*.md"))},
        "output": output,
    }


def uncrashed(work: Path) -> dict[str, Any]:
    project, env = setup(work)
    prompt = team_demo.plan(project, env)
    subscribe(project)
    subprocess.run(team_demo.reply_command(prompt), env=env, check=True, capture_output=True)
    return effects(work, project, env)


def crashed(work: Path, kills: int, seed: int) -> tuple[dict[str, Any], int]:
    rng = random.Random(seed)
    project, env = setup(work)
    prompt = team_demo.plan(project, env)
    subscribe(project)
    slow = dict(env, AGENTRT_TEAM_PAUSE="0.3")
    done_kills = 0
    refused = False  # the last reply was refused: it had landed already, the run only needs driving
    said = ""  # what the last process that was not killed said, for the failure message
    deadline = time.monotonic() + 180  # every kill costs one more process; a few more finish the run
    while time.monotonic() < deadline:
        # a process killed before its reply landed leaves the run at the gate: send the reply again
        at_gate = (
            status(env) == "waiting"
            and not (project / ".agentrt" / "runs" / team_demo.RUN_ID / "routing.jsonl").exists()
        )
        replying = at_gate and not refused
        command = (
            team_demo.reply_command(prompt)
            if replying
            else team_demo.agentrt("resume", team_demo.RUN_ID, "--log-format", "none")
        )
        proc = subprocess.Popen(
            command, env=slow, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        if done_kills < kills:
            time.sleep(rng.uniform(0.1, 1.2))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                done_kills += 1
        _, said = proc.communicate()
        failed = proc.returncode not in (0, -signal.SIGKILL)
        refused = replying and failed
        if status(env) == "completed":
            break
        if failed:  # e.g. the lease of a killed process not yet taken over: try again shortly
            time.sleep(0.5)
    else:
        raise SystemExit(
            f"team_crash_trial: the run did not complete ({status(env)}) after {done_kills} kills; "
            f"the last process said: {said.strip()[-2000:]}"
        )
    return effects(work, project, env), done_kills


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kills", type=int, default=11)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentrt-trial-"))
    try:
        clean = uncrashed(work / "uncrashed")
        hurt, kills = crashed(work / "crashed", args.kills, args.seed)
        lanes = sorted({k.split(":")[0] for k in [*clean["calls"], *hurt["calls"]]})
        print(f"{'':<28}{'uncrashed':>10}{'crashed':>10}")
        print(f"{'SIGKILLs':<28}{0:>10}{kills:>10}")
        for lane in lanes:
            for src in ("lane", "advisor"):
                key = f"{lane}:{src}"
                if clean["calls"][key] or hurt["calls"][key]:
                    print(f"{'model calls ' + key:<28}{clean['calls'][key]:>10}{hurt['calls'][key]:>10}")
        print(f"{'bus events':<28}{clean['events']:>10}{hurt['events']:>10}")
        print(f"{'hook deliveries':<28}{clean['deliveries']:>10}{hurt['deliveries']:>10}")
        most = [max(c["per_receipt"].values()) for c in (clean, hurt)]
        print(f"{'max events per receipt':<28}{most[0]:>10}{most[1]:>10}")
        print(f"receipts byte-identical: {clean['receipts'] == hurt['receipts']}")
        print(f"output identical: {clean['output'] == hurt['output']}")
        same = clean["receipts"] == hurt["receipts"] and clean["output"] == hurt["output"]
        same = same and clean["events"] == hurt["events"] and clean["deliveries"] == hurt["deliveries"]
        return 0 if same else 1
    finally:
        if args.keep:
            print(f"kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
