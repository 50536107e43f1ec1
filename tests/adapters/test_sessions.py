"""The Agents SDK's sessions (conversation memory) under the adapter, SIGKILLed at every call.

``durable(agent, session=factory)``: two runs of one conversation (``session_id``), each reading the
history the other left in a ``SQLiteSession``.  Killed while each model or tool call of either run is
in flight and resumed in a fresh process: the same answers, and the session holds exactly the items
of the uninterrupted conversation (a journaled ``add_items`` is not made again, the history read
before the crash is the history read after it).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="agentrt[openai-agents] is not installed")

from agents import SQLiteSession

from agentrt import Runtime
from agentrt.stores.sqlite import SqliteStore
from tests.adapters import session_corpus
from tests.adapters._calls import calls
from tests.adapters._exact import kill_cases
from tests.cli.helpers import REPO, cli_env, command

SPEC = "tests.adapters.session_corpus:durable_assistant"
TURNS = ["What city is the Golden Gate Bridge in?", "What state is it in?"]
ANSWERS = ["It is in San Francisco.", "California"]
#: the calls of the uninterrupted conversation
CALLS = [
    "model:memory#0",
    'tool:city_of({"landmark": "Golden Gate Bridge"})',
    "model:memory#1",
    "model:memory#1",
]


def _items(path: Path) -> list[Any]:
    session = SQLiteSession("conv", str(path))
    try:
        return asyncio.run(session.get_items())
    finally:
        session.close()


def test_in_process_two_turns_share_the_session(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTRT_TEST_SESSIONS", str(tmp_path / "conversations.db"))
    store = SqliteStore(tmp_path / "s.db")

    async def go() -> list[Any]:
        async with Runtime(store) as rt:
            outs = []
            for turn in TURNS:
                run_id = await rt.start(
                    session_corpus.durable_assistant, {"input": turn, "session_id": "conv"}
                )
                outs.append((await rt.wait(run_id, timeout=30)).output)
            return outs

    try:
        assert asyncio.run(go()) == ANSWERS
    finally:
        store.close()
    items = _items(tmp_path / "conversations.db")
    assert [i.get("content") for i in items if i.get("role") == "user"] == TURNS
    # the user, the tool call and its output, the answer; the user, the answer
    assert len(items) == 6


def test_a_session_must_be_a_factory():
    memory = SQLiteSession("conv")
    try:
        with pytest.raises(TypeError, match="function of the session id"):
            session_corpus.durable(session_corpus.assistant, session=memory)  # type: ignore[arg-type]
    finally:
        memory.close()


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def _conversation(tmp: Path, kill_at: int | None) -> tuple[list[str], list[str], list[Any]]:
    store, log, memory = tmp / "s.db", tmp / "calls.jsonl", tmp / "conversations.db"
    env = cli_env(AGENTRT_TEST_CALLS=str(log), AGENTRT_TEST_SESSIONS=str(memory))
    if kill_at is not None:
        env["AGENTRT_TEST_KILL_AT"] = str(kill_at)
    base = ["--store", str(store), "--json", "--log-format", "none"]
    answers = []
    for n, turn in enumerate(TURNS):
        run = f"r{n}"
        given = json.dumps({"input": turn, "session_id": "conv"})
        proc = _cli("run", SPEC, "--input", given, "--run-id", run, *base, env=env)
        if proc.returncode == -9:
            proc = _cli("resume", run, *base, env=env)
        assert proc.returncode == 0, proc.stderr
        answers.append(json.loads(proc.stdout)["output"]["output"])
    return answers, calls(log), _items(memory)


@pytest.mark.system
@pytest.mark.parametrize("kill_at", kill_cases(range(len(CALLS)), {1}))
def test_killed_at_every_call_the_session_is_exact(kill_at, tmp_path):
    (tmp_path / "whole").mkdir()
    (tmp_path / "killed").mkdir()
    answers, made, items = _conversation(tmp_path / "whole", None)
    assert answers == ANSWERS and made == CALLS
    killed_answers, killed_made, killed_items = _conversation(tmp_path / "killed", kill_at)
    assert killed_answers == ANSWERS
    assert killed_made == CALLS[: kill_at + 1] + CALLS[kill_at:]
    assert killed_items == items
