"""Each framework's refund agent (tools, structured output, an approval) with its real OpenAI provider,
answered over HTTP by agentrt's OpenAI-compatible stand-in: the same output as the framework without
agentrt, and after a SIGKILL at every call (a tool call in flight: the process kills itself; a model
request in flight: the stand-in kills the process that sent it, before answering) no journaled call
is made again.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="agentrt[pydantic-ai] is not installed")
pytest.importorskip("agents", reason="agentrt[openai-agents] is not installed")

from agentrt.testing.openai_server import FakeOpenAIServer, Response
from tests.adapters._calls import calls
from tests.adapters._exact import durable, expected_calls, kill_cases
from tests.cli.helpers import cli_env, command

REPO = Path(__file__).resolve().parents[2]
REPLY = {"approvals": {"h2": True}}
#: the process to SIGKILL when the model request numbered ``kill_at`` arrives
TARGET: dict[str, Any] = {"kill_at": None, "pid": None}


@pytest.fixture(scope="session")
def corpus() -> Iterator[Any]:
    def responder(body: Any) -> Response:
        from tests.adapters import http_corpus

        n, answer = http_corpus.respond(body)
        if n == TARGET["kill_at"] and TARGET["pid"] is not None:
            os.kill(TARGET["pid"], signal.SIGKILL)  # the request is in flight; its answer reaches no one
        return answer

    with FakeOpenAIServer(responder) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTRT_TEST_OPENAI_URL", server.url)
        from tests.adapters import http_corpus

        if server.url != http_corpus.URL:  # imported for an earlier stand-in (its providers hold the URL)
            http_corpus = importlib.reload(http_corpus)
        assert server.url == http_corpus.URL
        yield http_corpus


class _Case:
    def __init__(self, name: str, spec: str, input: dict[str, Any]) -> None:
        self.name, self.spec, self.input, self.reply, self.inner = name, spec, input, REPLY, ()


CASES = {
    "pydantic_ai": _Case(
        "pydantic_ai", "tests.adapters.http_corpus:durable_pai_orders", {"prompt": "Refund order 7"}
    ),
    "openai_agents": _Case(
        "openai_agents", "tests.adapters.http_corpus:durable_oai_orders", {"input": "Refund order 7"}
    ),
}


async def _plain(name: str, corpus: Any) -> dict[str, Any]:
    """The framework's own run (no agentrt), the approval answered as the docs do."""
    import pydantic_core
    from pydantic_ai import DeferredToolRequests, DeferredToolResults

    if name == "pydantic_ai":
        result = await corpus.pai_orders.run("Refund order 7")
        while isinstance(result.output, DeferredToolRequests):
            approvals = {p.tool_call_id: REPLY["approvals"][p.tool_call_id] for p in result.output.approvals}
            result = await corpus.pai_orders.run(
                message_history=result.all_messages(),
                deferred_tool_results=DeferredToolResults(approvals=approvals),
            )
        return {"output": pydantic_core.to_jsonable_python(result.output)}
    from agents import Runner

    result = await Runner.run(corpus.oai_orders, "Refund order 7", run_config=corpus.RUN_CONFIG)
    while result.interruptions:
        state = result.to_state()
        for item in result.interruptions:
            state.approve(item)
        result = await Runner.run(corpus.oai_orders, state, run_config=corpus.RUN_CONFIG)
    return {"output": pydantic_core.to_jsonable_python(result.final_output)}


def _reference(name: str, corpus: Any, log: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    monkeypatch.setenv("AGENTRT_TEST_CALLS", str(log))
    try:
        return asyncio.run(_plain(name, corpus)), calls(log)
    finally:
        monkeypatch.delenv("AGENTRT_TEST_CALLS")


@pytest.mark.parametrize("name", sorted(CASES))
def test_over_http_same_as_the_framework(name, corpus, tmp_path, monkeypatch):
    expected, reference = _reference(name, corpus, tmp_path / "plain.jsonl", monkeypatch)
    assert reference[0].startswith("model:") and any(c.startswith("tool:refund") for c in reference)
    monkeypatch.setenv("AGENTRT_TEST_CALLS", str(tmp_path / "durable.jsonl"))
    assert asyncio.run(durable(CASES[name])) == expected
    assert calls(tmp_path / "durable.jsonl") == reference


def _drive(case: _Case, tmp: Path, env: dict[str, str]) -> dict[str, Any]:
    """``agentrt run``, then ``agentrt resume`` (with the reply when it waits) until it ends; each
    process is the stand-in's kill target while it runs."""
    store = tmp / "store.db"
    args = ["run", case.spec, "--input", json.dumps(case.input), "--run-id", "r"]
    for _ in range(8):
        proc = subprocess.Popen(
            command(*args, "--store", str(store), "--json", "--log-format", "none"),
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        TARGET["pid"] = proc.pid
        out_text, err = proc.communicate(timeout=120)
        TARGET["pid"] = None
        assert proc.returncode in (0, 1, -signal.SIGKILL), err
        out = json.loads(out_text) if proc.returncode >= 0 and out_text.strip() else {}
        if out.get("status") == "completed":
            return {"output": out["output"]["output"]}
        assert out.get("status") in (None, "waiting", "running"), out
        args = ["resume", "r"] + (
            ["--reply", json.dumps(case.reply)] if out.get("status") == "waiting" else []
        )
    raise AssertionError("the run did not end")


@pytest.mark.slow
@pytest.mark.system
@pytest.mark.parametrize("name", kill_cases(CASES, set()))
def test_over_http_killed_at_every_call(name, corpus, tmp_path, monkeypatch):
    case = CASES[name]
    expected, reference = _reference(name, corpus, tmp_path / "plain.jsonl", monkeypatch)
    for kill_at in range(len(reference)):
        tmp = tmp_path / f"kill{kill_at}"
        tmp.mkdir()
        log = tmp / "calls.jsonl"
        env = cli_env(
            AGENTRT_TEST_CALLS=str(log), AGENTRT_TEST_KILL_AT=str(kill_at), AGENTRT_LEASE_SECONDS="2"
        )
        monkeypatch.setenv("AGENTRT_TEST_CALLS", str(log))  # the stand-in logs the model requests here
        TARGET["kill_at"] = kill_at
        try:
            got = _drive(case, tmp, env)
        finally:
            TARGET["kill_at"] = None
        assert got == expected, f"killed at call {kill_at} ({reference[kill_at]})"
        assert calls(log) == expected_calls(case, reference, kill_at), f"killed at call {kill_at}"
