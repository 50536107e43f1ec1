"""``agentrt workers`` on a rolling deploy: old-code and new-code workers on one SQLite store.

Every worker is a real ``agentrt worker`` subprocess, the commands typed meanwhile run in the
test process (the agent, checkouts and workers of ``test_rolling_deploy``).  Both workers show
up with what they carry and lack once they have met the runs; a cleanly stopped worker is
forgotten; a run only the old code can resume is listed as stranded once only new-code workers
are live; a SIGKILLed worker is no longer live (on its own machine at once: its pid is dead;
elsewhere after three leases).  Every wait polls with a generous deadline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrt.stores.registry import requirement_key
from tests.cli.helpers import cli
from tests.workers.test_rolling_deploy import Worker, _checkout, _env, _reply, _start_run

pytestmark = pytest.mark.system

#: A short lease: workers advertise at least once per lease and stay live for three.
LEASE = "1"


def _worker(checkout: Path, store: str) -> Worker:
    return Worker(checkout, store, AGENTRT_LEASE_SECONDS=LEASE)


def _fleet(store: str) -> dict[str, Any]:
    proc = cli("workers", "--store", store, "--json", env=_env())
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _live(fleet: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The live workers by pid (each worker is its own `python -m agentrt worker` process)."""
    return {w["pid"]: w for w in fleet["workers"] if w["live"]}


def _until(store: str, check: Callable[[dict[str, Any]], bool], timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        fleet = _fleet(store)
        if check(fleet):
            return fleet
        assert time.monotonic() < deadline, json.dumps(fleet, indent=1)
        time.sleep(0.2)


def _keys(worker: dict[str, Any], which: str) -> set[str]:
    return {v["key"] for v in worker[which]}


def test_the_fleet_shows_what_each_worker_carries_and_the_runs_none_can_resume(tmp_path):
    store = str(tmp_path / "fleet.db")
    old, new = _checkout(tmp_path, "v1"), _checkout(tmp_path, "v2")
    _start_run(old, store, "old-0")
    _start_run(new, store, "new-0")
    from agentrt.stores import open_store

    reader = open_store(store, read_only=True)
    try:
        OLD, NEW = (requirement_key(reader.get_run(r).code_required) for r in ("old-0", "new-0"))
    finally:
        reader.close()
    assert OLD != NEW

    # The new worker alone meets old-0 first (a reply makes it runnable): it lacks that code.
    new_worker = _worker(new, store)
    killed: Worker | None = None
    try:
        _until(store, lambda f: new_worker.pid in _live(f))
        _reply(store, "old-0", " blue ")
        _until(store, lambda f: OLD in _keys(_live(f).get(new_worker.pid, {"lacking": []}), "lacking"))
        old_worker = _worker(old, store)
        try:
            _reply(store, "new-0", " red ")
            fleet = _until(
                store,
                lambda f: (
                    OLD in _keys(_live(f).get(old_worker.pid, {"carried": []}), "carried")
                    and NEW in _keys(_live(f).get(new_worker.pid, {"carried": []}), "carried")
                ),
            )
            mine, theirs = _live(fleet)[old_worker.pid], _live(fleet)[new_worker.pid]
            assert OLD not in _keys(mine, "lacking") and NEW not in _keys(theirs, "lacking")
            assert _keys(mine, "carried") != _keys(theirs, "carried")
            assert "changed since the checkpoint" in theirs["lacking"][0]["reason"]
            assert mine["python"] == theirs["python"] and mine["writes_format"] == 2
            assert {a["spec"] for a in mine["agents"]} == {"fleet_agent:bot"}
            assert mine["agents"] != theirs["agents"]  # the same agent, another digest of its run
            assert fleet["stranded"] == []

            # A run suspended in the old code while an old worker is live is not stranded...
            _start_run(old, store, "late-0")
            assert "late-0" not in [s["run_id"] for s in _fleet(store)["stranded"]]
        finally:
            old_worker.stop()  # SIGTERM: it drains and leaves the registry
        # ...and it is once only new-code workers are live.
        fleet = _fleet(store)
        assert old_worker.pid not in {w["pid"] for w in fleet["workers"]}  # forgotten, not just stale
        (stranded,) = fleet["stranded"]
        got = (stranded["run_id"], stranded["status"], stranded["code_required"])
        assert got == ("late-0", "waiting", OLD)
        assert [r["owner"] for r in stranded["reasons"]] == [_live(fleet)[new_worker.pid]["owner"]]
        text = cli("workers", "--store", store, env=_env())
        assert text.returncode == 0 and "1 stranded run(s)" in text.stdout and "late-0" in text.stdout

        # A killed worker stops advertising: not live any more (its pid is dead on this machine).
        killed = _worker(new, store)
        _until(store, lambda f: killed.pid in _live(f))
        killed.kill()  # reaped, and its stderr pipe closed
        fleet = _until(store, lambda f: killed.pid not in _live(f))
        assert new_worker.pid in _live(fleet)
        assert [w["live"] for w in fleet["workers"] if w["pid"] == killed.pid] in ([], [False])
    finally:
        if killed is not None:
            killed.kill()
        log = new_worker.stop()
    assert not [e for e in log if e["event"] in ("driver_error", "failed")], log
    fleet = _fleet(store)
    assert _live(fleet) == {}  # the new worker stopped cleanly: forgotten too
    assert [s["run_id"] for s in fleet["stranded"]] == []  # no live worker has judged late-0 now
