"""``open_store(..., read_only=True)``: look without touching, on SQLite and a real PostgreSQL server.

Where there is no agentrt store it is ``StoreNotFound`` and nothing is created; an existing store
is read as it is, and a write through the read-only handle is refused by the database itself.
"""

from __future__ import annotations

import sqlite3

import pytest

from agentrt.stores import NewRun, StoreError, StoreNotFound, open_store

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def location(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "agentrt.db")
    return request.getfixturevalue("pg_url")


def _tables(location: str) -> list[str]:
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location) as conn:
            sql = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"  # pg_url's schema
            rows = conn.execute(sql).fetchall()
    else:
        with sqlite3.connect(location) as conn:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        conn.close()
    return sorted(row[0] for row in rows)


def test_no_store_is_store_not_found_and_nothing_is_created(location, tmp_path):
    with pytest.raises(StoreNotFound, match="no such store"):
        open_store(location, read_only=True)
    if location.startswith("postgresql://"):
        assert _tables(location) == []
    else:
        assert list(tmp_path.iterdir()) == []


def test_an_existing_store_is_read_and_a_write_is_refused(location):
    writer = open_store(location)
    writer.create_run(NewRun("r1", "m:a", {"x": 1}))
    writer.close()
    tables = _tables(location)
    reader = open_store(location, read_only=True)
    try:
        assert [r.run_id for r in reader.list_runs()] == ["r1"]
        assert reader.get_run("r1").input == {"x": 1}
        with pytest.raises(StoreError):
            reader.create_run(NewRun("r2", "m:a", {}))
    finally:
        reader.close()
    assert _tables(location) == tables
    check = open_store(location)
    try:
        assert [r.run_id for r in check.list_runs()] == ["r1"]
    finally:
        check.close()


def test_create_false_writes_to_an_existing_store_but_makes_no_new_one(tmp_path):
    path = tmp_path / "agentrt.db"
    with pytest.raises(StoreNotFound, match="does not exist"):
        open_store(path, create=False)
    assert not path.exists()
    open_store(path).close()
    store = open_store(path, create=False)
    try:
        store.create_run(NewRun("r1", "m:a", {}))
        assert store.get_run("r1") is not None
    finally:
        store.close()
