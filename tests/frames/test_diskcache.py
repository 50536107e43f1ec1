"""The on-disk cache of analyses and resume code: used across processes, never trusted blindly.

Each scenario runs in fresh interpreters (the cache is for cold processes), on an agent module
written to a temporary directory, so its ``__pycache__/agentrt`` starts empty.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli.helpers import REPO, cli

AGENT = """\
from agentrt.lowlevel import suspend


async def helper(x):
    return await suspend(("helper", x))


async def agent(n):
    total = 0
    for i in range(n):
        total += await helper(i)
    if total < 0:
        raise ValueError("never")
    return total
"""

# Checkpoint at the second suspension (in one process), restore and finish it in another.
MAKE_BLOB = """
import sys
from agentrt.lowlevel import Machine
import cached_agent
m = Machine(cached_agent.agent, 3)
m.step(); m.step(10)
sys.stdout.buffer.write(m.get())
"""

RESTORE = """
import sys
from agentrt._frames import _liveness, _resume
if "--no-synthesis" in sys.argv:
    def refuse(*args, **kwargs):
        raise AssertionError("recomputed although the cache has it")
    _liveness._analyze = refuse
    _resume._synthesize = refuse
from agentrt.lowlevel import Done, Machine
import cached_agent
m = Machine.set(open(sys.argv[1], "rb").read())
assert m.pending == ("helper", 1), m.pending
assert m.step(20) == ("helper", 2)
out = m.step(30)
assert out == Done(60), out
print("ok")
"""


def _python(tmp: Path, script: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "AGENTRT_CODE_CACHE"}
    environ.update(PYTHONPATH=f"{tmp}{os.pathsep}{REPO}", **env)
    return subprocess.run(
        [sys.executable, "-c", script, *args], cwd=tmp, env=environ, capture_output=True, timeout=60
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "cached_agent.py").write_text(AGENT)
    made = _python(tmp_path, MAKE_BLOB, AGENTRT_CODE_CACHE="0")  # the cache starts empty
    assert made.returncode == 0, made.stderr.decode()
    (tmp_path / "blob").write_bytes(made.stdout)
    return tmp_path


def _entries(project: Path) -> list[Path]:
    directory = project / "__pycache__" / "agentrt"
    return sorted(directory.iterdir()) if directory.exists() else []


def _restore(project: Path, *args: str, **env: str) -> None:
    done = _python(project, RESTORE, str(project / "blob"), *args, **env)
    assert done.returncode == 0 and done.stdout.strip() == b"ok", done.stderr.decode()


def test_a_second_process_restores_from_the_cache_without_recomputing(project):
    _restore(project)
    names = [p.name for p in _entries(project)]
    assert any(".agent.resume." in n for n in names) and any(".agent.sites." in n for n in names)
    assert any(".helper.resume." in n for n in names)
    _restore(project, "--no-synthesis")


def test_corrupt_entries_are_recomputed_and_rewritten(project):
    _restore(project)
    for entry in _entries(project):
        entry.write_bytes(b"\x00garbage" if "resume" in entry.name else entry.read_bytes()[:5])
    _restore(project)  # recomputes: a broken entry is a miss, never an error
    _restore(project, "--no-synthesis")  # ... and wrote good entries again


def test_an_edited_function_never_meets_its_old_entry(project):
    _restore(project)
    before = {p.name for p in _entries(project)}
    source = (project / "cached_agent.py").read_text()
    # a blank line inside the function: same bytecode, other line numbers (tracebacks must follow)
    (project / "cached_agent.py").write_text(source.replace("    total = 0\n", "    total = 0\n\n"))
    with pytest.raises(AssertionError, match="recomputed although the cache has it"):
        _restore(project, "--no-synthesis")
    _restore(project)
    assert {p.name for p in _entries(project)} - before  # new entries for the edited code


def test_the_cache_can_be_turned_off(project):
    _restore(project, AGENTRT_CODE_CACHE="0")
    assert _entries(project) == []


def test_a_valid_entry_for_another_function_is_refused():
    """What is read back must be resume code of this very function, whatever the file says."""
    from agentrt._frames import _diskcache, _resume
    from agentrt._frames._liveness import analyze

    async def one():
        return 1

    async def two():
        return 2

    code = two.__code__
    shape = _resume.ResumeShape(code, None, (), (), False)
    impostor = (one.__code__, (), ())
    original_load = _diskcache.load
    try:
        _diskcache.load = lambda *args, **kwargs: impostor  # type: ignore[assignment]
        assert _resume._from_disk(shape, (None, (), (), False)) is None
    finally:
        _diskcache.load = original_load  # type: ignore[assignment]
    assert analyze(code).sites == {}


def test_the_validator_leaves_no_cache_files(tmp_path):
    (tmp_path / "checked.py").write_text(textwrap.dedent(AGENT))
    done = cli("check", str(tmp_path / "checked.py"))
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "__pycache__").exists()
