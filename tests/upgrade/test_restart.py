"""``@agentrt.migrate(..., restart=True)``: a frame whose await was removed restarts at its last
completed step.  v1 looks something up with a tool, then asks a question; v2 drops the question
(and renames a local).  The run waits at the question under v1; ``agentrt upgrade`` restarts it
at the tool call's checkpoint, whose journaled result the new code receives, and ``agentrt
resume`` finishes it as a fresh process -- with the output v2 computes from that step, without
running the tool again.  Each step is the ``agentrt`` command as a fresh process runs it
(tests/cli/inprocess.py)."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path
from typing import Any

from tests.cli.helpers import cli, cli_env

HEADER = """
import json
import os

import attrs
import agentrt
from agentrt import Task, agent, tool, ui_tools


@attrs.frozen
class In:
    name: str


@attrs.frozen
class Out:
    text: str


@tool
def lookup(name: str, idempotency_key: str = "") -> str:
    with open(os.environ["SIDE_LOG"], "a") as f:
        f.write(json.dumps({"key": idempotency_key, "name": name}) + "\\n")
    return name[::-1]
"""
FOOTER = """

bot = agent(input=In, output=Out, tools=[lookup, *ui_tools], run=run, name="bot")
"""
V1 = """
async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    found = await task.tools.lookup(name=input.name)
    sure = await task.ui.ask({"q": "is " + found + " right?"})
    return Out(f"{greeting}: {found} ({sure})")
"""
V2 = """
async def run(input: In, task: Task) -> Out:
    salutation = "hello, " + input.name
    found = await task.tools.lookup(name=input.name)
    return Out(f"{salutation}: {found.upper()}")
"""
RESTART = """

@agentrt.migrate(run, from_digest={digest!r}, site=2, restart=True)
def drop_the_question(old_locals):
    return {{"salutation": old_locals["greeting"].replace("hello", "hello,")}}
