"""The two new agent kinds' examples, run as documented: on the offline executors, and through
``OpenAICompatExecutors`` over HTTP against the stand-in server (in process and from the CLI)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentrt import MemoryStore, Runtime
from agentrt.llm.openai_compat import OpenAICompatExecutors
from agentrt.testing.openai_server import FakeOpenAIServer, reply
from examples import executors, issue_researcher, issue_sweeper
from tests.cli.helpers import cli_env, cli_json

ISSUE_42 = {"repo": "octo/widgets", "issue_number": 42}
REPORT_42 = issue_researcher.Report(
    issue_number=42,
    summary=(
        "Crash when exporting a report with an empty date range. "
        "Exporting a report crashes the app when the date range is empty."
    ),
    workaround="set any one-day range before exporting.",
    comment_count=3,
)


def researcher_model(body: Any) -> Any:
    """The stand-in server's model for the researcher: the offline policy, over the wire."""
    calls = executors.research_turn(body["messages"])
    return reply(
        tool_calls=[{"id": f"w{n}", "name": name, "arguments": args} for n, (name, args) in enumerate(calls)]
    )


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer(researcher_model) as s:
        yield s


def run(agent: Any, input: Any, execs: Any, reply_value: Any = None) -> Any:
    async def main() -> Any:
        made = execs() if callable(execs) and not hasattr(execs, "generate_text") else execs
        async with Runtime(MemoryStore(), executors=made) as rt:
            run_id = await rt.start(agent, input)
            if reply_value is not None:
                rec = await rt.settle(run_id, timeout=30)
                assert rec.status == "waiting" and rec.waiting_on == "reply", rec
                await rt.reply(run_id, reply_value)
            out = await rt.wait(run_id, timeout=30)
        if isinstance(made, OpenAICompatExecutors):
            await made.aclose()
        return out

    return asyncio.run(main())


def http(server: FakeOpenAIServer) -> Any:
    """A factory: the executors are made (and closed) inside the run's event loop."""
    return lambda: OpenAICompatExecutors(server.url, default_model="stand-in")


def test_researcher_offline() -> None:
    assert run(issue_researcher.issue_researcher, ISSUE_42, executors.offline) == REPORT_42


def test_researcher_over_http(server: FakeOpenAIServer) -> None:
    assert run(issue_researcher.issue_researcher, ISSUE_42, http(server)) == REPORT_42
    first, second = (r.body for r in server.requests)
    assert first["tool_choice"] == "required"
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert set(tools) == {"github_issues_get", "github_issues_list_comments", "submit"}
    assert tools["submit"]["parameters"]["title"] == "Report"
    assert "call the `submit` tool" in first["messages"][0]["content"]
    # turn 1 asked for two tools at once; both results went back in turn 2, after the call
    assistant, *results = second["messages"][2:]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == [
        "github_issues_get",
        "github_issues_list_comments",
    ]
    assert [r["tool_call_id"] for r in results] == ["w0", "w1"]
    assert json.loads(results[0]["content"])["number"] == 42


def test_researcher_from_the_cli_over_http(server: FakeOpenAIServer, tmp_path: Any) -> None:
    code, out, err = cli_json(
        "run", "examples/issue_researcher.py:issue_researcher", "--input", json.dumps(ISSUE_42),
        "--executors", "examples/executors.py:openai", "--store", str(tmp_path / "s.db"),
        env=cli_env(AGENTRT_EXAMPLE_OPENAI_URL=server.url),
    )  # fmt: skip
    assert code == 0, err
    assert out["output"]["workaround"] == REPORT_42.workaround and out["output"]["comment_count"] == 3
    assert len(server.requests) == 2


@pytest.mark.parametrize("approve", [True, False])
def test_sweeper_offline(approve: bool) -> None:
    out = run(
        issue_sweeper.issue_sweeper,
        {"repo": "octo/widgets", "issue_numbers": [42, 7]},
        executors.offline,
        {"approve": approve},
    )
    assert out == issue_sweeper.Sweep([42], [REPORT_42], [42] if approve else [])


def test_sweeper_over_http(server: FakeOpenAIServer) -> None:
    """The self-managed agent's sub-agent (the LLM agent) asks the model over HTTP."""
    out = run(
        issue_sweeper.issue_sweeper,
        {"repo": "octo/widgets", "issue_numbers": [7, 42]},
        http(server),
        {"approve": True},
    )
    assert out == issue_sweeper.Sweep([42], [REPORT_42], [42])
    assert len(server.requests) == 2


def test_sweeper_from_the_cli_offline(tmp_path: Any) -> None:
    store = str(tmp_path / "s.db")
    args = ("--executors", "examples/executors.py:offline", "--store", store)
    code, out, err = cli_json(
        "run", "examples/issue_sweeper.py:issue_sweeper", "--input",
        '{"repo": "octo/widgets", "issue_numbers": [42, 7]}', "--run-id", "SW", *args,
    )  # fmt: skip
    assert code == 0, err
    assert out["status"] == "waiting", out
    code, out, err = cli_json("resume", "SW", "--reply", '{"approve": true}', *args)
    assert code == 0, err
    assert out["output"]["commented"] == [42], out
