"""The examples run as documented (in-process, memory store) and ``make demo``'s script works."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from agentrt import Runtime
from agentrt.stores import MemoryStore
from examples import approval_flow, executors, issue_summarizer, repo_fanout, triage
from tests.cli.helpers import REPO, cli_env


def _run(agent, input, reply=None, **kw):
    async def main():
        async with Runtime(MemoryStore(), **kw) as rt:
            run_id = await rt.start(agent, input)
            if reply is not None:
                rec = await rt.settle(run_id, timeout=10)
                assert rec.status == "waiting" and rec.waiting_on == "reply"
                await rt.reply(run_id, reply)
            return await rt.wait(run_id, timeout=10)

    return asyncio.run(main())


def test_issue_summarizer():
    out = _run(
        issue_summarizer.summarize_issue,
        {"repo": "octo/widgets", "issue_number": 42},
        executors=executors.offline,
    )
    assert out.labels == ["bug", "export", "regression"]
    assert out.summary.startswith("Crash when exporting a report with an empty date range.")
    schema = issue_summarizer.summarize_issue.input_json_schema()
    assert schema["properties"]["repo"]["description"] == "The GitHub repository in 'owner/name' format"


def test_approval_flow():
    out = _run(
        approval_flow.refund, {"order_id": "A-1001", "reason": "broken"}, {"approve": True, "note": "ok"}
    )
    assert out.refunded and out.decided_by == "person" and out.refund_id.startswith("R-")
    declined = _run(approval_flow.refund, {"order_id": "A-1001", "reason": "broken"}, {"approve": False})
    assert not declined.refunded and declined.refund_id is None
    small = _run(approval_flow.refund, {"order_id": "A-1002", "reason": "late"})
    assert small.refunded and small.decided_by == "policy"


def test_repo_fanout():
    out = _run(repo_fanout.repo_report, {"owner": "octo", "repos": ["widgets", "gadgets", "gizmos"]})
    assert out.total_open_issues == 2
    assert out.missing_issues == ["octo/gadgets#42", "octo/gizmos#42"]


def test_triage_with_sub_agents():
    out = _run(triage.triage, {"repo": "octo/widgets", "issue_numbers": [7, 42]}, executors=executors.offline)
    assert [(i.issue_number, i.priority) for i in out.items] == [(42, "high"), (7, "low")]


@pytest.mark.parametrize("executor", ["openai", "offline"])
def test_crash_demo(executor):
    proc = subprocess.run(
        [sys.executable, "examples/crash_demo.py", "--executor", executor],
        cwd=REPO,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ended with -9 (killed)" in proc.stdout
    assert "status    running (interrupted)" in proc.stdout
    assert "run demo completed" in proc.stdout
    assert "Finished before the kill and not run again: demo:1, demo:2, demo:3.0." in proc.stdout
    assert "dispatched again with the same idempotency key: demo:4." in proc.stdout
    assert "usage     1 model call(s)" in proc.stdout
    if executor == "openai":
        assert "the stand-in server answered 1 chat completion request(s)" in proc.stdout
