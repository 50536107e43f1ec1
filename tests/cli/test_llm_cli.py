"""``--executors``, ``--max-model-calls``, ``--trace`` and model usage in ``show``."""

from __future__ import annotations

import json

from tests.cli.helpers import cli, cli_json

SPEC = "tests.llm.agents:chain"
EXECUTORS = "tests.llm.counting:executors"


def test_an_agent_that_needs_a_missing_executor_is_refused_before_the_run_starts(tmp_path):
    store = tmp_path / "s.db"
    proc = cli("run", SPEC, "--input", "{}", "--store", str(store), "--log-format", "none")
    assert proc.returncode == 2
    assert "MissingExecutor" in proc.stderr and "'chain'" in proc.stderr
    assert "generate_text" in proc.stderr and "agents.py:" in proc.stderr and "--executors" in proc.stderr
    assert json.loads(cli("runs", "--store", str(store), "--json").stdout) == {"runs": []}


def test_run_with_executors_trace_and_show_usage(tmp_path):
    store, trace = tmp_path / "s.db", tmp_path / "trace.jsonl"
    code, out, err = cli_json(
        "run", SPEC, "--input", '{"text": "abc", "n": 2}', "--run-id", "t1", "--store", str(store),
        "--executors", EXECUTORS, "--trace", str(trace), "--log-format", "none",
    )  # fmt: skip
    assert code == 0, err
    assert out["status"] == "completed" and out["output"]["notes"] == ["<1:11>", "<2:14>"]
    assert out["usage"] == {"model_calls": 2, "input_tokens": 25, "output_tokens": 12, "total_tokens": 37}
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [e["type"] for e in events if e["type"] in ("request", "result")] == ["request", "result"] * 2
    assert events[0]["type"] == "run" and events[-1]["type"] == "end"
    shown = cli("show", "t1", "--store", str(store))
    assert "usage     2 model call(s), 37 tokens (25 in, 12 out)" in shown.stdout
    assert "llm generate_text step" in shown.stdout


def test_max_model_calls_on_the_command_line(tmp_path):
    code, out, _err = cli_json(
        "run", SPEC, "--input", '{"n": 5}', "--store", str(tmp_path / "s.db"),
        "--executors", EXECUTORS, "--max-model-calls", "3", "--log-format", "none",
    )  # fmt: skip
    assert code == 1
    assert out["status"] == "failed" and out["error"]["cause"] == "max-model-calls"
    assert out["usage"]["model_calls"] == 3


def test_executors_that_are_not_executors(tmp_path):
    proc = cli(
        "run", SPEC, "--input", "{}", "--store", str(tmp_path / "s.db"),
        "--executors", "tests.llm.agents:Prompt", "--log-format", "none",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "--executors tests.llm.agents:Prompt" in proc.stderr


def test_streamed_text_shows_live_in_pretty_progress(tmp_path):
    proc = cli(
        "run", "tests.llm.agents:everything", "--input", "{}", "--run-id", "s1",
        "--store", str(tmp_path / "s.db"), "--executors", "tests.llm.counting:scripted_everything",
        "--log-format", "pretty",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    streamed = [line for line in lines if "~ s1: stream: " in line]
    assert len(streamed) == 1 and streamed[0].endswith("one two three")
    assert any("→ s1: llm.decide choose" in line for line in lines)
    assert any("✓ s1: llm.stream_text stream" in line and "4 tokens" in line for line in lines)
