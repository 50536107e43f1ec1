"""SIGKILL between turns of an LLM agent and of a self-managed state agent, resumed with
``agentrt resume`` as a new process runs it (tests/cli/inprocess.py): no finished model call or
tool call is repeated, and the output is the one an uninterrupted run gives."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

from tests.cli.helpers import cli_env, cli_json, popen, read_side_effects


def _kill_when(proc: Any, ready: Any) -> None:
    deadline = time.monotonic() + 60
    while not ready():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def _locals(store: Path, run_id: str) -> dict[str, str]:
    """``agentrt dump RUN --json``: the reprs of the live locals of the run's outermost frame."""
    code, dump, err = cli_json("dump", run_id, "--store", str(store), env=cli_env())
    assert code == 0, err
    return {v["name"]: v["value"]["repr"] for v in dump["frames"][0]["locals"]}


def _uninterrupted(tmp_path: Path, spec: str, input: str, executors: str | None) -> Any:
    extra = ("--executors", executors) if executors else ()
    code, out, err = cli_json(
        "run", spec, "--input", input, "--store", str(tmp_path / "clean.db"), *extra, "--run-id", "C",
        env=cli_env(),
    )  # fmt: skip
    assert code == 0, err
    return out["output"]


def test_llm_agent_killed_between_turns_resumes_without_repeating(tmp_path: Path) -> None:
    store, model_log, tool_log = tmp_path / "s.db", tmp_path / "model.jsonl", tmp_path / "tools.jsonl"
    args = ("--store", str(store), "--executors", "tests.llm.counting:planner", "--log-format", "none")
    slow = cli_env(
        AGENTRT_TEST_MODEL_CALLS=str(model_log),
        AGENTRT_TEST_TOOL_CALLS=str(tool_log),
        AGENTRT_TEST_MODEL_DELAY="2",
    )
    proc = popen(
        "run", "tests.llm.kinds_agents:planner", "--input", '{"text": "x"}', "--run-id", "P", *args, env=slow
    )
    # turns 1 and 2 (and their tool batches) are journaled; turn 3's model call is in flight
    _kill_when(proc, lambda: len(read_side_effects(model_log)) >= 3)
    # the checkpoint is the loop's frame: the conversation so far is its ``messages`` local
    shown = _locals(store, "P")
    assert shown["turn"] == "3"
    assert "'content': 'CRASH'" in shown["messages"] and "'t2-add'" in shown["messages"]
    fast = cli_env(AGENTRT_TEST_MODEL_CALLS=str(model_log), AGENTRT_TEST_TOOL_CALLS=str(tool_log))
    code, out, err = cli_json("resume", "P", *args, env=fast)
    assert code == 0, err
    assert out["output"] == {"word": "CRASH", "total": 15}
    assert out["output"] == _uninterrupted(
        tmp_path, "tests.llm.kinds_agents:planner", '{"text": "x"}', "tests.llm.counting:planner"
    )
    calls = read_side_effects(model_log)
    keys = [c["key"] for c in calls]
    # turn 1 (seq 1) and turn 2 (seq 3) once each; turn 3 (seq 5) was in flight: asked again
    assert keys == ["P:1.0", "P:3.0", "P:5.0", "P:5.0"], keys
    assert len({c["pid"] for c in calls}) == 2
    # the two add calls ran once each (turn 1's together with lookup, turn 2's alone)
    assert [t["value"] for t in read_side_effects(tool_log) if t["tool"] == "add"] == [5, 15]


def test_self_managed_agent_killed_between_batches_resumes_without_repeating(tmp_path: Path) -> None:
    store, tool_log = tmp_path / "s.db", tmp_path / "tools.jsonl"
    args = ("--store", str(store), "--log-format", "none")
    slow = cli_env(AGENTRT_TEST_TOOL_CALLS=str(tool_log), AGENTRT_TEST_TOOL_DELAY="2")
    spec = "tests.llm.kinds_agents:slow_counter"
    proc = popen("run", spec, "--input", '{"text": "k"}', "--run-id", "S", *args, env=slow)
    # batch 1 is journaled; batch 2's slow_add has started
    _kill_when(proc, lambda: sum(e["event"] == "start" for e in read_side_effects(tool_log)) >= 2)
    # the state between batches is the frame's ``saved`` local: its JSON, checked when it was saved
    assert _locals(store, "S")["saved"] == "{'round': 2, 'total': 1, 'words': ['K']}"
    code, out, err = cli_json("resume", "S", *args, env=cli_env(AGENTRT_TEST_TOOL_CALLS=str(tool_log)))
    assert code == 0, err
    assert out["output"] == {"text": "total 6", "notes": ["K", "R2", "R3"]}
    assert out["output"] == _uninterrupted(tmp_path, spec, '{"text": "k"}', None)
    log = read_side_effects(tool_log)
    starts = [e["key"] for e in log if e["event"] == "start"]
    ends = [e["key"] for e in log if e["event"] == "end"]
    assert len(ends) == len(set(ends)) == 3  # every batch's tool finished exactly once
    assert starts[0] == ends[0] and starts.count(starts[0]) == 1  # batch 1 was not run again
    assert starts[1] == starts[2]  # batch 2, in flight at the kill, ran again under the same key
    assert len({e["pid"] for e in log}) == 2
