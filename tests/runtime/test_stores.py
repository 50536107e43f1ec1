"""Stores: the shared contract (memory and SQLite), SQLite schema versions, errors and leases."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import time

import pytest

from agentrt import LeaseHeld, RunNotFound
from agentrt.exceptions import RunExists
from agentrt.stores import (
    MemoryStore,
    NewRun,
    SqliteStore,
    StoreCorrupt,
    StoreError,
    StoreLocked,
    StoreSchemaTooNew,
    open_store,
)
from agentrt.stores.base import LeaseLost, make_owner, owner_is_dead
from agentrt.stores.sqlite import SCHEMA_VERSION


def test_contract(store):
    owner = make_owner()
    rec = store.create_run(NewRun("r1", "m:a", {"x": 1}))
    assert rec.status == "running" and rec.input == {"x": 1} and rec.seq == 0
    with pytest.raises(RunExists):
        store.create_run(NewRun("r1", "m:a", {}))
    store.create_run(NewRun("r1.1", "m:b", {}, parent_id="r1", parent_seq=1, parent_idx=0))
    assert [c.run_id for c in store.children("r1")] == ["r1.1"]
    with pytest.raises(LeaseLost):
        store.save_checkpoint("r1", owner, 1, b"blob", {"kind": "tool"}, [])
    store.acquire_lease("r1", owner, 5)
    store.save_checkpoint("r1", owner, 1, b"blob1", {"kind": "tool"}, [(0, 0, "notify", None, {"m": 1})])
    store.save_checkpoint("r1", owner, 2, b"blob2", {"kind": "ask"}, [(1, 0, "log", "info", {"m": 2})])
    store.add_events("r1", [(1, 0, "log", "info", {"m": "dup"})])  # same (seq, n): ignored
    assert store.latest_checkpoint("r1") == (2, b"blob2")
    assert store.get_checkpoint("r1", 1) == b"blob1"
    assert [(c.seq, c.size_bytes, c.pending) for c in store.list_checkpoints("r1")] == [
        (1, 5, {"kind": "tool"}),
        (2, 5, {"kind": "ask"}),
    ]
    assert [(e.seq, e.kind, e.data) for e in store.list_events("r1")] == [
        (0, "notify", {"m": 1}),
        (1, "log", {"m": 2}),
    ]
    assert store.put_result("r1", 2, 0, True, b"v") is True
    assert store.put_result("r1", 2, 0, False, b"other") is False  # first result wins
    assert store.get_results("r1", 2) == {0: (True, b"v")}
    store.set_waiting("r1", owner, "reply", None, [])
    rec = store.get_run("r1")
    assert (rec.status, rec.waiting_on, rec.seq, rec.pending) == ("waiting", "reply", 2, {"kind": "ask"})
    assert [r.run_id for r in store.list_runs(status="waiting")] == ["r1"]
    assert store.finish_run("r1", owner, "completed", output={"y": 2}) is True
    assert store.finish_run("r1", owner, "failed", error={"type": "X"}) is False  # recorded exactly once
    rec = store.get_run("r1")
    assert rec.status == "completed" and rec.output == {"y": 2} and rec.error is None
    store.release_lease("r1", owner)
    assert store.get_run("r1").lease_owner is None


def test_leases(store):
    a, b = make_owner(), make_owner()
    store.create_run(NewRun("r", "m:a", {}))
    store.acquire_lease("r", a, 5)
    store.acquire_lease("r", a, 5)  # re-entrant for its owner
    with pytest.raises(LeaseHeld) as info:
        store.acquire_lease("r", b, 5)
    assert info.value.owner == a and "being driven by another process" in str(info.value)
    assert store.renew_leases(a, ["r"], 0.05) == []
    assert store.renew_leases(b, ["r"], 5) == ["r"]
    time.sleep(0.1)
    store.acquire_lease("r", b, 5)  # expired: taken over
    with pytest.raises(LeaseLost):
        store.set_waiting("r", a, "reply", None, [])
    with pytest.raises(RunNotFound):
        store.acquire_lease("nope", a, 5)


def test_a_dead_owner_is_taken_over_at_once(store):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    dead = make_owner().replace(f"/{os.getpid()}/", f"/{proc.pid}/")
    assert owner_is_dead(dead) and not owner_is_dead(make_owner())
    assert not owner_is_dead("otherhost/1/abc")
    store.create_run(NewRun("r", "m:a", {}))
    store.acquire_lease("r", dead, 3600)
    store.acquire_lease("r", make_owner(), 5)


def test_sqlite_creates_directory_and_schema(tmp_path):
    path = tmp_path / "deep" / "dir" / "agentrt.db"
    store = SqliteStore(path)
    store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA page_size").fetchone()[0] == 2048  # a new file's pages (issue 16)
    assert (
        conn.execute("SELECT value FROM meta WHERE key = 'created_by'").fetchone()[0].startswith("agentrt ")
    )
    conn.close()


def test_sqlite_migrates_an_older_schema(tmp_path):
    from agentrt.stores.sqlite import MIGRATIONS, _statements

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for statement in _statements(MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute(
        "INSERT INTO runs (run_id, agent, status, input, created_at, updated_at) "
        "VALUES ('old', 'm:a', 'completed', '{}', 1, 1)"
    )
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()
    store = SqliteStore(path)
    assert store.get_run("old").status == "completed"
    store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_sqlite_moves_the_journal_and_the_stream_to_without_rowid_tables(tmp_path):
    from agentrt.stores.sqlite import MIGRATIONS, _statements

    path = tmp_path / "v6.db"
    conn = sqlite3.connect(path)
    for script in MIGRATIONS[:6]:
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute(
        "INSERT INTO runs (run_id, agent, status, input, seq, created_at, updated_at) "
        "VALUES ('r', 'm:a', 'running', '{}', 2, 1, 1)"
    )
    conn.executemany("INSERT INTO results VALUES ('r', ?, 0, 1, ?, 1)", [(1, b"one"), (2, b"two")])
    conn.executemany("INSERT INTO stream VALUES ('r', ?, 'log', ?, 1)", [(1, '{"i": 1}'), (2, '{"i": 2}')])
    conn.execute("PRAGMA user_version=6")
    conn.commit()
    conn.close()
    store = SqliteStore(path)
    assert store.get_results("r", 2) == {0: (True, b"two")}
    assert [(e.id, e.data) for e in store.read_stream("r")] == [(1, {"i": 1}), (2, {"i": 2})]
    assert store.append_stream("r", "log", {"i": 3}) == 3
    store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        for table in ("results", "stream"):
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
            assert sql.rstrip().endswith("WITHOUT ROWID"), sql
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096  # an existing file keeps its pages


def test_sqlite_refuses_a_newer_schema(tmp_path):
    path = tmp_path / "new.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(
        StoreSchemaTooNew, match=f"schema version {SCHEMA_VERSION + 1}.*newer agentrt.*Upgrade agentrt"
    ):
        SqliteStore(path)


def test_sqlite_reports_a_corrupt_file(tmp_path):
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreCorrupt, match="not a valid agentrt store"):
        SqliteStore(path)


def test_sqlite_reports_a_locked_store(tmp_path):
    path = tmp_path / "locked.db"
    store = SqliteStore(path, busy_timeout_seconds=0.2)
    store.create_run(NewRun("r", "m:a", {}))
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreLocked, match=r"locked by another process.*AGENTRT_STORE_TIMEOUT"):
            store.create_run(NewRun("r2", "m:a", {}))
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    store.create_run(NewRun("r2", "m:a", {}))
    store.close()


def test_open_store(tmp_path, monkeypatch):
    assert isinstance(open_store("memory"), MemoryStore)
    monkeypatch.setenv("AGENTRT_STORE", str(tmp_path / "env.db"))
    store = open_store(None)
    assert isinstance(store, SqliteStore) and store.path == str(tmp_path / "env.db")
    store.close()
    store = open_store(f"sqlite:///{tmp_path}/url.db")
    assert store.path == f"{tmp_path}/url.db"
    store.close()
    with pytest.raises(StoreError, match="unknown scheme 'mysql'"):
        open_store("mysql://localhost/db")
