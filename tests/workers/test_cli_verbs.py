"""``agentrt worker / submit / reply / cancel / runs --json``, as a user would run them."""

from __future__ import annotations

import json
import signal
import time

from tests.cli.helpers import cli, cli_env, cli_json, popen
from tests.workers.agents import Job, expected


def runs_json(store):
    proc = cli("runs", "--store", store, "--json", "--limit", "0")
    assert proc.returncode == 0, proc.stderr
    return {r["run_id"]: r for r in json.loads(proc.stdout)["runs"]}


def wait_for(predicate, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_submit_worker_reply_cancel_and_drain(tmp_path):
    store = str(tmp_path / "agentrt.db")
    code, out, err = cli_json(
        "submit",
        "tests.workers.agents:mixed",
        "--input",
        '{"i": 1, "ask": true}',
        "--run-id",
        "a",
        "--store",
        store,
    )
    assert (code, out) == (0, {"run_id": "a", "status": "queued"}), err
    assert cli_json("submit", "tests.workers.agents:mixed", "--input", '{"i": 2}', "--store", store)[0] == 0
    cli_json(
        "submit", "tests.workers.agents:careful", "--input", '{"i": 3}', "--run-id", "c", "--store", store
    )
    listed = runs_json(store)
    assert {r["status"] for r in listed.values()} == {"queued"}
    assert all(r["interrupted"] is False for r in listed.values())

    worker = popen("worker", "--store", store, "--concurrency", "4", "--log-format", "none", env=cli_env())
    try:
        wait_for(lambda: runs_json(store)["a"].get("waiting_on") == "reply")
        code, out, err = cli_json("reply", "a", '"yes"', "--store", store)
        assert code == 0 and out["replied_to"] == "a", err
        wait_for(lambda: runs_json(store)["a"]["status"] == "completed")
        assert runs_json(store)["a"]["output"] == {"value": expected(Job(1, ask=True))}
        wait_for(lambda: runs_json(store)["c"].get("waiting_on") == "reply")
        code, out, err = cli_json("cancel", "c", "--store", store)
        assert code == 0 and out["cancelled"] == ["c"], err
        wait_for(lambda: runs_json(store)["c"]["status"] == "cancelled")
        done = wait_for(lambda: [r for r in runs_json(store).values() if r["status"] == "completed"])
        assert len(done) == 2
    finally:
        worker.send_signal(signal.SIGTERM)
        out, err = worker.communicate(timeout=60)
    assert worker.returncode == 0, err
    assert "draining" in err
    code, out, err = cli_json("reply", "a", '"again"', "--store", store)
    assert code == 2 and "nothing to reply to" in err
