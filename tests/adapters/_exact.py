"""What the adapters' exactness tests share: a corpus case run plainly, under Runtime, and killed.

A case (``pai_corpus.Case``, ``oai_corpus.Case``) has ``name``, ``spec`` (``MODULE:ATTR`` of its
durable agent), ``input``, ``reply`` (to its approval) and ``inner``; its corpus module has
``run_plain(case)``: the framework run without agentrt, ``{"output": ...}`` or ``{"error": ...}``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentrt import Runtime
from agentrt.stores.memory import MemoryStore
from tests.adapters._calls import calls
from tests.cli.helpers import cli_env, command

REPO = Path(__file__).resolve().parents[2]

#: ``AGENTRT_ADAPTER_KILLS=all`` (``make test-adapters``) kills every corpus agent at every call.  The
#: default suite (and CI, which must stay under 15 minutes) kills the agents that between them cover
#: each feature once -- tools, retries, approvals, structured output, handoffs, guardrails -- plus
#: the serve-and-worker trial of each adapter at the two calls around its approval; the
#: uninterrupted comparison runs for every agent.
ALL_KILLS = os.environ.get("AGENTRT_ADAPTER_KILLS") == "all"


def kill_cases(names: Any, representative: set[str]) -> list[Any]:
    """``names`` as pytest params, each one not in ``representative`` skipped unless ``ALL_KILLS``."""
    unknown = representative - set(names)
    assert not unknown, f"representative kill cases not in the corpus: {sorted(unknown)}"
    skip = pytest.mark.skip(reason="killed at every call with make test-adapters (AGENTRT_ADAPTER_KILLS=all)")
    kept = set(names) if ALL_KILLS else representative
    return [pytest.param(name, marks=() if name in kept else skip) for name in sorted(names)]


def plain(case: Any, log: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], list[str]]:
    monkeypatch.setenv("AGENTRT_TEST_CALLS", str(log))
    try:
        result = asyncio.run(_module(case).run_plain(case))
        made = calls(log)
        for call in getattr(case, "plain_only", ()):
            if call in made:  # a call racing another (see the case): made or not, as it goes
                made.remove(call)
        return result, made
    finally:
        monkeypatch.delenv("AGENTRT_TEST_CALLS")


def _error(err: dict[str, Any]) -> str:
    return f"{err['type'].rsplit('.', 1)[-1]}: {err['message']}"


async def durable(case: Any) -> dict[str, Any]:
    durable_agent = getattr(_module(case), case.spec.rsplit(":", 1)[1])
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


def _module(case: Any) -> Any:
    return importlib.import_module(case.spec.split(":", 1)[0])


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


kills = [0]  # SIGKILLed processes of the last _finish


def _finish(
    case: Any,
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


def run_killed(case: Any, tmp: Path, kill_at: int | None) -> tuple[dict[str, Any], list[str]]:
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


def expected_calls(case: Any, reference: list[str], kill_at: int) -> list[str]:
    """The uninterrupted run's calls, the step in flight at call ``kill_at`` made again.

    A step is one call, or a tool call with the calls its sub-agent made inside it (``case.inner``):
    killed at one of those, the tool's whole step is made again, from the tool's own logged call
    (if it logs one) on."""
    start = kill_at
    if case.inner and reference[kill_at].startswith(case.inner):
        while start > 0 and reference[start - 1].startswith(case.inner):
            start -= 1
        if start > 0 and reference[start - 1].startswith("tool:"):
            start -= 1
    return reference[: kill_at + 1] + reference[start:]


def check_in_process(case: Any, tmp: Path, monkeypatch: pytest.MonkeyPatch, fails: bool) -> None:
    """Under Runtime (memory store, this process): the framework's own output or error, the same calls.

    ``fails``: whether the case is meant to end in an error (a usage limit, a tripwire), so that a
    corpus agent broken by a typo cannot pass by failing the same way twice."""
    expected, expected_calls = plain(case, tmp / "plain.jsonl", monkeypatch)
    assert ("error" in expected) == fails, expected
    monkeypatch.setenv("AGENTRT_TEST_CALLS", str(tmp / "durable.jsonl"))
    got = asyncio.run(durable(case))
    assert got == expected, (got, expected)
    made = calls(tmp / "durable.jsonl")
    assert made == expected_calls, (made, expected_calls)
    assert expected_calls, "the agent made no call at all"


def check_killed_at_every_call(case: Any, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``agentrt run`` SIGKILLed while call N is in flight, for every N, then resumed in fresh processes."""
    expected, reference = plain(case, tmp / "plain.jsonl", monkeypatch)
    (tmp / "whole").mkdir()
    assert run_killed(case, tmp / "whole", None) == (expected, reference)
    for kill_at in range(len(reference)):
        where = tmp / f"kill{kill_at}"
        where.mkdir()
        got, made = run_killed(case, where, kill_at)
        assert got == expected, f"killed at call {kill_at} ({reference[kill_at]})"
        assert made == expected_calls(case, reference, kill_at), f"killed at call {kill_at}"
