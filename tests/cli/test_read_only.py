"""Commands that only look never create or alter a store, and a reader that goes away is no traceback.

Through the command (in the test process; ``agentrt runs | head -1`` in a subprocess, whose
stdout is the closed pipe): a missing store is "no such store" (exit status 3)
with nothing created; a SQLite file of something else is left byte for byte as it was, by the
commands that create stores too; an
agentrt store read by every looking command is unchanged; ``agentrt runs | head -1`` ends
quietly with 141 whether Python's stdout is buffered or not.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from agentrt._cli.common import EXIT_HOST, EXIT_OK, EXIT_OUTPUT_CLOSED
from tests.cli.helpers import REPO, cli, cli_env, command

SPEC = "tests.cli.crash_agents:counter"

#: Every command that only reads the store (the run and checkpoint ids need not exist).
LOOKING = [
    ("runs",),
    ("runs", "--json"),
    ("show", "r1"),
    ("dump", "r1"),
    ("diff", "r1", "1", "2"),
    ("upgrade", "--dry-run"),
    ("workers",),
    ("workers", "--json"),
]
#: Commands that write, but only to runs that must already be in a store.
ACTING = [
    ("resume", "r1"),
    ("fork", "r1", "--at", "1"),
    ("cancel", "r1"),
    ("reply", "r1", "true"),
    ("upgrade",),
]
#: Commands that create a store when there is none: never inside another program's SQLite file.
CREATING = [
    ("run", SPEC, "--input", '{"steps": 1}'),
    ("submit", SPEC, "--input", '{"steps": 1}'),
    ("worker", "--import", "tests.cli.crash_agents"),
    ("serve", "--import", "tests.cli.crash_agents", "--port", "0"),
]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentrt: error: "), proc.stderr
    return lines[0]


@pytest.mark.parametrize("args", LOOKING + ACTING, ids=" ".join)
def test_a_missing_store_is_no_such_store_and_nothing_is_created(tmp_path, args):
    missing = tmp_path / "typo" / "agentrt.db"
    proc = cli(*args, "--store", str(missing))
    line = _one_error_line(proc)
    assert proc.returncode == EXIT_HOST, proc.stderr
    assert "no such store" in line and str(missing) in line and "--store" in line
    assert not missing.parent.exists()


def test_the_default_store_is_not_created_by_a_looking_command(tmp_path):
    proc = cli("runs", cwd=tmp_path)
    assert proc.returncode == EXIT_HOST and "no such store" in _one_error_line(proc)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", LOOKING + ACTING + CREATING, ids=" ".join)
def test_a_sqlite_file_of_something_else_is_left_unchanged(tmp_path, args):
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE customers (name TEXT)")
        conn.execute("INSERT INTO customers VALUES ('mira')")
    conn.close()
    before = _digest(other)
    proc = cli(*args, "--store", str(other))
    line = _one_error_line(proc)
    assert proc.returncode == EXIT_HOST
    assert "not an agentrt store" in line and "customers" in line
    assert _digest(other) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]  # no key file either


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store with one completed run, 'r1', of three checkpoints."""
    path = tmp_path_factory.mktemp("ro") / "s.db"
    done = cli("run", SPEC, "--input", '{"steps": 3}', "--store", str(path), "--run-id", "r1")
    assert done.returncode == EXIT_OK, done.stderr
    return path


@pytest.mark.parametrize("args", LOOKING, ids=" ".join)
def test_looking_at_an_agentrt_store_writes_nothing_to_it(store, args):
    before = _digest(store), sorted(p.name for p in store.parent.iterdir() if p.suffix != ".db-shm")
    proc = cli(*args, "--store", str(store))
    assert proc.returncode == EXIT_OK, proc.stderr
    after = _digest(store), sorted(p.name for p in store.parent.iterdir() if p.suffix != ".db-shm")
    assert after[0] == before[0]
    assert set(after[1]) - set(before[1]) <= {"s.db-wal"}  # SQLite's WAL index for readers, empty
    wal = store.parent / "s.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize(
    "args", [("runs",), ("runs", "--json"), ("show", "r1"), ("dump", "r1")], ids=" ".join
)
def test_a_reader_that_went_away_ends_the_command_quietly_with_141(store, args, buffered):
    """Like ``agentrt runs | head -1``, with the reader gone before the first byte is written."""
    env = cli_env()
    env.pop("PYTHONUNBUFFERED", None)
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            command(*args, "--store", str(store)),
            cwd=REPO,
            env=env,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == EXIT_OUTPUT_CLOSED
