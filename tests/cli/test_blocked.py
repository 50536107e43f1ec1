"""Issue 24: a ``with`` over a ``@contextlib.contextmanager`` across an await blocks the run (it used
to fail it for good); the code is fixed -- a second version of the module -- and ``agentrt resume``
finishes the run in a fresh process, with the tool call journaled before the block not made again.
Then ``agentrt retry`` of a failed run, from its newest checkpoint and ``--from SEQ``.  Every step
is a real ``agentrt`` subprocess, as a user (or a deploy) runs them."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from tests.cli.helpers import cli, cli_env

HEADER = """
import contextlib
import threading

import attrs

import agentrt
from agentrt import Task, agent, tool


@attrs.frozen
class In:
    n: int


@attrs.frozen
class Out:
    total: int


@tool
def bump(x: int, idempotency_key: str = "") -> int:
    \"\"\"Add one (and write down the call).\"\"\"
    with open("calls.txt", "a") as f:
        f.write(f"bump {x} {idempotency_key}\\n")
    return x + 1


@tool
def flaky(x: int, idempotency_key: str = "") -> int:
    \"\"\"Times ten, unless down.txt exists.\"\"\"
    with open("calls.txt", "a") as f:
        f.write(f"flaky {x} {idempotency_key}\\n")
    import os
    if os.path.exists("down.txt"):
        raise RuntimeError("flaky is down")
    return x * 10


@contextlib.contextmanager
def locked_section():
    lock = threading.Lock()
    with lock:
        yield


@agentrt.serializable
@attrs.define
class Section:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None
"""
V1_HELPER = "\nheld = locked_section\n"
V2_HELPER = "\nheld = Section  # the fix, in a helper: run's own code does not change\n"
RUN_V1 = """

async def run(input: In, task: Task) -> Out:
    a = await task.tools.bump(x=input.n)
    with held():
        b = await task.tools.bump(x=a)
    return Out(total=b)
"""
RUN_V2 = """

async def run(input: In, task: Task) -> Out:
    a = await task.tools.bump(x=input.n)
    with held():
        pass  # the fix, in the agent: nothing held across the await
    b = await task.tools.bump(x=a)
    return Out(total=b)
"""
FOOTER = """

async def run_flaky(input: In, task: Task) -> Out:
    a = await task.tools.bump(x=input.n)
    c = await task.tools.flaky(x=a)
    return Out(total=a + c)


