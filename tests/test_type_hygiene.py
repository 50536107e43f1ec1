"""Every ``Any`` and every ``type: ignore`` left in agentrt says why (issue 9).

``make lint`` runs ``mypy --strict`` on the whole package, which reports an ignore
that is no longer needed and an ``Any`` that leaks out where a type is declared.
What mypy cannot check is that a reader learns *why* the escape hatch is there:

- a ``type: ignore`` names its error codes and then says why::

      entries = dis.Bytecode(code).exception_entries  # type: ignore[attr-defined]  # not in typeshed

- a module that uses ``Any`` says why on the line that imports it::

      from typing import Any  # Any: a tool's arguments and result are the user's own values
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import agentrt

PACKAGE = Path(agentrt.__file__).resolve().parent
MODULES = sorted(PACKAGE.rglob("*.py"))
EXPLAINED_IGNORE = re.compile(r"# type: ignore\[[a-z-]+(, ?[a-z-]+)*\]  # \S")


def _comments(path: Path) -> dict[int, str]:
    """Line number -> the comment on that line (tokenize, so that ``#`` in strings is no comment)."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return {tok.start[0]: tok.string for tok in tokens if tok.type == tokenize.COMMENT}


def _name(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent)) if path.is_relative_to(PACKAGE) else path.name


def unexplained_ignores(path: Path) -> list[str]:
    """The ``type: ignore`` comments in ``path`` without error codes or without a reason."""
    return [
        f"{_name(path)}:{line}: {comment}"
        for line, comment in _comments(path).items()
        if re.search(r"type:\s*ignore", comment) and not EXPLAINED_IGNORE.match(comment)
    ]


def unexplained_any(path: Path) -> list[str]:
    """Where ``path`` uses ``Any`` without a ``# Any: <why>`` comment on its import."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    comments = _comments(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "Any":
            found.append(f"{_name(path)}:{node.lineno}: typing.Any (import Any, and say why there)")
        elif isinstance(node, ast.ImportFrom) and node.module == "typing":
            lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            if any(alias.name == "Any" for alias in node.names) and not any(
                comments.get(line, "").startswith("# Any: ") for line in lines
            ):
                found.append(f"{_name(path)}:{node.lineno}: imports Any without saying why")
    return found


def test_every_type_ignore_names_its_codes_and_says_why():
    bad = [problem for path in MODULES for problem in unexplained_ignores(path)]
    assert bad == [], "write `# type: ignore[code]  # why`, or fix the type:\n" + "\n".join(bad)


def test_every_module_that_uses_any_says_why():
    bad = [problem for path in MODULES for problem in unexplained_any(path)]
    assert bad == [], (
        "say why the module needs Any in a comment `# Any: <why>` on its import, "
        "or use precise types:\n" + "\n".join(bad)
    )


def test_the_checks_catch_what_they_are_for(tmp_path):
    """Both rules fail on what they are meant to catch, and pass what they allow."""
    bad, good = tmp_path / "bad.py", tmp_path / "good.py"
    bad.write_text(
        "import typing\n"
        "from typing import Any\n"
        "w: typing.Any = None\n"
        "x: Any = f()  # type: ignore\n"
        "y = g()  # type: ignore[attr-defined]\n"
        "z = '# type: ignore'\n",
        encoding="utf-8",
    )
    good.write_text(
        "from typing import (  # Any: the user's values\n"
        "    Any,\n"
        "    cast,\n"
        ")\n"
        "y = g()  # type: ignore[attr-defined, union-attr]  # not in typeshed\n",
        encoding="utf-8",
    )
    assert [p.split(": ")[0] for p in unexplained_ignores(bad)] == ["bad.py:4", "bad.py:5"]
    assert sorted(p.split(": ")[0] for p in unexplained_any(bad)) == ["bad.py:2", "bad.py:3"]
    assert unexplained_ignores(good) == unexplained_any(good) == []
