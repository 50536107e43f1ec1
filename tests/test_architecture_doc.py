"""docs/architecture.md's package layout lists every module of agentrt, and only those.

The tree (two spaces per level, a package ends in ``/``, then the module's one-line job) is the
first thing a newcomer reads; a module added, moved or removed without it fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import agentrt

PACKAGE = Path(agentrt.__file__).resolve().parent
DOC = PACKAGE.parent / "docs" / "architecture.md"


def documented_layout(text: str) -> list[str]:
    """The paths in the first fenced block under ``## Package layout``, e.g. ``agentrt/_sdk/task.py``."""
    section = text.split("\n## Package layout\n", 1)[1]
    block = section.split("```\n", 2)[1]
    paths: list[str] = []
    parents: list[str] = []
    for line in block.splitlines():
        match = re.match(r"( *)(\S+)", line)
        if match is None:
            continue
        depth, name = len(match.group(1)) // 2, match.group(2)
        del parents[depth:]
        if name.endswith("/"):
            parents.append(name.rstrip("/"))
            paths.append("/".join(parents) + "/__init__.py")
        elif name != "__init__.py":  # a package's own __init__.py is its line above
            paths.append("/".join([*parents, name]))
    return paths


def real_layout() -> list[str]:
    return sorted(str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.rglob("*.py"))


def test_the_layout_in_the_docs_is_the_package():
    documented = documented_layout(DOC.read_text(encoding="utf-8"))
    assert len(documented) == len(set(documented)), "a module is listed twice"
    missing = sorted(set(real_layout()) - set(documented))
    stale = sorted(set(documented) - set(real_layout()))
    assert (missing, stale) == ([], []), "update docs/architecture.md, ## Package layout"


def test_the_layout_reader_reads_nesting():
    tree = ["pkg/", "  __init__.py  v", "  a.py  x", "  sub/  y", "    b.py  z", "  c.py  w"]
    text = "\n## Package layout\n\nintro\n\n```\n" + "\n".join(tree) + "\n```\n"
    assert documented_layout(text) == [
        "pkg/__init__.py",
        "pkg/a.py",
        "pkg/sub/__init__.py",
        "pkg/sub/b.py",
        "pkg/c.py",
    ]
