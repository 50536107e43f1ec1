"""The issue's Done-when: an unmodified pydantic-ai agent and an unmodified OpenAI Agents SDK agent (tools,
structured output, a human approval) run under ``agentrt serve``, are SIGKILLed mid-loop, and finish in
another worker with no call made twice except the one in flight.

Per adapter and per kill point N (the two calls around the approval; every call of the uninterrupted
run with ``make test-adapters``): ``agentrt serve`` starts the run over HTTP and SIGKILLs itself while
call N is in flight; an ``agentrt worker`` (another process, on the same SQLite store) takes the run
over when the dead server's lease expires; the approval is answered with ``agentrt reply`` (or over
HTTP when the server is still alive); the run completes with the output the framework gives without
agentrt.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="agentrt[pydantic-ai] is not installed")
pytest.importorskip("agents", reason="agentrt[openai-agents] is not installed")
httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn", reason="agentrt[serve] is not installed")

from tests.adapters import oai_corpus, pai_corpus  # noqa: E402
from tests.adapters._calls import calls  # noqa: E402
from tests.adapters._exact import ALL_KILLS, expected_calls, plain  # noqa: E402
from tests.cli.helpers import cli_env, command  # noqa: E402
from tests.serve.conftest import free_port  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CASES = {
    "pydantic_ai": next(c for c in pai_corpus.CASES if c.name == "orders"),
    "openai_agents": next(c for c in oai_corpus.CASES if c.name == "orders"),
}


def _env(log: Path, kill_at: int | None) -> dict[str, str]:
    env = cli_env(AGENTRT_TEST_CALLS=str(log), AGENTRT_LEASE_SECONDS="2")
    if kill_at is not None:
        env["AGENTRT_TEST_KILL_AT"] = str(kill_at)
    return env


def _show(store: Path, env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        command("show", "r", "--store", str(store), "--json"),
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else {}


def _until(what: str, check: Any, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _serve_then_worker(case: Any, tmp: Path, kill_at: int | None) -> tuple[dict[str, Any], list[str]]:
    store, log = tmp / "store.db", tmp / "calls.jsonl"
    env = _env(log, kill_at)
    module = case.spec.split(":", 1)[0]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> subprocess.Popen[bytes]:
        err = open(tmp / f"{args[0]}{len(procs)}.log", "wb")  # noqa: SIM115 - the process owns it
        proc = subprocess.Popen(
            command(*args, "--store", str(store), "--import", module),
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip
        err.close()
        procs.append(proc)
        return proc

    try:
        live = start("serve", "--port", str(port))

        def up() -> bool:
            try:
                return httpx.get(url + "/runs", timeout=1).status_code == 200
            except httpx.TransportError:
                assert live.poll() is None, "the server died at start-up"
                return False

        _until("the server", up)
        answer = httpx.post(
            url + "/runs", json={"agent": case.spec, "input": case.input, "run_id": "r"}, timeout=30
        )
        assert answer.status_code == 201, answer.text
        replied = False
        while True:
            if live.poll() is not None:  # SIGKILLed while call N was in flight: another worker takes over
                assert live.returncode == -signal.SIGKILL, f"{live.args} exited with {live.returncode}"
                live = start("worker")
            rec = _show(store, env)
            status = rec.get("status")
            if status == "completed":
                return {"output": rec["output"]["output"]}, calls(log)
            assert status not in ("failed", "blocked", "cancelled"), rec
            if status == "waiting" and not replied:
                subprocess.run(
                    command("reply", "r", json.dumps(case.reply), "--store", str(store)),
                    cwd=REPO, env=env, check=True, capture_output=True,
                )  # fmt: skip
                replied = True
            time.sleep(0.2)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@pytest.mark.slow
@pytest.mark.system
@pytest.mark.parametrize("adapter", sorted(CASES))
def test_killed_under_serve_finished_by_another_worker(adapter, tmp_path, monkeypatch):
    case = CASES[adapter]
    expected, reference = plain(case, tmp_path / "plain.jsonl", monkeypatch)
    refund = next(i for i, c in enumerate(reference) if c.startswith("tool:refund"))
    # by default the two calls around the approval: the model call that asks for the refund (the
    # run then waits in the worker that took over) and the approved refund itself
    kill_points = range(len(reference)) if ALL_KILLS else (refund - 1, refund)
    for kill_at in kill_points:
        tmp = tmp_path / f"kill{kill_at}"
        tmp.mkdir()
        got, made = _serve_then_worker(case, tmp, kill_at)
        assert got == expected, f"killed at call {kill_at} ({reference[kill_at]})"
        assert made == expected_calls(case, reference, kill_at), f"killed at call {kill_at}: {made}"