"""


def _write(path: Path, body: str) -> None:
    path.write_text(textwrap.dedent(HEADER) + body + FOOTER)


def _json(*args: str, cwd: Path, env: dict[str, str]) -> tuple[int, dict[str, Any], str]:
    proc = cli(*args, "--json", cwd=cwd, env=env)
    return proc.returncode, (json.loads(proc.stdout) if proc.stdout.strip() else {}), proc.stderr


def _side(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _suspended(tmp_path: Path, name: str, v1: str = V1) -> tuple[Path, str, dict[str, str], Path]:
    module = tmp_path / f"{name}.py"
    _write(module, v1)
    side = tmp_path / "side.jsonl"
    env = cli_env(PYTHONDONTWRITEBYTECODE="1", SIDE_LOG=str(side))
    store = str(tmp_path / "s.db")
    code, obj, err = _json("run", f"{name}:bot", "--input", '{"name": "bob"}', "--store", store,
                           "--run-id", "r1", cwd=tmp_path, env=env)  # fmt: skip
    assert code == 0 and obj["status"] == "waiting" and obj["seq"] == 2, err
    return module, store, env, side


def _digest(tmp_path: Path, store: str, env: dict[str, str]) -> str:
    code, report, err = _json("upgrade", "--dry-run", "--store", store, cwd=tmp_path, env=env)
    frame = report["runs"][0]["frames"][0]
    assert code == 1 and frame["verdict"] == "blocked" and "no longer exists" in frame["reason"], (
        report,
        err,
    )
    return str(frame["digest"][:12])


def test_a_removed_await_restarts_at_the_last_completed_step(tmp_path):
    module, store, env, side = _suspended(tmp_path, "rst_agent")
    assert [e["key"] for e in _side(side)] == ["r1:1"]
    _write(module, V2)
    digest = _digest(tmp_path, store, env)
    _write(module, V2 + RESTART.format(digest=digest))

    code, report, err = _json("upgrade", "--dry-run", "--store", store, cwd=tmp_path, env=env)
    run = report["runs"][0]
    assert code == 0 and run["verdict"] == "migrates" and not run["applied"], (run, err)
    assert (
        "restarts at checkpoint 1" in run["reason"]
        and "withdraws what it asked since: seq 2 (ask)" in run["reason"]
    )
    assert _checkpoints(store) == [1, 2]  # a dry run writes nothing

    code, applied, err = _json("upgrade", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and applied["runs"][0]["applied"], err
    assert _checkpoints(store) == [1, 2, 3]  # a new checkpoint after every existing one
    code, shown, _ = _json("show", "r1", "--store", store, cwd=tmp_path, env=env)
    assert shown["status"] == "running" and shown["seq"] == 3 and shown["interrupted"], shown
    event = next(e for e in shown["events"] if e["kind"] == "upgrade")
    assert event["seq"] == 3 and event["data"]["how"] == "restarted"
    restart = event["data"]["restart"]
    assert (restart["from_seq"], restart["safe_point"]) == (2, 1) and restart["site"].startswith("await #1")
    assert [w["seq"] for w in restart["withdrawn"]] == [2]
    moves = {m["function"].rsplit(":", 1)[1]: m for m in event["data"]["moves"]}
    assert (
        moves["run"]["locals"]["supplied"] == ["salutation"]
        and "greeting" in moves["run"]["locals"]["dropped"]
    )

    dumped = cli("dump", "r1", "--store", store, cwd=tmp_path, env=env)
    assert dumped.returncode == 0, dumped.stderr
    assert "checkpoint 3: restarted rst_agent:run at checkpoint 1 (it waited at await #2" in dumped.stdout
    assert (
        "withdrawn: seq 2 (ask)" in dumped.stdout and "supplied by the migration salutation" in dumped.stdout
    )
    old_side = cli("diff", "r1", "2", "3", "--store", store, cwd=tmp_path, env=env)
    assert old_side.returncode == 3 and "`agentrt dump r1` shows how" in old_side.stderr, old_side.stderr

    # the withdrawn question takes no reply: the run is not waiting on it any more
    proc = cli("reply", "r1", '"yes"', "--store", store, cwd=tmp_path, env=env)
    assert proc.returncode != 0 and "not waiting for a reply" in proc.stderr, proc.stderr

    code, obj, err = _json("resume", "r1", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and obj["status"] == "completed", err
    assert obj["output"] == {"text": "hello, bob: BOB"}
    assert [e["key"] for e in _side(side)] == ["r1:1"]  # the step's recorded result, not a second call

    # what the new code computes from the start, given the same tool result
    code, fresh, err = _json("run", "rst_agent:bot", "--input", '{"name": "bob"}', "--store", store,
                             "--run-id", "fresh", cwd=tmp_path, env=env)  # fmt: skip
    assert code == 0 and fresh["output"] == obj["output"], err


def test_a_restart_is_refused_when_a_tool_ran_after_the_safe_point(tmp_path):
    v1 = V1.replace(
        '    sure = await task.ui.ask({"q": "is " + found + " right?"})',
        '    first = await task.ui.ask({"q": "first?"})\n'
        "    again = await task.tools.lookup(name=first)\n"
        '    sure = await task.ui.ask({"q": "is " + found + " right?"})',
    )
    module = tmp_path / "rst_tool.py"
    _write(module, v1)
    side = tmp_path / "side.jsonl"
    env = cli_env(PYTHONDONTWRITEBYTECODE="1", SIDE_LOG=str(side))
    store = str(tmp_path / "s.db")
    _json("run", "rst_tool:bot", "--input", '{"name": "bob"}', "--store", store, "--run-id", "r1",
          cwd=tmp_path, env=env)  # fmt: skip
    code, obj, err = _json("resume", "r1", "--reply", '"x"', "--store", store, cwd=tmp_path, env=env)
    assert obj["status"] == "waiting" and obj["seq"] == 4, err  # at the second question
    v2 = v1.replace("    again = await task.tools.lookup(name=first)\n", "").replace(
        '    sure = await task.ui.ask({"q": "is " + found + " right?"})\n', ""
    )
    _write(module, v2)
    digest = _digest(tmp_path, store, env)
    _write(module, v2 + RESTART.format(digest=digest).replace("site=2", "site=4"))
    code, report, err = _json("upgrade", "--store", store, cwd=tmp_path, env=env)
    run = report["runs"][0]
    assert code == 1 and run["verdict"] == "blocked" and not run["applied"], (run, err)
    assert "checkpoint 2 is the safe point" in run["reason"], run["reason"]
    assert "tool lookup was issued after it (seq 3, answered)" in run["reason"], run["reason"]
    assert _checkpoints(store) == [1, 2, 3, 4]


def test_a_restart_is_refused_when_retention_pruned_the_safe_point(tmp_path):
    module, store, env, _ = _suspended(tmp_path, "rst_pruned")
    with sqlite3.connect(store) as conn:  # what retention does to the oldest checkpoints
        conn.execute("DELETE FROM checkpoints WHERE seq <= 1")
        conn.execute("DELETE FROM results WHERE seq <= 1")
    conn.close()
    _write(module, V2)
    digest = _digest(tmp_path, store, env)
    _write(module, V2 + RESTART.format(digest=digest))
    code, report, err = _json("upgrade", "--store", store, cwd=tmp_path, env=env)
    run = report["runs"][0]
    assert code == 1 and run["verdict"] == "blocked", (run, err)
    assert "no earlier checkpoint of rst_pruned:run qualifies" in run["reason"]
    assert "checkpoint 1 is no longer kept" in run["reason"], run["reason"]


def _checkpoints(store: str) -> list[int]:
    with sqlite3.connect(store) as conn:
        seqs = [
            row[0] for row in conn.execute("SELECT seq FROM checkpoints WHERE run_id = 'r1' ORDER BY seq")
        ]
    conn.close()
    return seqs


NESTED_V1 = """
async def check(task, name):
    found = await task.tools.lookup(name=name)
    sure = await task.ui.ask({"q": "is " + found + " right?"})
    return found + "/" + sure


