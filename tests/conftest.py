"""Fixtures shared by every test directory: a real PostgreSQL server for the store and fleet tests."""

from __future__ import annotations

import functools
import itertools
import os
import re
import secrets
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
    "tests/realcode/",
    "tests/fuzz/",
    "tests/upgrade/",
    "tests/inspect/test_stack_roles.py",
)


def pytest_configure(config):
    """Blobs written without a store are signed with the project key; give the session (and the
    processes it starts) a key file of its own instead of creating one in the runner's home.

    The key is written here, before any test runs: pytest-xdist's workers inherit the variable
    and share the file, so none of them may be the one that creates it while another reads it."""
    global _KEY_DIR
    if "AGENTRT_KEY_FILE" not in os.environ:
        _KEY_DIR = tempfile.mkdtemp(prefix="agentrt-test-key-")
        path = os.path.join(_KEY_DIR, "blob.key")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(secrets.token_hex(32) + "\n")
        os.environ["AGENTRT_KEY_FILE"] = path


#: A test module that names one of these drives Machines in this process (directly, or through a
#: Runtime): its tests carry the ``machine`` marker, which the round-trip pass selects.  The rest
#: (command lines in subprocesses, stores, HTTP, the codec on values) have no Machine to round-trip.
_DRIVES_MACHINES = re.compile(r"\b(?:Machine|Runtime)\b")


@functools.cache
def _drives_machines(path: Path) -> bool:
    return bool(_DRIVES_MACHINES.search(path.read_text(encoding="utf-8")))


#: The marker expressions of `make test-all`'s stages that select by where a test is, or by what its
#: module names: under them a module that could not be selected is not even imported (collecting
#: the whole suite, every framework imported, costs each xdist worker tens of seconds).
_INTERPRETER_STAGE = "interpreter"
_ROUNDTRIP_STAGE = "machine and not system"


