"""SIGKILL ``agentrt run`` / ``agentrt resume`` at random moments, then resume: right output, and no
tool call whose result was journaled before a kill ever runs again (at-least-once for the rest)."""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.cli import crash_agents as C
from tests.cli.helpers import cli_env, cli_json, popen, read_side_effects

RUNS = 4  # runs killed in parallel
KILLS_PER_RUN = 6  # => 24 kills in all
STEPS = 30


def _journaled_keys(store: Path) -> set[str]:
    conn = sqlite3.connect(store, timeout=10)
    try:
        return {f"{r}:{s}" for r, s in conn.execute("SELECT run_id, seq FROM results")}
    except sqlite3.OperationalError as exc:  # killed before the schema was created
        assert "no such table" in str(exc), exc
        return set()
    finally:
        conn.close()


def _wait_for_work(proc: Any, side_effects: Path, timeout: float = 20) -> None:
    """Until the process started a tool call (or exited)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if any(e["pid"] == proc.pid for e in read_side_effects(side_effects)):
            return
        time.sleep(0.01)


def kill_and_resume(
    tmp: Path, run_id: str, spec: str, input_json: str, kills: int, rng: random.Random
) -> tuple[dict[str, Any], list[dict[str, Any]], list[tuple[int, set[str]]]]:
    """Start a run, SIGKILL its process ``kills`` times at random moments (resuming in between), finish it."""
    store = tmp / "store.db"
    side_effects = tmp / "side_effects.jsonl"
    env = cli_env(AGENTRT_TEST_SIDE_EFFECTS=str(side_effects))
    killed: list[tuple[int, set[str]]] = []  # (pid, keys journaled when it died)
    for k in range(kills):
        args = ("run", spec, "--input", input_json, "--run-id", run_id) if k == 0 else ("resume", run_id)
        proc = popen(*args, "--store", str(store), "--log-format", "none", env=env)
        if rng.random() < 0.2:
            time.sleep(rng.uniform(0.2, 1.0))  # sometimes during start-up / restore
        else:
            _wait_for_work(proc, side_effects)
            time.sleep(rng.uniform(0.0, 0.25))
        proc.kill()
        proc.communicate()
        if proc.returncode == 0:  # finished before the kill landed
            break
        assert proc.returncode == -9, proc.returncode
        killed.append((proc.pid, _journaled_keys(store) if store.exists() else set()))
    code, final, err = cli_json("resume", run_id, "--store", str(store), "--log-format", "none", env=env)
    assert code == 0, err
    return final, read_side_effects(side_effects), killed


def check_side_effects(events: list[dict[str, Any]], killed: list[tuple[int, set[str]]]) -> None:
    starts = [e for e in events if e["event"] == "start"]
    # Processes ran one after another, so the log's order is their order.
    order = list(dict.fromkeys(e["pid"] for e in starts))
    for pid, journaled in killed:
        if pid not in order:
            continue
        later = set(order[order.index(pid) + 1 :])
        again = [e["key"] for e in starts if e["pid"] in later and e["key"] in journaled]
        assert not again, f"tool calls journaled before process {pid} died ran again: {again}"
    per_process = Counter((e["pid"], e["key"]) for e in starts)
    assert max(per_process.values()) == 1, "a process ran one call twice"
    runs = Counter(e["key"] for e in starts)
    repeats = sum(n - 1 for n in runs.values())
    assert repeats <= len(killed), f"{repeats} re-executions for {len(killed)} kills"


@pytest.mark.slow
def test_sigkill_run_and_resume_at_random_moments(tmp_path):
    results: dict[int, Any] = {}

    def trial(i: int) -> None:
        tmp = tmp_path / f"trial{i}"
        tmp.mkdir()
        try:
            results[i] = kill_and_resume(
                tmp,
                f"crash{i}",
                "tests.cli.crash_agents:counter",
                f'{{"steps": {STEPS}}}',
                KILLS_PER_RUN,
                random.Random(1000 + i),
            )
        except BaseException as exc:  # reported below
            results[i] = exc

    threads = [threading.Thread(target=trial, args=(i,)) for i in range(RUNS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total_kills = 0
    for i in range(RUNS):
        if isinstance(results[i], BaseException):
            raise results[i]
        final, events, killed = results[i]
        assert final["status"] == "completed" and final["output"] == C.expected(STEPS), final
        check_side_effects(events, killed)
        keys = {e["key"] for e in events if e["event"] == "end"}
        assert keys >= {f"crash{i}:{s}" for s in range(1, STEPS + 1)}
        total_kills += len(killed)
    assert total_kills >= 20, f"only {total_kills} kills landed"


def test_sub_agent_chain_survives_kills_of_the_parent_process(tmp_path):
    final, events, killed = kill_and_resume(
        tmp_path, "chain", "tests.cli.crash_agents:chain", '{"steps": 3}', 3, random.Random(7)
    )
    assert final["status"] == "completed" and final["output"] == C.chain_expected(3), final
    check_side_effects(events, killed)
    assert len(killed) >= 2
    keys = {e["key"] for e in events if e["event"] == "end"}
    assert {"chain:1", "chain:4", "chain.2:1", "chain.2.2:3", "chain.3.2:1"} <= keys
