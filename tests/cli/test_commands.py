"""``agentrt run / resume / runs / show`` through the real command, and every bad input of the issue."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from agentrt.stores import SqliteStore
from tests.cli import crash_agents as C
from tests.cli.helpers import REPO, cli, cli_env, cli_json, popen

SPEC = "tests.cli.crash_agents:counter"


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr


def test_run_show_runs(tmp_path):
    store = str(tmp_path / "s.db")
    code, obj, err = cli_json(
        "run",
        SPEC,
        "--input",
        '{"steps": 3}',
        "--store",
        store,
        "--run-id",
        "r1",
        "-v",
        env=cli_env(AGENTRT_TEST_WORK_SECONDS="0,0"),
    )
    assert code == 0, err
    assert obj == {"run_id": "r1", "status": "completed", "agent": SPEC, "output": C.expected(3)}
    # not a terminal, -v: structured JSON logs of every event on stderr
    logs = [json.loads(line) for line in err.splitlines()]
    assert {"started", "checkpoint", "tool_started", "tool_finished", "notify", "completed"} <= {
        x["event"] for x in logs
    }
    assert all(x["run_id"] == "r1" and "timestamp" in x for x in logs)

    code, shown, _ = cli_json("show", "r1", "--store", store)
    assert code == 0 and shown["status"] == "completed" and shown["output"] == C.expected(3)
    assert [c["seq"] for c in shown["checkpoints"]] == [1, 2, 3]
    assert shown["checkpoints"][0]["request"] == {
        "kind": "tool",
        "name": "work",
        "kwargs": {"i": 0, "acc": 1},
    }
    assert shown["events"][0]["kind"] == "notify" and shown["events"][0]["data"]["message"] == "step 0 of 3"

    text = cli("show", "r1", "--store", store).stdout
    assert "status    completed" in text and "checkpoints (3 kept)" in text

    listing = cli("runs", "--store", store)
    assert listing.returncode == 0 and "r1" in listing.stdout and "completed" in listing.stdout
    assert "no runs with status waiting" in cli("runs", "--status", "waiting", "--store", store).stdout


ASK_AGENT = """
import attrs
from agentrt import Task, agent, ui_tools

@attrs.frozen
class In:
    amount: int

@attrs.frozen
class Out:
    approved: bool
    note: str

async def run(input: In, task: Task) -> Out:
    reply = await task.ui.ask(f"Approve a refund of {input.amount} EUR?")
    return Out(reply.get("approve", False), reply.get("note", ""))

approval = agent(input=In, output=Out, tools=[*ui_tools], run=run)
"""


def test_ask_waits_and_a_reply_from_another_process_finishes(tmp_path):
    agent_file = tmp_path / "approval_flow.py"
    agent_file.write_text(ASK_AGENT)
    store = str(tmp_path / "s.db")
    code, obj, err = cli_json(
        "run", f"{agent_file}:approval", "--input", '{"amount": 30}', "--store", store, "--run-id", "a1"
    )
    assert code == 0, err
    assert obj["status"] == "waiting" and obj["waiting_on"] == "reply"
    assert obj["prompt"] == "Approve a refund of 30 EUR?"
    assert "a1" in cli("runs", "--status", "waiting", "--store", store).stdout

    # a reply that is not JSON, then the real one
    bad = cli("resume", "a1", "--reply", "{yes", "--store", store)
    assert bad.returncode == 2 and "--reply" in bad.stderr and "not valid JSON" in bad.stderr
    code, obj, err = cli_json("resume", "a1", "--reply", '{"approve": true, "note": "ok"}', "--store", store)
    assert code == 0, err
    assert obj == {
        "run_id": "a1",
        "status": "completed",
        "agent": f"{agent_file}:approval",
        "output": {"approved": True, "note": "ok"},
    }
    # replying again: the run is not waiting any more
    again = cli("resume", "a1", "--reply", "true", "--store", store)
    assert again.returncode == 2 and "completed; there is nothing to reply to" in again.stderr
    _no_traceback(again.stderr)


def _seq(db, run_id: str) -> int:
    """The run's checkpoint sequence number, or -1 while the store or the run does not exist yet."""
    if not db.exists():
        return -1
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            row = conn.execute("SELECT seq FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return -1
    return row[0] if row else -1


def test_reply_to_a_run_that_is_not_waiting(tmp_path):
    store = str(tmp_path / "s.db")
    env = cli_env(AGENTRT_TEST_WORK_SECONDS="5,5")
    proc = popen("run", SPEC, "--input", '{"steps": 3}', "--store", store, "--run-id", "busy", env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _seq(tmp_path / "s.db", "busy") < 1:
            time.sleep(0.05)
        # a second process may not drive a leased run
        second = cli("resume", "busy", "--store", store)
        assert second.returncode == 3 and "being driven by another process" in second.stderr, second.stderr
        _no_traceback(second.stderr)
        # and a reply to a run waiting on a tool is refused
        reply = cli("resume", "busy", "--reply", '"hi"', "--store", store)
        assert reply.returncode == 2 and "not waiting for a reply" in reply.stderr, reply.stderr
        assert "pending tool work" in reply.stderr
    finally:
        proc.kill()
        proc.communicate()  # reaps it and closes its pipes


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("run", "tests.cli.nope:counter"), 2, "no module named 'tests.cli.nope'"),
        (
            ("run", "tests.cli.crash_agents:nope"),
            2,
            "has no attribute 'nope'; its agents are: chain, child, counter",
        ),
        (("run", "tests.cli.crash_agents:work"), 2, "is a Tool, not an agent(...) value"),
        (("run", "counter"), 2, "is not an agent spec: write MODULE:ATTR"),
        (("run", "missing/file.py:agent"), 2, "agent file 'missing/file.py' does not exist"),
        (
            ("run", SPEC, "--input", '{"steps": "many"}'),
            2,
            "input.steps of agent 'counter': expected integer, got string 'many'",
        ),
        (
            ("run", SPEC, "--input", '{"steps": 1, "colour": 2}'),
            2,
            "input.colour of agent 'counter': unknown field",
        ),
        (("run", SPEC, "--input", "{steps: 1}"), 2, "--input: is not valid JSON"),
        (("resume", "no-such-run"), 2, "no run 'no-such-run'"),
        (("show", "no-such-run"), 2, "no run 'no-such-run'"),
        (("resume", "no-such-run", "--reply", "1"), 2, "no run 'no-such-run'"),
    ],
)
def test_bad_input(tmp_path, args, code, words):
    SqliteStore(tmp_path / "s.db").close()  # an empty store: `resume` and `show` never create one
    proc = cli(*args, "--store", str(tmp_path / "s.db"))
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert words in proc.stderr
    assert proc.stderr.startswith("agentrt: error: ")
    _no_traceback(proc.stderr)


