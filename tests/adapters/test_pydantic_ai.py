"""agentrt.adapters.pydantic_ai: pydantic-ai's own documented agents, durable, exact after a SIGKILL anywhere.

- in this process: each corpus agent under ``Runtime`` gives what pydantic-ai gives without agentrt
  (output or error, and the same model and tool calls, each once);
- ``test_killed_at_every_call``: each agent run by ``agentrt run`` in a subprocess that SIGKILLs
  itself while call N is in flight, for every N, then ``agentrt resume`` (with ``--reply`` at the
  approval) in fresh processes until it ends: the same output, and the calls of the uninterrupted
  run with exactly the one in flight made again.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="agentrt[pydantic-ai] is not installed")

from agentrt import Runtime
from agentrt.exceptions import AdapterDiverged
from agentrt.stores.memory import MemoryStore
from tests.adapters import pai_corpus
from tests.adapters._calls import calls
from tests.cli.helpers import cli_env, command

REPO = Path(__file__).resolve().parents[2]
CASES = {case.name: case for case in pai_corpus.CASES}


def _plain(
    case: pai_corpus.Case, log: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], list[str]]:
    monkeypatch.setenv("AGENTRT_TEST_CALLS", str(log))
    try:
        return asyncio.run(pai_corpus.run_plain(case)), calls(log)
    finally:
        monkeypatch.delenv("AGENTRT_TEST_CALLS")


def _error(err: dict[str, Any]) -> str:
    return f"{err['type'].rsplit('.', 1)[-1]}: {err['message']}"


async def _durable(case: pai_corpus.Case) -> dict[str, Any]:
    durable_agent = getattr(pai_corpus, case.spec.rsplit(":", 1)[1])
    async with Runtime(store=MemoryStore()) as rt:
        run_id = await rt.start(durable_agent, case.input)
        while True:
            rec = await rt.settle(run_id)
            if rec.status == "waiting":
                await rt.reply(run_id, case.reply)
                continue
            if rec.status == "completed":
                return {"output": rec.output["output"]}
            return {"error": _error(rec.error)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_process_same_as_pydantic_ai(name, tmp_path, monkeypatch):
    case = CASES[name]
    expected, expected_calls = _plain(case, tmp_path / "plain.jsonl", monkeypatch)
    monkeypatch.setenv("AGENTRT_TEST_CALLS", str(tmp_path / "durable.jsonl"))
    got = asyncio.run(_durable(case))
    assert got == expected
    assert calls(tmp_path / "durable.jsonl") == expected_calls
    assert expected_calls, "the agent made no call at all"


def test_the_corpus_covers_what_the_issue_lists():
    """tools, structured output, deps, approvals, retries, usage limits, delegation: at least 10 agents."""
    assert len(CASES) >= 10
    assert CASES["approval"].reply is not None and CASES["limits"].usage_limits is not None


# --------------------------------------------------------------------------- SIGKILL at every call


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


kills = [0]  # SIGKILLed processes of the last _finish


def _finish(
    case: pai_corpus.Case,
    store: Path,
    run_id: str,
    first: subprocess.CompletedProcess[str],
    env: dict[str, str],
) -> dict[str, Any]:
    """Resume in fresh processes (replying at the approval) until the run ends; its output or error."""
    proc = first
    kills[0] = 0
    for _ in range(6):
        if proc.returncode == -9:
            kills[0] += 1
        out = json.loads(proc.stdout) if proc.returncode >= 0 and proc.stdout.strip() else {}
        status = out.get("status")
        if status == "completed":
            return {"output": out["output"]["output"]}
        if status == "failed":
            return {"error": _error(out["error"])}
        args = ["resume", run_id, "--store", str(store), "--json", "--log-format", "none"]
        if status == "waiting":
            args += ["--reply", json.dumps(case.reply)]
        proc = _cli(*args, env=env)
        assert proc.returncode in (0, 1, -9), proc.stderr
    raise AssertionError(f"run {run_id} did not end: {proc.stdout} {proc.stderr}")


def _run_killed(case: pai_corpus.Case, tmp: Path, kill_at: int | None) -> tuple[dict[str, Any], list[str]]:
    store, log = tmp / "store.db", tmp / "calls.jsonl"
    # every process may be the one to make call ``kill_at`` (after an approval, a later one makes it);
    # once it is logged, no later process dies
    env = cli_env(AGENTRT_TEST_CALLS=str(log))
    if kill_at is not None:
        env["AGENTRT_TEST_KILL_AT"] = str(kill_at)
    first = _cli(
        "run", case.spec, "--input", json.dumps(case.input), "--run-id", "r", "--store", str(store),
        "--json", "--log-format", "none", env=env,
    )  # fmt: skip
    output = _finish(case, store, "r", first, env)
    if kill_at is not None:
        assert kills[0] == 1, f"no process was killed at call {kill_at}"
    return output, calls(log)


def _expected_calls(case: pai_corpus.Case, reference: list[str], kill_at: int) -> list[str]:
    """The uninterrupted run's calls, the step in flight at call ``kill_at`` made again."""
    start = kill_at
    while start > 0 and reference[start].startswith(case.inner):
        start -= 1
    return reference[: kill_at + 1] + reference[start:]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_killed_at_every_call(name, tmp_path, monkeypatch):
    case = CASES[name]
    expected, reference = _plain(case, tmp_path / "plain.jsonl", monkeypatch)
    (tmp_path / "whole").mkdir()
    assert _run_killed(case, tmp_path / "whole", None) == (expected, reference)
    for kill_at in range(len(reference)):
        tmp = tmp_path / f"kill{kill_at}"
        tmp.mkdir()
        got, made = _run_killed(case, tmp, kill_at)
        assert got == expected, f"killed at call {kill_at} ({reference[kill_at]})"
        assert made == _expected_calls(case, reference, kill_at), f"killed at call {kill_at}"


# --------------------------------------------------------------------------- the adapter's edges


def test_importing_agentrt_imports_no_framework():
    code = (
        "import sys, agentrt, agentrt.adapters; agentrt.Runtime; agentrt.agent;"
        "print(sorted(m for m in ('pydantic_ai', 'agents') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_a_changed_agent_under_a_journaled_run_is_refused(monkeypatch):
    """Resumed from its journal, the framework must reach the journaled calls again; if it does not, the
    run fails with AdapterDiverged naming the call, instead of answering a call with another's result."""
    from agentrt.adapters._session import Outcome, Record, Seam, Sessions

    async def program(request: Any, session: Any) -> Any:
        return await session.seam("tool", "other_tool", None, None)

    async def scenario() -> None:
        sessions = Sessions(program)
        journal = [Record(Seam("tool", "journaled_tool"), Outcome(True, 1))]
        with pytest.raises(AdapterDiverged, match=r"seam 0 .* 'journaled_tool' .* 'other_tool'"):
            await sessions.answer("r", None, journal, None)

    asyncio.run(scenario())
