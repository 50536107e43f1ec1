"""Streaming through the adapters: a streamed pydantic-ai run's events on agentrt's durable event stream.

- the events pydantic-ai gives an ``event_stream_handler`` (less the text deltas) are the run's
  ``emit`` events, ``pydantic_ai.<event_kind>``, read back with ``Runtime.events``, in order, with
  the answer whole in its ``part_end``; the agent's own handler gets every event live, deltas too;
- SIGKILLed while each call is in flight and resumed in fresh processes: the durable stream has
  every event exactly once (the events of journaled calls are not produced again), and the handler
  saw the events of the calls before the crash once.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="agentrt[pydantic-ai] is not installed")

from agentrt import Runtime
from agentrt.stores.sqlite import SqliteStore
from tests.adapters import stream_corpus
from tests.adapters._calls import calls
from tests.adapters._exact import kill_cases
from tests.cli.helpers import REPO, cli_env, command

#: what pydantic-ai hands an event_stream_handler for this agent, deltas left out
KINDS = [
    "part_start",  # the tool call
    "part_end",
    "function_tool_call",
    "function_tool_result",
    "part_start",  # the answer
    "final_result",
    "part_end",
]


def _plain_kinds() -> list[str]:
    seen: list[str] = []

    async def collect(ctx: Any, events: Any) -> None:
        async for event in events:
            seen.append(event.event_kind)

    asyncio.run(stream_corpus.weather_agent.run("weather in Paris?", event_stream_handler=collect))
    return seen


def _stream(store_path: Path, run_id: str) -> list[dict[str, Any]]:
    """The run's pydantic-ai events, read back through the runtime's event API."""

    store = SqliteStore(store_path)

    async def read() -> list[dict[str, Any]]:
        async with Runtime(store, worker=False) as rt:
            return [
                e.data["data"]
                for e in rt.events(run_id)
                if e.kind == "emit" and e.data["type"].startswith("pydantic_ai.")
            ]

    try:
        return asyncio.run(read())
    finally:
        store.close()


def test_pydantic_ai_events_as_in_plain_pydantic_ai():
    assert [k for k in _plain_kinds() if k != "part_delta"] == KINDS


@pytest.mark.parametrize("spec", ["durable_weather", "durable_weather_quiet"])
def test_streamed_events_on_the_durable_stream(spec, tmp_path, monkeypatch):
    handled = tmp_path / "handled.txt"
    monkeypatch.setenv("AGENTRT_TEST_HANDLED", str(handled))
    agent = getattr(stream_corpus, spec)

    store = SqliteStore(tmp_path / "s.db")

    async def go() -> Any:
        async with Runtime(store) as rt:
            run_id = await rt.start(agent, {"prompt": "weather in Paris?"})
            return run_id, await rt.wait(run_id, timeout=30)

    run_id, out = asyncio.run(go())
    store.close()
    assert out.output == "".join(stream_corpus.ANSWER)
    events = _stream(tmp_path / "s.db", run_id)
    assert [e["event"]["event_kind"] for e in events] == KINDS
    assert all(e["type"] == "pydantic_ai." + e["event"]["event_kind"] for e in events)
    assert events[-1]["event"]["part"]["content"] == "".join(stream_corpus.ANSWER)
    assert events[2]["event"]["part"]["args"] == {"city": "Paris"} or json.loads(
        events[2]["event"]["part"]["args"]
    ) == {"city": "Paris"}
    live = handled.read_text().split() if handled.exists() else []
    if spec == "durable_weather":  # the agent's own handler: every event, deltas included, live
        kinds = live[1::2]
        assert kinds.count("part_delta") == 3 and [k for k in kinds if k != "part_delta"] == KINDS
    else:
        assert live == []


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.system
@pytest.mark.parametrize("kill_at", kill_cases([0, 1, 2], {1}))
def test_killed_at_every_call_each_event_once(kill_at, tmp_path):
    store, log, handled = tmp_path / "s.db", tmp_path / "calls.jsonl", tmp_path / "handled.txt"
    env = cli_env(
        AGENTRT_TEST_CALLS=str(log), AGENTRT_TEST_KILL_AT=str(kill_at), AGENTRT_TEST_HANDLED=str(handled)
    )
    spec = "tests.adapters.stream_corpus:durable_weather"
    base = ["--store", str(store), "--json", "--log-format", "none"]
    proc = _cli(
        "run", spec, "--input", json.dumps({"prompt": "weather in Paris?"}), "--run-id", "r", *base, env=env
    )
    assert proc.returncode == -9, proc.stderr
    proc = _cli("resume", "r", *base, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["output"]["output"] == "".join(stream_corpus.ANSWER)
    made = calls(log)
    assert (
        made
        == ["model:weather#0", 'tool:lookup({"city": "Paris"})', "model:weather#1"][: kill_at + 1]
        + [
            "model:weather#0",
            'tool:lookup({"city": "Paris"})',
            "model:weather#1",
        ][kill_at:]
    )
    assert [e["event"]["event_kind"] for e in _stream(store, "r")] == KINDS
    # the handler: the events of the calls journaled before the crash once (the one in flight may have
    # streamed some before it died, and streams again)
    lines = [line.split() for line in handled.read_text().splitlines()]
    pids = list(dict.fromkeys(pid for pid, _ in lines))
    resumed = [kind for pid, kind in lines if pid == pids[-1]]
    assert "part_start" in resumed
    if kill_at == 2:  # the tool call and its result were journaled: not handled again
        assert "function_tool_call" not in resumed and "function_tool_result" not in resumed


# --------------------------------------------------------------------------- the OpenAI Agents SDK

#: what Runner.run_streamed gives for the SDK's weather agent, raw model events left out
OAI_KINDS = ["agent_updated", "tool_called", "tool_output", "message_output_created"]


def _oai_stream(store_path: Path, run_id: str) -> list[dict[str, Any]]:
    store = SqliteStore(store_path)

    async def read() -> list[dict[str, Any]]:
        async with Runtime(store, worker=False) as rt:
            return [
                e.data["data"]
                for e in rt.events(run_id)
                if e.kind == "emit" and e.data["type"].startswith("openai_agents.")
            ]

    try:
        return asyncio.run(read())
    finally:
        store.close()


def test_agents_sdk_events_as_in_plain_run_streamed():
    from agents import Runner

    async def plain() -> list[str]:
        result = Runner.run_streamed(
            stream_corpus.oai_weather_agent, "weather?", run_config=stream_corpus.oai_run_config
        )
        kinds = []
        async for event in result.stream_events():
            if event.type == "agent_updated_stream_event":
                kinds.append("agent_updated")
            elif event.type == "run_item_stream_event":
                kinds.append(event.name)
        return kinds

    assert asyncio.run(plain()) == OAI_KINDS


def test_agents_sdk_streamed_events_on_the_durable_stream(tmp_path):
    store = SqliteStore(tmp_path / "s.db")

    async def go() -> Any:
        async with Runtime(store) as rt:
            run_id = await rt.start(stream_corpus.durable_oai_weather, {"input": "weather?"})
            return run_id, await rt.wait(run_id, timeout=30)

    run_id, out = asyncio.run(go())
    store.close()
    assert out.output == "Tokyo: The weather in Tokyo is sunny"
    events = _oai_stream(tmp_path / "s.db", run_id)
    assert [e["type"].split(".", 1)[1] for e in events] == OAI_KINDS
    assert events[2]["item"]["output"] == "The weather in Tokyo is sunny"


@pytest.mark.system
@pytest.mark.parametrize("kill_at", kill_cases([0, 1, 2], {1}))
def test_agents_sdk_killed_at_every_call_each_event_once(kill_at, tmp_path):
    store, log = tmp_path / "s.db", tmp_path / "calls.jsonl"
    env = cli_env(AGENTRT_TEST_CALLS=str(log), AGENTRT_TEST_KILL_AT=str(kill_at))
    spec = "tests.adapters.stream_corpus:durable_oai_weather"
    base = ["--store", str(store), "--json", "--log-format", "none"]
    proc = _cli("run", spec, "--input", json.dumps({"input": "weather?"}), "--run-id", "r", *base, env=env)
    assert proc.returncode == -9, proc.stderr
    proc = _cli("resume", "r", *base, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["output"]["output"] == "Tokyo: The weather in Tokyo is sunny"
    reference = ["model:weather#0", 'tool:get_weather({"city": "Tokyo"})', "model:weather#1"]
    assert calls(log) == reference[: kill_at + 1] + reference[kill_at:]
    assert [e["type"].split(".", 1)[1] for e in _oai_stream(store, "r")] == OAI_KINDS
