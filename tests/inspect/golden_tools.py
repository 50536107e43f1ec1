"""Shared by the dump tests and ``make_golden``: the golden blobs and how outputs are normalised."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
HERE_MINOR = f"{sys.version_info[0]}.{sys.version_info[1]}"
AGENTS = "tests.inspect.agents"
#: Golden blob name -> how it was made (see make_golden.make_blobs).
BLOBS = ("nested", "held", "value")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def golden_dir(minor: str = HERE_MINOR) -> Path:
    return GOLDEN / minor


def blob_path(name: str, minor: str = HERE_MINOR) -> Path:
    return golden_dir(minor) / f"{name}.blob"


def relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def normalize(text: str) -> str:
    """Stable across checkouts and runs: the repository path and memory addresses are replaced."""
    return _ADDRESS.sub("0xADDR", text.replace(str(REPO), "<repo>"))


def run_cli(*args: str) -> tuple[int, str, str]:
    """``agentrt ARGS`` in this process (cwd must be the repository): (exit status, stdout, stderr)."""
    from agentrt.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def dump_args(name: str, *extra: str) -> list[str]:
    # the golden blobs are committed artifacts, written without a key
    return ["dump", relative(blob_path(name)), "--allow-module", AGENTS, "--allow-unsigned", *extra]
