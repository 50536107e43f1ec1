"""A newcomer's first hour (issue 12), through the command as typed (``tests/cli/inprocess.py``).

A run started in one directory is resumed and dumped from another with ``--agent FILE.py:ATTR``,
and the hint an error gives is a command that works as printed from anywhere; a non-terminal
run is quiet unless asked; a run with no checkpoint says why; the runs listing cuts its DETAIL
column after a whole word.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from agentrt._cli.inspect_cmds import clip
from tests.cli.helpers import cli
from tests.cli.test_commands import ASK_AGENT

EARLY_FAILURES = (
    ASK_AGENT
    + """

async def run_holds(input: In, task: Task) -> Out:
    f = open(__file__)
    reply = await task.ui.ask("go on?")
    return Out(bool(reply), f.read())

holds = agent(input=In, output=Out, tools=[*ui_tools], run=run_holds)

LONG = "Refund 249 EUR to mira for the espresso machine that arrived broken in its box?"

async def run_chatty(input: In, task: Task) -> Out:
    reply = await task.ui.ask(LONG)
    return Out(bool(reply), "")

chatty = agent(input=In, output=Out, tools=[*ui_tools], run=run_chatty)
"""
)


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Path]:
    """A project directory holding an agent file and its store, and another directory to work from."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "refunds.py").write_text(EARLY_FAILURES)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return {"root": root, "store": root / "agentrt.db", "elsewhere": elsewhere}


def start(
    project: dict[str, Path], attr: str, run_id: str, amount: int = 5
) -> subprocess.CompletedProcess[str]:
    """``agentrt run refunds.py:ATTR`` from the project directory, into the project's store."""
    return cli(
        "run",
        f"refunds.py:{attr}",
        "--input",
        json.dumps({"amount": amount}),
        "--run-id",
        run_id,
        "--store",
        str(project["store"]),
        cwd=project["root"],
    )


def typed_from_root(*words: str) -> subprocess.CompletedProcess[str]:
    """A printed ``agentrt ...`` command run exactly as given, from ``/``."""
    assert words[0] == "agentrt", words
    return cli(*words[1:], cwd=Path("/"))


def _hinted_command(stderr: str) -> list[str]:
    match = re.search(r"from any directory: (agentrt .*)\)$", stderr.strip())
    assert match, stderr
    return shlex.split(match.group(1))


def test_resume_from_another_directory_with_agent_file(project):
    store = str(project["store"])
    started = start(project, "approval", "a1")
    assert started.returncode == 0, started.stderr

    # from elsewhere the module `refunds` is not importable: the error gives the command that works
    lost = cli("resume", "a1", "--store", store, "--reply", '{"approve": true}', cwd=project["elsewhere"])
    assert lost.returncode == 2 and "no module named 'refunds'" in lost.stderr
    words = _hinted_command(lost.stderr)
    assert words[:3] == ["agentrt", "resume", "a1"]
    assert f"{project['root'] / 'refunds.py'}:approval" in words and '{"approve": true}' in words
    dumped = cli("dump", "a1", "--store", store, cwd=project["elsewhere"])
    # the header is shown, with why the frames cannot be and what to type; the status says it failed
    assert dumped.returncode == 3 and "frames cannot be shown" in dumped.stdout
    assert "frames cannot be decoded here" in dumped.stderr
    dump_words = _hinted_command(dumped.stdout.strip().splitlines()[-1])
    assert dump_words[:3] == ["agentrt", "dump", "a1"]

    # the hinted commands, exactly as printed, from a third directory
    shown = typed_from_root(*dump_words)
    assert shown.returncode == 0, shown.stderr
    assert "frames cannot be shown" not in shown.stdout and "Approve a refund of 5 EUR?" in shown.stdout
    done = typed_from_root(*words, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == {"approved": True, "note": ""}


def test_agent_option_must_name_the_runs_agent(project):
    store = str(project["store"])
    assert start(project, "approval", "a1").returncode == 0
    wrong = cli("resume", "a1", "--store", store, "--agent", f"{project['root'] / 'refunds.py'}:holds")
    assert wrong.returncode == 2 and "the run's agent is 'refunds:approval', not 'holds'" in wrong.stderr
    missing = cli("resume", "a1", "--store", store, "--agent", str(project["elsewhere"] / "refunds.py"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_a_non_terminal_run_is_quiet_unless_asked(project):
    store = str(project["store"])
    args = ("run", "refunds.py:approval", "--input", '{"amount": 5}', "--store", store)
    quiet = cli(*args, cwd=project["root"])
    assert quiet.returncode == 0 and quiet.stderr == ""
    verbose = cli(*args, "-v", cwd=project["root"])
    events = [json.loads(line)["event"] for line in verbose.stderr.splitlines()]
    assert {"started", "checkpoint", "waiting"} <= set(events)
    assert [
        json.loads(line)["event"]
        for line in cli(*args, "--log-format", "json", cwd=project["root"]).stderr.splitlines()
    ] == events

    args = ("run", "refunds.py:holds", "--input", '{"amount": 5}', "--store", store)
    blocked = cli(*args, cwd=project["root"])
    assert blocked.returncode == 1
    (line,) = blocked.stderr.splitlines()  # the one error, as JSON
    logged = json.loads(line)
    assert logged["event"] == "blocked" and logged["level"] == "error"
    assert logged["blocked"]["code"] == "AR112"


def test_dump_of_a_run_blocked_at_its_first_checkpoint_says_so(project):
    store = str(project["store"])
    blocked = start(project, "holds", "h1")
    assert blocked.returncode == 1
    dumped = cli("dump", "h1", "--store", store, cwd=project["root"])
    assert dumped.returncode == 2, dumped.stderr
    assert "it was blocked before its first checkpoint was stored" in dumped.stderr
    assert "AR112" in dumped.stderr and "first await" not in dumped.stderr


def test_runs_cuts_detail_after_a_whole_word(project):
    store = str(project["store"])
    long_prompt = start(project, "chatty", "c1", amount=1)
    assert long_prompt.returncode == 0, long_prompt.stderr
    full = (
        "waiting for a reply: Refund 249 EUR to mira for the espresso machine that arrived broken in its box?"
    )
    listing = cli("runs", "--store", store).stdout.splitlines()[1]
    detail = "waiting for" + listing.split("  waiting for", 1)[1]
    assert detail.endswith("…") and len(detail) <= 70
    kept = detail[:-1]
    assert full.startswith(kept) and full[len(kept)] == " "  # cut between two words


@pytest.mark.parametrize(
    ("text", "width", "clipped"),
    [
        ("short", 70, "short"),
        (
            "waiting for a reply: Refund 249 EUR to mira for the espresso machine",
            40,
            "waiting for a reply: Refund 249 EUR to…",
        ),
        ("a" * 50, 20, "a" * 19 + "…"),
        ("two\nlines  and   spaces", 70, "two lines and spaces"),
    ],
)
def test_clip(text, width, clipped):
    assert clip(text, width) == clipped
    assert len(clip(text, width)) <= width