@pytest.mark.parametrize(
    ("kind", "type_name", "message"),
    [
        ("typed", "tests.cli.crash_agents.Boom", "the reactor is on fire"),
        ("untyped", "tests.cli.crash_agents.explode.<locals>.Local", "nobody can import me"),
    ],
)
def test_a_tool_that_raises_fails_the_run_with_its_type_and_message(tmp_path, kind, type_name, message):
    store = str(tmp_path / "s.db")
    code, obj, err = cli_json(
        "run",
        "tests.cli.crash_agents:raiser",
        "--input",
        json.dumps({"kind": kind}),
        "--store",
        store,
        "--run-id",
        "x",
        "--log-format",
        "none",
    )
    assert code == 1
    assert obj["status"] == "failed"
    assert obj["error"]["type"] == type_name and obj["error"]["message"] == message
    assert "explode" in obj["error"]["traceback"]
    _no_traceback(err)
    text = cli(
        "run",
        "tests.cli.crash_agents:raiser",
        "--input",
        json.dumps({"kind": kind}),
        "--store",
        store,
        "--log-format",
        "none",
    )
    assert text.returncode == 1 and f"failed: {type_name}: {message}" in text.stdout
    shown = cli("show", "x", "--store", store).stdout
    assert f"error     {type_name}: {message}" in shown and "traceback" in shown


def test_locked_store(tmp_path):
    path = tmp_path / "s.db"
    SqliteStore(path).close()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        proc = cli(
            "run",
            SPEC,
            "--input",
            '{"steps": 1}',
            "--store",
            str(path),
            env=cli_env(AGENTRT_STORE_TIMEOUT="0.2"),
        )
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert proc.returncode == 3 and "is locked by another process" in proc.stderr
    _no_traceback(proc.stderr)


def test_corrupt_store(tmp_path):
    path = tmp_path / "s.db"
    path.write_bytes(b"\x00garbage" * 512)
    for args in (("runs",), ("run", SPEC, "--input", '{"steps": 1}'), ("show", "x")):
        proc = cli(*args, "--store", str(path))
        assert proc.returncode == 3 and "is not a valid agentrt store" in proc.stderr, proc.stderr
        _no_traceback(proc.stderr)
    assert path.read_bytes() == b"\x00garbage" * 512  # left as it was


def test_store_from_a_newer_agentrt(tmp_path):
    path = tmp_path / "s.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version=99")
    conn.commit()
    conn.close()
    proc = cli("runs", env=cli_env(AGENTRT_STORE=str(path)))
    assert proc.returncode == 3 and "schema version 99" in proc.stderr and "Upgrade agentrt" in proc.stderr
    _no_traceback(proc.stderr)


def test_default_store_location(tmp_path):
    proc = cli(
        "run",
        f"{REPO}/tests/cli/crash_agents.py:counter",
        "--input",
        '{"steps": 1}',
        "--json",
        "--log-format",
        "none",
        cwd=tmp_path,
        env=cli_env(AGENTRT_TEST_WORK_SECONDS="0,0"),
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / ".agentrt" / "agentrt.db").exists()
    assert json.loads(proc.stdout)["output"] == C.expected(1)


def test_an_agent_module_that_does_not_import(tmp_path):
    broken = tmp_path / "broken_agent.py"
    broken.write_text("import attrs\nvalue = 1 +\n")
    missing = tmp_path / "needs_a_package.py"
    missing.write_text("import attrs\nimport not_installed_anywhere_xyz\n")
    proc = cli("run", f"{broken}:a", "--store", "memory")
    assert (
        proc.returncode == 2
        and "failed: SyntaxError: invalid syntax (broken_agent.py, line 2)" in proc.stderr
    )
    _no_traceback(proc.stderr)
    proc = cli("run", f"{missing}:a", "--store", "memory")
    assert proc.returncode == 2
    assert (
        "No module named 'not_installed_anywhere_xyz' (" in proc.stderr
        and "needs_a_package.py:2)" in proc.stderr
    )
    _no_traceback(proc.stderr)
