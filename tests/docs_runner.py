"""Run the code blocks of a Markdown page as written.

A page's Python blocks run in order, in one namespace, as the blocks of a notebook or of a
``python -m asyncio`` session would: each block is compiled with ``ast.PyCF_ALLOW_TOP_LEVEL_AWAIT``
and, when it awaits at its top level, its coroutine is awaited in the running event loop.  The
namespace is a real module (registered in ``sys.modules`` while the page runs), so the classes and
functions a page defines can be checkpointed and restored like those of a user's file.

What a page assumes and says it assumes (``rt``, "a runtime entered as above") comes from a
*prelude* the test passes in, never from the page; ``before`` runs a test's set-up just before a
given block (the run a section talks about).  A block is compiled with the page's own file name
and line numbers, so a traceback points at the line of the Markdown file.

A block the page marks with ``<!-- not run: REASON -->`` on the line before it is not run, and
the reason is kept; ``<!-- snippet: FILE (...) -->`` marks a block another test writes to FILE
and runs as a program (docs/embedding.md's service.py and host.py).  Everything else runs.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import types
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NOT_RUN = re.compile(r"<!-- not run: (.+?) -->")
SNIPPET = re.compile(r"<!-- snippet: (\S+)")


@dataclass(frozen=True)
class Block:
    """One fenced code block: ``line`` is the 1-based line of its first line of code."""

    path: Path
    line: int
    info: str
    code: str
    mark: str | None = None  # why it is not run here ("not run: ..." or "snippet: FILE")

    @property
    def language(self) -> str:
        return self.info.split()[0] if self.info.split() else ""

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of the page, in order, with the mark on the line before it if any."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    found: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            info = lines[i][3:].strip()
            start = i + 1
            end = start
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            previous = lines[i - 1] if i else ""
            mark = None
            if m := NOT_RUN.search(previous):
                mark = "not run: " + m.group(1)
            elif m := SNIPPET.search(previous):
                mark = "snippet: " + m.group(1)
            found.append(Block(path, start + 1, info, "".join(lines[start:end]), mark))
            i = end + 1
        else:
            i += 1
    return found


def python_blocks(path: Path) -> list[Block]:
    return [b for b in blocks(path) if b.language == "python"]


Setup = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class PageRun:
    """What running a page did: the blocks that ran, those left to other tests and why."""

    module: types.ModuleType
    ran: list[Block] = field(default_factory=list)
    marked: list[Block] = field(default_factory=list)

    @property
    def ns(self) -> dict[str, Any]:
        return self.module.__dict__


async def run_page(
    path: Path,
    prelude: Mapping[str, Any] | None = None,
    *,
    before: Mapping[int, Setup] | None = None,
    module_name: str | None = None,
) -> PageRun:
    """Run every unmarked Python block of ``path`` in order in one module namespace.

    ``prelude`` fills the namespace first; ``before[N]`` is awaited (with the namespace) just
    before the page's N-th Python block (0-based, marked blocks counted).  A block that raises
    fails the page with the block's Markdown line in the traceback.  The module stays in
    ``sys.modules`` until the caller's ``unload`` (a page's objects may be restored later)."""
    name = module_name or "docs_" + re.sub(r"\W", "_", path.stem)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    module.__dict__.update(prelude or {})
    sys.modules[name] = module
    result = PageRun(module)
    for index, block in enumerate(python_blocks(path)):
        if before and index in before:
            await before[index](module.__dict__)
        if block.mark is not None:
            result.marked.append(block)
            continue
        # Padded with blank lines: line numbers (and linecache's source lines) are the page's own.
        source = "\n" * (block.line - 1) + block.code
        code = compile(source, str(path), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        outcome = eval(code, module.__dict__)  # the page's own code, run as written
        if inspect.isawaitable(outcome):
            await outcome
        result.ran.append(block)
    return result


def unload(run: PageRun) -> None:
    sys.modules.pop(run.module.__name__, None)


def shell_commands(block: Block) -> list[list[str]]:
    """The commands of a ``sh`` block as argument lists: continuation lines joined, comments and
    blank lines left out."""
    import shlex

    return [
        words
        for line in block.code.replace("\\\n", " ").splitlines()
        if (words := shlex.split(line, comments=True))
    ]


def spelled_out(words: list[str]) -> list[list[str]]:
    """A command with ``[--optional parts]`` as written: once without them, then once with each."""
    bare: list[str] = []
    options: list[list[str]] = []
    group: list[str] | None = None
    for word in words:
        if group is None and word.startswith("["):
            group, word = [], word[1:]
        if group is None:
            bare.append(word)
            continue
        closing = word.endswith("]")
        group.append(word[:-1] if closing else word)
        if closing:
            options.append(group)
            group = None
    return [bare, *(bare + option for option in options)]