bot = agent(input=In, output=Out, tools=[bump], run=run)
flaky_bot = agent(input=In, output=Out, tools=[bump, flaky], run=run_flaky)
"""


def _write(path: Path, helper: str, run: str) -> None:
    path.write_text(textwrap.dedent(HEADER) + helper + run + FOOTER)


def _json(*args: str, cwd: Path, env: dict[str, str]) -> tuple[int, dict[str, Any], str]:
    proc = cli(*args, "--json", cwd=cwd, env=env)
    return proc.returncode, (json.loads(proc.stdout) if proc.stdout.strip() else {}), proc.stderr


def _calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


def _blocked(tmp_path: Path, name: str) -> tuple[Path, str, dict[str, str]]:
    module = tmp_path / f"{name}.py"
    _write(module, V1_HELPER, RUN_V1)
    env = cli_env(PYTHONDONTWRITEBYTECODE="1")
    store = str(tmp_path / "s.db")
    code, obj, err = _json(
        "run", f"{name}:bot", "--input", '{"n": 1}', "--store", store, "--run-id", "s2", cwd=tmp_path, env=env
    )
    assert code == 1 and obj["status"] == "blocked", (code, obj, err)
    finding = obj["blocked"]
    assert set(finding) == {"code", "message", "function", "lineno", "variable"}
    # the refused value is the lock held by the context manager's generator, suspended at its yield
    assert finding["code"] in ("AR106", "AR112") and finding["function"] == "locked_section"
    text = module.read_text().splitlines()
    assert finding["lineno"] == text.index("        yield") + 1
    assert finding["variable"], finding
    assert obj["seq"] == 1 and obj["pending"]["name"] == "bump"
    assert _calls(tmp_path) == ["bump 1 s2:1"]
    return module, store, env


def test_blocked_not_failed_and_resume_finishes_it_after_the_fix(tmp_path):
    module, store, env = _blocked(tmp_path, "cm_helper")
    listing = cli("runs", "--store", store, cwd=tmp_path, env=env)
    assert "blocked" in listing.stdout and "blocked at seq 1: AR1" in listing.stdout, listing.stdout
    code, runs, _ = _json("runs", "--status", "blocked", "--store", store, cwd=tmp_path, env=env)
    assert [r["run_id"] for r in runs["runs"]] == ["s2"]
    assert runs["runs"][0]["blocked"]["function"] == "locked_section"
    shown = cli("show", "s2", "--store", store, cwd=tmp_path, env=env)
    assert "status    blocked" in shown.stdout and "fix the code, then: agentrt resume s2" in shown.stdout

    # the same code: resume blocks it again (nothing is lost, no tool call is repeated)
    code, obj, err = _json("resume", "s2", "--store", store, cwd=tmp_path, env=env)
    assert code == 1 and obj["status"] == "blocked", err
    assert _calls(tmp_path) == ["bump 1 s2:1"]

    _write(module, V2_HELPER, RUN_V1)  # the fix
    code, obj, err = _json("resume", "s2", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and obj["status"] == "completed" and obj["output"] == {"total": 3}, err
    assert _calls(tmp_path) == ["bump 1 s2:1", "bump 2 s2:2"]  # bump at checkpoint 1 ran once


def test_a_fix_in_the_agent_goes_through_upgrade_then_resume(tmp_path):
    module, store, env = _blocked(tmp_path, "cm_agent")
    _write(module, V1_HELPER, RUN_V2)  # the fix changes run itself: its checkpoint 1 needs moving

    code, obj, err = _json("resume", "s2", "--store", store, cwd=tmp_path, env=env)
    assert code == 3 and "changed since the checkpoint" in err and "it is blocked" in err, (code, err)
    code, shown, _ = _json("show", "s2", "--store", store, cwd=tmp_path, env=env)
    assert shown["status"] == "blocked" and "agentrt upgrade" in shown["blocked"]["message"]
    assert shown["blocked"]["function"].endswith(":run")

    code, report, err = _json("upgrade", "--store", store, cwd=tmp_path, env=env)
    (run,) = report["runs"]
    assert code == 0 and run["verdict"] == "migrates" and run["applied"] and run["unblocked"], (report, err)
    code, shown, _ = _json("show", "s2", "--store", store, cwd=tmp_path, env=env)
    assert shown["status"] == "running" and "blocked" not in shown
    assert [e["kind"] for e in shown["events"]][-2:] == ["upgrade", "unblocked"]

    code, obj, err = _json("resume", "s2", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and obj["output"] == {"total": 3}, err
    assert _calls(tmp_path) == ["bump 1 s2:1", "bump 2 s2:2"]


def _failed(tmp_path: Path) -> tuple[str, dict[str, str]]:
    _write(tmp_path / "flaky_mod.py", V2_HELPER, RUN_V1)
    (tmp_path / "down.txt").write_text("")
    env = cli_env(PYTHONDONTWRITEBYTECODE="1")
    store = str(tmp_path / "s.db")
    code, obj, err = _json(
        "run", "flaky_mod:flaky_bot", "--input", '{"n": 1}', "--store", store, "--run-id", "f1",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert code == 1 and obj["status"] == "failed" and obj["error"]["message"] == "flaky is down", err
    assert _calls(tmp_path) == ["bump 1 f1:1", "flaky 2 f1:2"]
    return store, env


def test_retry_a_failed_run_from_its_newest_checkpoint(tmp_path):
    store, env = _failed(tmp_path)
    (tmp_path / "down.txt").unlink()  # the cause is fixed
    code, obj, err = _json("retry", "f1", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and obj["status"] == "completed" and obj["output"] == {"total": 22}, err
    # bump (journaled at checkpoint 1) is not made again; the failed flaky call is, at checkpoint 3
    assert _calls(tmp_path) == ["bump 1 f1:1", "flaky 2 f1:2", "flaky 2 f1:3"]
    code, shown, _ = _json("show", "f1", "--store", store, cwd=tmp_path, env=env)
    (retry,) = [e for e in shown["events"] if e["kind"] == "retry"]
    assert retry["data"]["from_seq"] == 2 and retry["data"]["seq"] == 3


def test_retry_from_a_given_checkpoint_and_its_errors(tmp_path):
    store, env = _failed(tmp_path)
    proc = cli("retry", "f1", "--from", "9", "--store", store, cwd=tmp_path, env=env)
    assert proc.returncode == 2
    assert "no checkpoint 9 (it keeps checkpoints 1..2); pick one of those with --from" in proc.stderr

    (tmp_path / "down.txt").unlink()
    code, obj, err = _json("retry", "f1", "--from", "1", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and obj["output"] == {"total": 22}, err
    assert _calls(tmp_path) == ["bump 1 f1:1", "flaky 2 f1:2", "flaky 2 f1:4"]  # checkpoint 1 again as 3

    proc = cli("retry", "f1", "--store", store, cwd=tmp_path, env=env)
    assert proc.returncode == 2
    assert "run 'f1' is completed; only a failed or blocked run can be retried" in proc.stderr
    assert "agentrt fork" in proc.stderr
    proc = cli("retry", "nope", "--store", store, cwd=tmp_path, env=env)
    assert proc.returncode == 2 and "no run 'nope'" in proc.stderr
