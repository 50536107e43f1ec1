"""The commands run in the test process (``tests/cli/inprocess.py``) answer as ``python -m agentrt``.

Most CLI tests run ``agentrt.cli.main`` in the test process because an interpreter per command
is most of their time.  These tests hold the two ways to the same answer -- exit status, stdout,
stderr -- so that the in-process runner cannot drift from what a user sees, and check that a call
looks like a new process to the agent's code and leaves the test process as it found it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import REPO, cli, cli_env
from tests.cli.inprocess import _is_own

SPEC = "tests.cli.crash_agents:counter"
RAISER = "tests.cli.crash_agents:raiser"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """A SQLite store with a completed run r1 (two checkpoints) and a failed run f1."""
    path = str(tmp_path_factory.mktemp("inprocess") / "s.db")
    env = cli_env(AGENTRT_TEST_WORK_SECONDS="0,0")
    done = cli("run", SPEC, "--input", '{"steps": 2}', "--store", path, "--run-id", "r1", env=env)
    assert done.returncode == 0, done.stderr
    raiser = ("run", RAISER, "--input", '{"kind": "typed"}', "--run-id", "f1")
    assert cli(*raiser, "--store", path, "--log-format", "none").returncode == 1
    return path


#: One command of each kind of answer: argparse's own, a listing, a failed run, a blob, a usage
#: error with its hint, store trouble, a run that completes and one that fails, the validator.
COMMANDS = [
    ("--version",),
    ("nosuch",),
    ("runs", "--store", "{store}", "--json"),
    ("show", "f1", "--store", "{store}"),
    ("dump", "r1", "--store", "{store}"),
    ("resume", "nope", "--store", "{store}"),
    ("runs", "--store", "{store}.missing"),
    ("run", SPEC, "--input", '{"steps": 2}', "--store", "memory", "--run-id", "m1", "--log-format", "none"),
    ("run", RAISER, "--input", '{"kind": "typed"}', "--run-id", "f", "--store=memory", "--log-format=none"),
    ("check", "tests/cli/crash_agents.py"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_in_process_and_subprocess_give_the_same_answer(store, args):
    args = tuple(word.replace("{store}", store) for word in args)
    env = cli_env(AGENTRT_TEST_WORK_SECONDS="0,0")
    here = cli(*args, env=env)
    there = cli(*args, env=env, subprocess=True)
    assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr)


NOISY = """\
import logging
import warnings

logging.getLogger("noisy").warning("logged at import")
warnings.warn("deprecated at import", DeprecationWarning)
warnings.warn("a user warning at import")
open(__file__)  # left open: a new interpreter says nothing about it

from tests.cli.crash_agents import counter
"""


def test_warnings_and_logs_of_the_agent_s_code_are_a_new_interpreter_s(tmp_path: Path):
    (tmp_path / "noisy.py").write_text(NOISY)
    args = ("run", "noisy:counter", "--input", '{"steps": 1}', "--store", "memory", "--run-id", "n")
    env = cli_env(AGENTRT_TEST_WORK_SECONDS="0,0", PYTHONPATH=f"{REPO}")
    here = cli(*args, env=env, cwd=tmp_path)
    there = cli(*args, env=env, cwd=tmp_path, subprocess=True)
    assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr)
    assert "logged at import" in here.stderr and "a user warning at import" in here.stderr
    assert "deprecated" not in here.stderr


AGENT = """\
import os

import attrs

from agentrt import Task, agent

VERSION = {version}
LOADED = []
LOADED.append(VERSION)


@attrs.frozen
class In:
    pass


@attrs.frozen
class Out:
    version: int
    loaded: list[int]
    cwd: str


async def run(input: In, task: Task) -> Out:
    return Out(VERSION, LOADED, os.getcwd())


which = agent(input=In, output=Out, run=run)
"""


def test_each_call_imports_the_agent_afresh_in_its_own_directory(tmp_path: Path):
    """An agent file edited between two calls is the new code, imported once, as in a new process."""
    project = tmp_path / "project"
    project.mkdir()
    outputs = []
    for version in (1, 2):
        (project / "versioned.py").write_text(AGENT.format(version=version))
        proc = cli("run", "versioned:which", "--input", "{}", "--store", "memory", "--json", cwd=project)
        assert proc.returncode == 0, proc.stderr
        outputs.append(json.loads(proc.stdout)["output"])
    assert outputs == [{"version": v, "loaded": [v], "cwd": str(project)} for v in (1, 2)]
    assert "versioned" not in sys.modules


def test_a_call_leaves_the_test_process_as_it_was(tmp_path: Path):
    before = (dict(os.environ), os.getcwd(), list(sys.path), set(sys.modules), sys.dont_write_bytecode)
    proc = cli(
        "run", SPEC, "--input", '{"steps": 1}', "--store", "memory", "--log-format", "none",
        env=cli_env(AGENTRT_TEST_WORK_SECONDS="0,0", PYTHONDONTWRITEBYTECODE="1"), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    after = (dict(os.environ), os.getcwd(), list(sys.path), set(sys.modules), sys.dont_write_bytecode)
    assert after[:3] == before[:3] and after[4] == before[4]
    # what stays imported is agentrt's, the standard library's and the installed packages', as after
    # any import; the modules of the test's files that the call imported are gone
    assert not [name for name in after[3] - before[3] if _is_own(sys.modules[name])]


def test_a_call_from_inside_an_event_loop_runs_in_a_thread_of_its_own():
    """``main`` runs an event loop of its own, which cannot start inside the test's."""

    async def from_a_coroutine():
        return cli("run", SPEC, "--input", '{"steps": 1}', "--store", "memory", "--log-format", "none")

    proc = asyncio.run(from_a_coroutine())
    assert proc.returncode == 0, proc.stderr