def pytest_ignore_collect(collection_path: Path, config):
    """Under ``-m interpreter``, skip what is not under ``INTERPRETER_DEPENDENT``; under ``-m "machine
    and not system"``, the test modules that name neither Machine nor Runtime.  Their tests would be
    deselected anyway; None leaves every other path to pytest's own rules."""
    markexpr = config.getoption("markexpr", "")
    if markexpr not in (_INTERPRETER_STAGE, _ROUNDTRIP_STAGE):
        return None
    root = config.rootpath
    if not collection_path.is_relative_to(root / "tests"):
        return None
    where = collection_path.relative_to(root).as_posix()
    if markexpr == _INTERPRETER_STAGE:
        if collection_path.is_dir():
            where += "/"
            wanted = where.startswith(INTERPRETER_DEPENDENT) or any(
                p.startswith(where) for p in INTERPRETER_DEPENDENT
            )
        else:
            wanted = where.startswith(INTERPRETER_DEPENDENT)
        return None if wanted else True
    is_test_module = collection_path.suffix == ".py" and collection_path.name.startswith("test_")
    return True if is_test_module and not _drives_machines(collection_path) else None


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Mark the interpreter-dependent tests and the ones that drive Machines (before ``-m``
    deselects by these markers, in the other plugins' implementations of this hook), then start the
    long ones (``slow`` or ``system``) first among the tests that are left: under pytest-xdist a long
    test collected last would run alone at the end while the other workers sit idle."""
    root = config.rootpath
    for item in items:
        where = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        interpreter = where.startswith(INTERPRETER_DEPENDENT)
        if interpreter:
            item.add_marker(pytest.mark.interpreter)
        # An interpreter-dependent test that opts out of the round trip would run in the round-trip
        # pass exactly as in the interpreter stage on the same (oldest) interpreter: not twice.
        opted_out = interpreter and item.get_closest_marker("agentrt_no_roundtrip") is not None
        if item.path.suffix == ".py" and _drives_machines(item.path) and not opted_out:
            item.add_marker(pytest.mark.machine)
    yield
    is_long = [bool(item.get_closest_marker("slow") or item.get_closest_marker("system")) for item in items]
    long = [item for item, flag in zip(items, is_long, strict=True) if flag]
    rest = [item for item, flag in zip(items, is_long, strict=True) if not flag]
    workerinput = getattr(config, "workerinput", {})
    if workerinput.get("dist") == "worksteal" and workerinput["workercount"] > 1:
        items[:] = _dealt(long, rest, workerinput["workercount"])
    else:
        items[:] = long + rest


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Tell pytest-xdist's workers the distribution mode (they run with ``--dist no``), which
    decides the order of their collection (``_dealt``)."""
    node.workerinput["dist"] = node.config.getoption("dist")


def _dealt(long: list, rest: list, workers: int) -> list:
    """``long`` and ``rest`` in the order that starts the long tests first on every worker.

    pytest-xdist's ``worksteal`` hands each of the N workers a contiguous slice of the collection
    at the start (the first gets len // N, the next len // (N - 1) of what is left, ...) and an idle
    worker steals the tail of another's slice: with the long tests all at the front, they would all
    be in the first worker's slice and run one after the other there.  Each slice starts with
    every N-th long test instead."""
    remaining, sizes = len(long) + len(rest), []
    for k in range(workers):
        sizes.append(remaining // (workers - k))
        remaining -= sizes[-1]
    fill = iter(rest)
    dealt: list = []
    for k, size in enumerate(sizes):
        mine = long[k::workers]
        dealt += mine
        dealt += itertools.islice(fill, max(0, size - len(mine)))
    dealt += fill
    return dealt


def pytest_unconfigure(config):
    if _KEY_DIR is not None:
        os.environ.pop("AGENTRT_KEY_FILE", None)
        shutil.rmtree(_KEY_DIR, ignore_errors=True)


def fresh_store(kind, request, tmp_path):
    """A fresh store of ``kind``: ``memory``, ``sqlite`` (in ``tmp_path``) or ``postgres`` (on the
    session's cluster, through the requesting test's ``pg_url``)."""
    from agentrt.stores import MemoryStore, SqliteStore, open_store

    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        return SqliteStore(tmp_path / "agentrt.db")
    return open_store(request.getfixturevalue("pg_url"))


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def every_store(request, tmp_path):
    """A fresh store of each kind in turn: memory, SQLite, and PostgreSQL on the session's cluster."""
    s = fresh_store(request.param, request, tmp_path)
    yield s
    s.close()


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


#: The blob key of every PostgreSQL store of the tests (a shared store needs one).
PG_BLOB_KEY = "test-key-62af8704764faf8ea82fc61ce9c4c3908b6cb97d463a634e9e587d7c885db0ef"


def _worker_id() -> str:
    """This pytest-xdist worker's id (``gw0``...), or ``main``: names on one server must not
    collide between the workers (``AGENTRT_TEST_PG_URL`` is one server for all of them)."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


@pytest.fixture(scope="session")
def pg_database(pg_server):
    """The session's database on the cluster; each test gets a schema of its own in it."""
    name = f"agentrt_tests_{_worker_id()}"
    url = pgcluster.fresh_database(pg_server, name)
    yield url
    pgcluster.drop_database(pg_server, name)


@pytest.fixture
def pg_url(pg_database, request, monkeypatch):
    """A fresh, empty store location for the test, and a blob key in the environment.

    A schema of its own (the URL sets ``search_path`` to it), not a database: ``CREATE SCHEMA``
    takes a millisecond where ``CREATE DATABASE`` copies a template for a few hundred.  agentrt
    names its tables unqualified and looks for them with ``to_regclass``, so a store in a
    schema is a store like one in a database of its own."""
    monkeypatch.setenv("AGENTRT_BLOB_KEY", PG_BLOB_KEY)
    schema = f"t{next(_SCHEMAS)}_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    return pgcluster.fresh_schema(pg_database, schema)


_SCHEMAS = itertools.count()
