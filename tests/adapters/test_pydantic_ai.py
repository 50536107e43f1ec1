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
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="agentrt[pydantic-ai] is not installed")

from agentrt.exceptions import AdapterDiverged
from tests.adapters import pai_corpus
from tests.adapters._exact import check_in_process, check_killed_at_every_call, kill_cases
from tests.cli.helpers import cli_env

#: the cases meant to end in the framework's error (every other one must produce an output)
FAILING = {"limits"}
CASES = {case.name: case for case in pai_corpus.CASES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_process_same_as_pydantic_ai(name, tmp_path, monkeypatch):
    check_in_process(CASES[name], tmp_path, monkeypatch, fails=name in FAILING)


def test_the_corpus_covers_what_the_issue_lists():
    """tools, structured output, deps, approvals, retries, usage limits, delegation: at least 10 agents."""
    assert len(CASES) >= 10
    assert CASES["approval"].reply is not None and CASES["limits"].usage_limits is not None


@pytest.mark.slow
@pytest.mark.system
@pytest.mark.parametrize("name", kill_cases(CASES, {"orders", "user_retry"}))
def test_killed_at_every_call(name, tmp_path, monkeypatch):
    check_killed_at_every_call(CASES[name], tmp_path, monkeypatch)


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
    from agentrt.adapters._session import Journal, Outcome, Record, Seam, Sessions

    async def program(request: Any, session: Any) -> Any:
        return await session.seam("tool", "other_tool", None, None)

    async def scenario() -> None:
        sessions = Sessions(program)
        journal = Journal([Record(Seam("tool", "journaled_tool"), Outcome(True, 1))])
        with pytest.raises(AdapterDiverged, match=r"seam 0 .* 'journaled_tool' .* 'other_tool'"):
            await sessions.answer("r", None, journal, None)

    asyncio.run(scenario())
