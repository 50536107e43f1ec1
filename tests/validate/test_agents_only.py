"""``agentrt check --agents-only``: in a host project, only the code passed to ``agent(...)`` is agent code.

A web handler that keeps an asyncio task across an ``await`` is fine for a host and a hazard for
an agent: without the option both are reported, with it only the agent's own functions and the
module-level helpers they call.
"""

from __future__ import annotations

from pathlib import Path

from agentrt.validate import check_path, check_source
from tests.validate.test_cli import check

HOST = """
import asyncio
import re

import attrs
from agentrt import Task, ui_tools
from agentrt import agent as make_agent


@attrs.frozen
class In:
    text: str


@attrs.frozen
class Out:
    word: str


async def first_word(text: str, task: Task) -> str:
    m = re.match(r"\\w+", text)
    await task.ui.notify("matching")
    return m.group(0)


async def run(input: In, task: Task) -> Out:
    async def inner():
        f = open("x")
        await task.ui.notify("inner")
        return f

    await inner()
    return Out(await first_word(input.text, task))


summarize = make_agent(input=In, output=Out, tools=[*ui_tools], run=run)


async def handler(request):
    job = asyncio.create_task(asyncio.sleep(1))
    await request.body()
    return job
"""


def _where(findings) -> set[tuple[str, str]]:
    return {(f.function, f.code) for f in findings}


def test_every_async_def_by_default_only_agent_code_with_agents_only() -> None:
    everything = _where(check_source(HOST, "app.py"))
    assert ("handler", "AR101") in everything and ("first_word", "AR103") in everything
    agents = _where(check_source(HOST, "app.py", agents_only=True))
    assert agents == {("first_word", "AR103"), ("run.<locals>.inner", "AR112")}


def test_a_module_without_agents_has_nothing_to_check(tmp_path: Path) -> None:
    (tmp_path / "web.py").write_text(
        "import asyncio\n\nasync def h(x):\n    t = asyncio.ensure_future(x)\n    await x\n    return t\n"
    )
    assert check_path(tmp_path) != []
    assert check_path(tmp_path, agents_only=True) == []


def test_the_command_line_option(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(HOST)
    everything = check(str(tmp_path))
    assert everything.returncode == 1 and "in handler()" in everything.stdout
    agents = check(str(tmp_path), "--agents-only")
    assert agents.returncode == 1, agents.stderr
    assert "in handler()" not in agents.stdout and "in first_word()" in agents.stdout
    assert (
        agents.stdout.strip().splitlines()[-1]
        == "agentrt check: 2 findings in 1 file: 2 errors (profile default)"
    )
