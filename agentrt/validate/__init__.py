"""``agentrt check``: what cannot cross an ``await``, found before the run.

The validator compiles a file (it never imports or runs it), takes every coroutine
and async generator code object, and asks the checkpoint engine's own liveness
analysis (:func:`agentrt._frames._liveness.analyze`) which locals a checkpoint at
each suspension would have to store.  For those it reads the source to see what
they hold -- an asyncio Task, a ``re.Match``, an open file, an instance of a class
not marked ``@agentrt.serializable`` -- and reports the hazard with the code the
runtime's ``CannotCrossAwait`` would use (see ``docs/hazards.md``).  Because both
sides share one analysis, a value dead at every await is never reported, and a live
hazard the validator can name is exactly one the runtime would refuse.

    >>> from agentrt.validate import check_source
    >>> src = "import re\\nasync def a(s, x):\\n    m = re.match('a', s)\\n    await x\\n    return m\\n"
    >>> [f.code for f in check_source(src, "a.py")]
    ['AR103']
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from agentrt.validate._check import check_file, check_source
from agentrt.validate._model import ERROR, PORTABILITY, Finding, Profile, Severity
from agentrt.validate._report import exit_status as exit_status
from agentrt.validate._report import render_json as render_json
from agentrt.validate._report import render_text as render_text
from agentrt.validate._resolve import Project, project_roots
from agentrt.validate._resolve import find_module_file as find_module_file

__all__ = [
    "ERROR",
    "PORTABILITY",
    "Finding",
    "Profile",
    "Project",
    "Severity",
    "check_file",
    "check_path",
    "check_source",
    "exit_status",
    "find_module_file",
    "iter_python_files",
    "project_roots",
    "render_json",
    "render_text",
]

_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})


def iter_python_files(path: str | os.PathLike[str]) -> Iterator[Path]:
    """``path`` itself if it is a file, else every ``*.py`` under it (sorted; hidden
    directories, ``__pycache__`` and virtual environments skipped)."""
    root = Path(path)
    if root.is_file():
        yield root
        return
    if not root.is_dir():
        raise FileNotFoundError(f"no such file or directory: {os.fspath(path)}")
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".")
            and d not in _SKIP_DIRS
            and not (Path(directory, d) / "pyvenv.cfg").exists()
        )
        for filename in sorted(filenames):
            if filename.endswith(".py"):
                yield Path(directory, filename)


def check_path(path: str | os.PathLike[str], *, agents_only: bool = False) -> list[Finding]:
    """Findings for a file, or for every ``*.py`` under a directory.

    Raises ``FileNotFoundError`` for a missing path and ``SyntaxError`` for the first
    file that does not compile.  Files of one project share the parsed imports.
    ``agents_only``: only the functions passed to ``agent(...)`` and the helpers they call.
    """
    findings: list[Finding] = []
    projects: dict[tuple[str, ...], Project] = {}
    for file in iter_python_files(path):
        roots = project_roots(file)
        project = projects.setdefault(roots, Project(roots))
        findings.extend(check_file(file, project=project, agents_only=agents_only))
    return findings
