"""The processes of the exactly-once crash test (tests/teams/test_exactly_once.py).

    python tests/teams/crash_worker.py plan STORE PROJECT    # start the team; print the approving reply
    python tests/teams/crash_worker.py die STORE STEP HIT REPLY
    python tests/teams/crash_worker.py resume STORE          # resume; print the output

``die`` approves the waiting team and dies (``os._exit``: no flush, no cleanup, no lease given
back, as SIGKILL) the ``HIT``-th time a lane's completion passes the point ``STEP``
(:mod:`agentrt.teams.acceptance`); it exits 0 if the run ended without getting there (a crash that
did not happen proves nothing), ``DIED`` when it died there.

Every step runs in a process of its own, none in pytest's: pytest rewrites the ``assert``
statements of an installed plugin's package (agentrt's), so its code digests differ from a plain
interpreter's and a run started in one would (rightly) not resume in the other.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from agentrt import Runtime
from agentrt.stores import open_store
from agentrt.teams import Bus, acceptance
from agentrt.teams.team import team_lead
from examples import team_executors

DIED = 70
RUN_ID = "team1"


async def _with_runtime(store_url: str, body: Any) -> Any:
    store = open_store(store_url)
    rt = Runtime(store, executors=team_executors.offline, step_budget_seconds=None)
    try:
        return await body(rt)
    finally:
        await rt.close()
        store.close()


async def plan(rt: Runtime, project: str) -> Any:
    await rt.start(team_lead, {"spec": "spec.md", "project": project}, run_id=RUN_ID)
    rec = await rt.settle(RUN_ID, timeout=120)
    assert rec.status == "waiting", rec.error
    Bus(os.path.join(project, ".agentrt", "runs", RUN_ID)).subscribe("watcher", ["handoff/**"], "hook")
    return rec.pending["prompt"]["reply_with"]


async def approve(rt: Runtime, reply: str) -> str:
    await rt.reply(RUN_ID, json.loads(reply))
    rec = await rt.settle(RUN_ID, timeout=120)
    return f"{rec.status} ({rec.error})"


async def resume(rt: Runtime) -> Any:
    await rt.resume(RUN_ID)
    rec = await rt.settle(RUN_ID, timeout=120)
    assert rec.status == "completed", (rec.status, rec.error)
    return rec.output


def die(store_url: str, step: str, hit: int, reply: str) -> int:
    passed = 0

    def die_at(name: str) -> None:
        nonlocal passed
        if name == step:
            passed += 1
            if passed == hit:
                os._exit(DIED)

    acceptance.step_hook = die_at
    ended = asyncio.run(_with_runtime(store_url, lambda rt: approve(rt, reply)))
    print(f"crash_worker: the run ended {ended} without passing {step!r} {hit} time(s)", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    mode, store_url, *rest = argv
    if mode == "plan":
        print(json.dumps(asyncio.run(_with_runtime(store_url, lambda rt: plan(rt, rest[0])))))
    elif mode == "die":
        return die(store_url, rest[0], int(rest[1]), rest[2])
    elif mode == "resume":
        print(json.dumps(asyncio.run(_with_runtime(store_url, resume))))
    else:
        raise SystemExit(f"crash_worker: unknown mode {mode!r}; use plan, die or resume")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
