"""Cold start (issue 16): ``import agentrt`` and ``agentrt runs`` do no work they do not need.

Each check runs a fresh interpreter and looks at ``sys.modules`` (which modules were imported),
never at a clock: the timings live in ``benchmarks/coldstart.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agentrt

REPO = Path(__file__).resolve().parents[2]


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=120
    )


def _modules_after(code: str, *args: str) -> set[str]:
    probe = f"import sys, json, runpy\n{code}\nprint('\\nMODULES=' + json.dumps(sorted(sys.modules)))\n"
    proc = _run(probe, *args)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("MODULES="))
    return set(json.loads(line[len("MODULES=") :]))


HEAVY = ("agentrt._runtime", "agentrt._frames", "agentrt._codec", "agentrt.llm", "bytecode", "ctypes")


def test_import_agentrt_imports_nothing_heavy() -> None:
    modules = _modules_after("import agentrt")
    assert not [m for m in modules if m.startswith(HEAVY)], sorted(m for m in modules if m.startswith(HEAVY))
    assert not [m for m in modules if m.startswith("agentrt.") and m != "agentrt._lazy"]


def test_agentrt_runs_imports_only_what_it_runs(tmp_path: Path) -> None:
    code = (
        "sys.argv = ['agentrt', 'runs', '--store', sys.argv[1]]\n"
        "try:\n"
        "    runpy.run_module('agentrt', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
    )
    from agentrt.stores import SqliteStore

    SqliteStore(tmp_path / "empty.db").close()  # `agentrt runs` reads a store, never creates one
    modules = _modules_after(code, str(tmp_path / "empty.db"))
    assert "agentrt._cli.inspect_cmds" in modules  # the command really ran
    unwanted = (
        "agentrt._runtime",
        "agentrt._frames",
        "agentrt.validate",
        "agentrt.teams",
        "agentrt.inspection",
    )
    assert not [m for m in modules if m.startswith(unwanted)], sorted(
        m for m in modules if m.startswith(unwanted)
    )
    assert "importlib.metadata" not in modules  # only --version needs it
    assert "bytecode" not in modules


def test_every_public_name_resolves_to_its_defining_object() -> None:
    from agentrt._runtime import Runtime
    from agentrt._sdk.agent import agent
    from agentrt.lowlevel import Machine

    for name in agentrt.__all__:
        assert getattr(agentrt, name) is not None, name
    assert agentrt.Runtime is Runtime and agentrt.agent is agent and agentrt.Machine is Machine
    assert set(agentrt.__all__) <= set(dir(agentrt))
    namespace: dict[str, object] = {}
    exec("from agentrt import *", namespace)
    assert set(agentrt.__all__) <= set(namespace)


def test_unknown_attribute_is_an_attribute_error() -> None:
    import agentrt.llm as llm

    with pytest.raises(AttributeError, match="module 'agentrt' has no attribute 'Runtimee'"):
        getattr(agentrt, "Runtime" + "e")
    with pytest.raises(AttributeError, match=r"module 'agentrt\.llm' has no attribute 'NoSuchThing'"):
        getattr(llm, "NoSuch" + "Thing")


def test_lazy_packages_resolve_their_exports() -> None:
    import agentrt._sdk as sdk
    import agentrt.llm as llm
    from agentrt._sdk.task import Task
    from agentrt.llm.scripted import ScriptedExecutors

    assert sdk.Task is Task
    assert llm.ScriptedExecutors is ScriptedExecutors
    for name in llm.__all__:
        assert getattr(llm, name) is not None, name


def test_version_and_help_still_list_everything() -> None:
    proc = _run("from agentrt.cli import main; raise SystemExit(main(['--version']))")
    assert proc.returncode == 0 and proc.stdout.startswith("agentrt "), (proc.stdout, proc.stderr)
    proc = _run("from agentrt.cli import main; raise SystemExit(main(['--help']))")
    assert proc.returncode == 0
    for command in (
        "check",
        "dump",
        "diff",
        "fork",
        "keygen",
        "teams",
        "run",
        "resume",
        "runs",
        "show",
        "upgrade",
    ):
        assert f"    {command} " in proc.stdout, command
    proc = _run("from agentrt.cli import main; raise SystemExit(main(['nosuch']))")
    assert proc.returncode == 2 and "invalid choice: 'nosuch'" in proc.stderr
    assert "'runs'" in proc.stderr and "'check'" in proc.stderr


def test_a_subcommand_s_own_help_errors_and_output(tmp_path: Path) -> None:
    proc = _run("from agentrt.cli import main; raise SystemExit(main(['runs', '--help']))")
    assert proc.returncode == 0 and "--store" in proc.stdout and "--status" in proc.stdout
    proc = _run("from agentrt.cli import main; raise SystemExit(main(['runs', '--status', 'nonsense']))")
    assert proc.returncode == 2 and "argument --status: invalid choice" in proc.stderr
    from agentrt.stores import SqliteStore

    SqliteStore(tmp_path / "s.db").close()
    proc = _run(
        "import sys; from agentrt.cli import main; "
        "raise SystemExit(main(['runs', '--store', sys.argv[1], '--json']))",
        str(tmp_path / "s.db"),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"runs": []}


def _subcommands(parser: object) -> list[tuple[str, str | None]]:
    """(name, one-line help) of every subcommand of an ``agentrt`` parser, in listing order."""
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    # no alias and no hidden command: every choice has its line in the listing
    assert list(action.choices) == [choice.dest for choice in action._choices_actions]
    return [(choice.dest, choice.help) for choice in action._choices_actions]


def test_help_lists_exactly_the_commands_the_parser_knows() -> None:
    """``agentrt --help`` lists commands from a static table so that it imports none of their
    modules (issue 23: start-up); this is what keeps that table from drifting from the modules."""
    from agentrt.cli import build_parser

    real = _subcommands(build_parser(full=True))  # every module imported, every real parser
    listed = _subcommands(build_parser())  # what --help and "invalid choice" see
    assert listed == real
    proc = _run("from agentrt.cli import main; raise SystemExit(main(['--help']))")
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout.split("commands:", 1)[1]
    # a command's line is indented 4; a wrapped help line more
    words = [line.split()[0] for line in shown.splitlines() if line[:4] == "    " and line[4:5] not in " "]
    assert words == [name for name, _ in real]


def test_help_imports_no_command_module() -> None:
    code = (
        "sys.argv = ['agentrt', '--help']\n"
        "try:\n"
        "    runpy.run_module('agentrt', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
    )
    modules = _modules_after(code)
    commands = ("agentrt._cli", "agentrt.teams", "agentrt.stores")
    loaded = sorted(m for m in modules if m.startswith("agentrt."))
    assert not [m for m in loaded if m.startswith(commands)], loaded
    assert "attr" not in modules and "asyncio" not in modules
