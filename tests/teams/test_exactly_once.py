"""A lane's completion happens once however the process dies: killed at every point of it (receipt
written, content stored, event logged, deliveries recorded, receipt published, acceptance written,
the lead reading it), the resumed team has one bus event and one hook delivery per receipt, and
its receipts and output are byte for byte those of a run that was never killed.

The kill is ``os._exit`` inside a worker process (tests/teams/crash_worker.py) at the named point;
the resume is a new process on the same SQLite or PostgreSQL store."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentrt import MemoryStore, Runtime
from agentrt.stores import open_store
from agentrt.teams import Bus, acceptance
from agentrt.teams.report import team_status
from agentrt.teams.team import team_lead
from examples import team_executors
from tests.teams import crash_worker

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "examples" / "team_spec.md"
RUN_ID = "team1"
STEPS = (
    "receipt.written",
    "bus.stored",
    "bus.logged",
    "bus.fanned-out",
    "receipt.published",
    "receipt.accepted",
    "lead.reading",
)


def new_project(root: Path) -> Path:
    root.mkdir(parents=True)
    shutil.copy(SPEC, root / "spec.md")
    return root


def worker(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, crash_worker.__file__, *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )


def run_dir(project: Path) -> Path:
    return project / ".agentrt" / "runs" / RUN_ID


def effects(project: Path, output: Any) -> dict[str, Any]:
    """What must be the same as an uncrashed run's: receipts, bus events, deliveries, output."""
    bus = Bus(run_dir(project))
    handoffs = run_dir(project) / "handoffs"
    return {
        "receipts": {p.name: p.read_bytes() for p in sorted(handoffs.glob("*.md"))},
        "events": [(e.seq, e.topic, e.sha256, e.key) for e in bus.events()],
        "deliveries": [(d["subscriber"], d["seq"], d["topic"]) for d in bus.deliveries()],
        "output": json.loads(json.dumps(output).replace(str(project), "<project>")),
    }


@pytest.fixture(scope="module")
def uncrashed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same team, never killed (in this process, on a memory store)."""
    project = new_project(tmp_path_factory.mktemp("uncrashed") / "project")

    async def main() -> dict[str, Any]:
        rt = Runtime(MemoryStore(), executors=team_executors.offline, step_budget_seconds=None)
        try:
            await rt.start(team_lead, {"spec": "spec.md", "project": str(project)}, run_id=RUN_ID)
            rec = await rt.settle(RUN_ID)
            Bus(run_dir(project)).subscribe("watcher", ["handoff/**"], "hook")
            await rt.reply(RUN_ID, rec.pending["prompt"]["reply_with"])
            rec = await rt.settle(RUN_ID)
            assert rec.status == "completed", rec.error
            return effects(project, rec.output)
        finally:
            await rt.close()

    return asyncio.run(main())


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the killed worker and the resuming runtime meet: a SQLite file or a PostgreSQL schema."""
    if request.param == "sqlite":
        return str(tmp_path / "agentrt.db")
    url: str = request.getfixturevalue("pg_url")
    return url


def test_the_uncrashed_run_has_one_event_and_one_delivery_per_receipt(uncrashed: dict[str, Any]) -> None:
    assert len(uncrashed["receipts"]) == 3
    assert [seq for seq, _, _, _ in uncrashed["events"]] == [1, 2, 3]
    assert sorted(t for _, t, _, _ in uncrashed["events"]) == [
        "handoff/team1/api", "handoff/team1/docs", "handoff/team1/tests"
    ]  # fmt: skip
    assert [d[1] for d in uncrashed["deliveries"]] == [1, 2, 3]
    assert uncrashed["output"]["goal_status"] == "complete"


#: ``AGENTRT_TEAM_CRASH=all`` kills the first and the last lane at every step on both stores.  By
#: default (and in CI, which must stay under 15 minutes) each store kills one lane at every step:
#: the last on SQLite, the first on PostgreSQL -- every step on every store, every step of each lane.
ALL_CRASHES = os.environ.get("AGENTRT_TEAM_CRASH") == "all"
DEFAULT_CRASHES = {("sqlite", 3), ("postgres", 1)}


@pytest.mark.parametrize("hit", [1, 3], ids=["first-lane", "last-lane"])
@pytest.mark.parametrize("step", STEPS)
def test_killed_at_every_step_of_a_lane_completion(
    store_url: str, tmp_path: Path, request: pytest.FixtureRequest, step: str, hit: int
) -> None:
    backend = "postgres" if store_url.startswith("postgres") else "sqlite"
    if not ALL_CRASHES and (backend, hit) not in DEFAULT_CRASHES:
        pytest.skip("this lane on this store is killed with AGENTRT_TEAM_CRASH=all")
    uncrashed: dict[str, Any] = request.getfixturevalue("uncrashed")
    project = new_project(tmp_path / "project")
    planned = worker("plan", store_url, str(project))
    assert planned.returncode == 0, planned.stderr[-3000:]
    died = worker("die", store_url, step, str(hit), planned.stdout)
    assert died.returncode == crash_worker.DIED, (died.returncode, died.stderr[-3000:])
    killed = open_store(store_url)
    try:  # `agentrt teams status` after the kill: the lanes as they were, none live (its owner is dead)
        status = team_status(killed, RUN_ID)
    finally:
        killed.close()
    assert status["status"] in ("running", "waiting")
    assert {"api", "docs"} <= {lane["task_id"] for lane in status["lanes"]}  # the dispatched lanes
    assert not any(lane["live"] for lane in status["lanes"])
    resumed = worker("resume", store_url)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = effects(project, json.loads(resumed.stdout))
    assert after["receipts"] == uncrashed["receipts"]
    # one event per receipt, one delivery per event: no receipt published twice
    assert sorted(t for _, t, _, _ in after["events"]) == sorted(t for _, t, _, _ in uncrashed["events"])
    assert [seq for seq, _, _, _ in after["events"]] == [1, 2, 3]
    assert sorted(d[1] for d in after["deliveries"]) == [1, 2, 3]
    assert after["output"] == uncrashed["output"]
    # and every lane attempt's acceptance record accepts the receipt on disk
    for record in (run_dir(project) / "accepted").glob("*.json"):
        doc = json.loads(record.read_text())
        acceptance.check_accepted(doc["receipt"], record)
