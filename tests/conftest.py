"""Fixtures shared by every test directory: a real PostgreSQL server for the store and fleet tests."""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from tests import pgcluster

_KEY_DIR: str | None = None

#: Tests whose outcome depends on the interpreter: frame layout and bytecode, the codec, the
#: validator's reading of code, golden blobs, upgrades between code versions.  They carry the
#: ``interpreter`` marker, which `make test-all` runs on every CPython; the rest run once.
INTERPRETER_DEPENDENT = (
    "tests/frames/",
    "tests/codec/",
    "tests/lowlevel/",
    "tests/validate/",
    "tests/golden/",
    "tests/corpus/",
    "tests/test_corpus.py",
    "tests/fuzz/",
    "tests/upgrade/",
    "tests/inspect/test_stack_roles.py",
)


def pytest_configure(config):
    """Blobs written without a store are signed with the project key; give the session (and the
    processes it starts) a key file of its own instead of creating one in the runner's home."""
    global _KEY_DIR
    if "AGENTRT_KEY_FILE" not in os.environ:
        _KEY_DIR = tempfile.mkdtemp(prefix="agentrt-test-key-")
        os.environ["AGENTRT_KEY_FILE"] = os.path.join(_KEY_DIR, "blob.key")


#: A test module that names one of these drives Machines in this process (directly, or through a
#: Runtime): its tests carry the ``machine`` marker, which the round-trip pass selects.  The rest
#: (command lines in subprocesses, stores, HTTP, the codec on values) have no Machine to round-trip.
_DRIVES_MACHINES = re.compile(r"\b(?:Machine|Runtime)\b")


@functools.cache
def _drives_machines(path: Path) -> bool:
    return bool(_DRIVES_MACHINES.search(path.read_text(encoding="utf-8")))


def pytest_collection_modifyitems(config, items):
    """Mark the interpreter-dependent tests and the ones that drive Machines, and start the long
    ones first: under pytest-xdist a long test collected last would run alone at the end while the
    other workers sit idle."""
    root = config.rootpath
    for item in items:
        where = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        if where.startswith(INTERPRETER_DEPENDENT):
            item.add_marker(pytest.mark.interpreter)
        if item.path.suffix == ".py" and _drives_machines(item.path):
            item.add_marker(pytest.mark.machine)
    items.sort(key=lambda item: not (item.get_closest_marker("slow") or item.get_closest_marker("system")))


def pytest_unconfigure(config):
    if _KEY_DIR is not None:
        os.environ.pop("AGENTRT_KEY_FILE", None)
        shutil.rmtree(_KEY_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server():
    """The URL of a throwaway PostgreSQL cluster for the session; skips locally (fails in CI) without one."""
    try:
        with pgcluster.cluster() as url:
            yield url
    except FileNotFoundError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the PostgreSQL tests: {exc}")
        pytest.skip(str(exc))


@pytest.fixture
def pg_url(pg_server, request, monkeypatch):
    """A fresh database on the session's cluster (one per test) and a blob key in the environment."""
    monkeypatch.setenv(
        "AGENTRT_BLOB_KEY", "test-key-62af8704764faf8ea82fc61ce9c4c3908b6cb97d463a634e9e587d7c885db0ef"
    )
    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    return pgcluster.fresh_database(pg_server, name)