async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    result = await check(task, input.name)
    return Out(f"{greeting}: {result}")
"""
NESTED_V2 = NESTED_V1.replace(
    '    sure = await task.ui.ask({"q": "is " + found + " right?"})\n    return found + "/" + sure',
    "    return found.upper()",
)
NESTED_RESTART = """

@agentrt.migrate(check, from_digest={digest!r}, site=2, restart=True)
def restart_check(old_locals):
    return {{}}
"""


def test_a_helper_frame_restarts_inside_the_unchanged_agent_frame(tmp_path):
    module, store, env, side = _suspended(tmp_path, "rst_nested", NESTED_V1)
    _write(module, NESTED_V2)
    code, report, err = _json("upgrade", "--dry-run", "--store", store, cwd=tmp_path, env=env)
    frames = {f["function"].rsplit(":", 1)[1]: f for f in report["runs"][0]["frames"]}
    assert frames["run"]["verdict"] == "unchanged" and frames["check"]["verdict"] == "blocked", report
    _write(module, NESTED_V2 + NESTED_RESTART.format(digest=frames["check"]["digest"][:12]))
    code, applied, err = _json("upgrade", "--store", store, cwd=tmp_path, env=env)
    run = applied["runs"][0]
    assert code == 0 and run["applied"] and "rst_nested:check: restarts at checkpoint 1" in run["reason"], run
    code, obj, err = _json("resume", "r1", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and obj["output"] == {"text": "hello bob: BOB"}, err
    assert [e["key"] for e in _side(side)] == ["r1:1"]
    code, fresh, err = _json("run", "rst_nested:bot", "--input", '{"name": "bob"}', "--store", store,
                             "--run-id", "fresh", cwd=tmp_path, env=env)  # fmt: skip
    assert fresh["output"] == obj["output"], err
