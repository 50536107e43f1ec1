"""Model answers survive SIGKILL: an answer journaled before a kill is never requested again.

The agent asks a counting executor (``tests/llm/counting.py``, bound with
``agentrt run --executors``) that logs every call, with its request id
``RUN:SEQ.IDX``, to a file shared by all processes.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import time
from pathlib import Path

from tests.cli.helpers import cli_env, cli_json, popen, read_side_effects
from tests.cli.test_crash import _wait_for_work, check_side_effects

SPEC = "tests.llm.agents:chain"
EXECUTORS = "tests.llm.counting:executors"


def _journaled(store: Path) -> set[str]:
    if not store.exists():
        return set()
    conn = sqlite3.connect(store, timeout=10)
    try:
        return {f"{r}:{s}.{i}" for r, s, i in conn.execute("SELECT run_id, seq, idx FROM results")}
    except sqlite3.OperationalError as exc:  # killed before the schema was created
        assert "no such table" in str(exc), exc
        return set()
    finally:
        conn.close()


def _args(store: Path) -> tuple[str, ...]:
    return ("--store", str(store), "--executors", EXECUTORS, "--log-format", "none")


def test_kill_while_the_third_model_call_is_in_flight(tmp_path):
    store, calls = tmp_path / "store.db", tmp_path / "calls.jsonl"
    env = cli_env(AGENTRT_TEST_MODEL_CALLS=str(calls), AGENTRT_TEST_MODEL_DELAY="0.3")
    proc = popen("run", SPEC, "--input", '{"text": "abc", "n": 5}', "--run-id", "r1", *_args(store), env=env)
    deadline = time.monotonic() + 30
    while "r1:2.0" not in _journaled(store) or len(read_side_effects(calls)) < 3:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert _journaled(store) == {"r1:1.0", "r1:2.0"}

    code, out, err = cli_json("resume", "r1", *_args(store), env=cli_env(AGENTRT_TEST_MODEL_CALLS=str(calls)))
    assert code == 0, err
    ids = [c["key"] for c in read_side_effects(calls)]
    # 1 and 2 were journaled: never asked again; 3 was in flight: asked again (at-least-once)
    assert ids == ["r1:1.0", "r1:2.0", "r1:3.0", "r1:3.0", "r1:4.0", "r1:5.0"]
    assert out["status"] == "completed"
    assert out["output"]["notes"] == ["<1:11>", "<2:14>", "<3:14>", "<4:14>", "<5:14>"]
    assert out["usage"]["model_calls"] == 5  # the killed process's in-flight call was never journaled


def test_sigkill_at_random_moments_never_repeats_a_journaled_model_call(tmp_path):
    rng = random.Random(7)
    store, calls = tmp_path / "store.db", tmp_path / "calls.jsonl"
    env = cli_env(AGENTRT_TEST_MODEL_CALLS=str(calls), AGENTRT_TEST_MODEL_DELAY="0.05")
    killed: list[tuple[int, set[str]]] = []
    for k in range(5):
        if k == 0:
            args: tuple[str, ...] = ("run", SPEC, "--input", '{"text": "x", "n": 12}', "--run-id", "r2")
        else:
            args = ("resume", "r2")
        proc = popen(*args, *_args(store), env=env)
        _wait_for_work(proc, calls)  # the run exists and this process is asking (a slow start-up is fine)
        time.sleep(rng.uniform(0.0, 0.4))
        proc.kill()
        proc.communicate()
        if proc.returncode == 0:
            break
        killed.append((proc.pid, _journaled(store)))
    code, out, err = cli_json("resume", "r2", *_args(store), env=env)
    assert code == 0, err
    assert out["status"] == "completed" and len(out["output"]["notes"]) == 12
    # no call journaled before a kill was made again; a process never made one call twice;
    # at most one re-request (the call in flight) per kill
    check_side_effects(read_side_effects(calls), killed)
