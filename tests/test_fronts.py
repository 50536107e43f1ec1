"""Packages meet at their fronts, and modules stay small.

A package (``agentrt._codec``, ``agentrt.stores``, ...) exports from its ``__init__`` what other
packages use; its ``_private`` modules are its own business and can be split, merged or renamed
without touching the rest of the house (issue 30, "real fronts").  Inside a package anything goes.
Every import counts, in functions and under ``if TYPE_CHECKING:`` too (a type is an interface).
"""

from __future__ import annotations

import ast
from pathlib import Path

import agentrt

PACKAGE = Path(agentrt.__file__).resolve().parent

# Reaches still being moved behind a front: each entry is an importer's package and the private
# module it reads.  The list only shrinks.
PENDING: set[tuple[str, str]] = set()


def _package_of(path: Path) -> str:
    """``agentrt/_codec/_decode.py`` -> ``agentrt._codec``; ``agentrt/lowlevel.py`` -> itself."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:2])


def private_reaches() -> list[tuple[str, str, str]]:
    """``(importer package, private module, file:line)`` for every cross-package private import."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = _package_of(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                if parts[0] != "agentrt" or len(parts) < 3:
                    continue
                owner = ".".join(parts[:2])
                if owner != importer and any(p.startswith("_") for p in parts[2:]):
                    found.append((importer, module, f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"))
    return found


def test_no_package_reads_another_packages_private_modules():
    reaches = [
        f"{where}: {module}"
        for importer, module, where in private_reaches()
        if (importer, module) not in PENDING
    ]
    assert reaches == [], "import the package's front instead (and export the name there)"


def test_the_pending_list_only_names_real_reaches():
    """An entry that matches nothing any more must go, so the list cannot hide a new reach later."""
    reaches = {(importer, module) for importer, module, _ in private_reaches()}
    assert not PENDING - reaches, sorted(PENDING - reaches)


MAX_MODULE_LINES = 700


def test_no_module_is_over_700_lines():
    """A module a reader cannot hold in mind at once is split by what its parts do (issue 30)."""
    long = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
