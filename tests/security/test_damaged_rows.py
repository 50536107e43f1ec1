"""Issue 25 item 4: a damaged row is data, not a crash.  Each column of the runs table (and the
events and checkpoint JSON) is corrupted in turn, on SQLite and PostgreSQL, and every view runs:
none fails, and each names the damaged run and column while listing the others."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentrt.cli import main as cli_main
from agentrt.stores import open_store
from agentrt.stores.base import NewRun
from agentrt.stores.views import MAX_PARENT_DEPTH, result_object, root_of, show_object

# column -> a value its type allows in the database but agentrt never writes
TEXT_JSON = {"input": "{not json", "output": "[1,", "error": "[1, 2]", "pending": '"a string"',
             "usage": '{"model_calls": "many"}', "blocked": "{bad"}  # fmt: skip
SQLITE_ONLY = {"agent": b"\xff\xfe", "status": b"\x03", "seq": "seven", "created_at": "yesterday",
               "epoch": b"\x00", "parent_id": b"\x01", "waiting_on": b"\x02",
               "lease_expires": "soon"}  # fmt: skip


def _store_with_runs(location: str) -> None:
    store = open_store(location)
    try:
        for name in ("good-1", "victim", "good-2"):
            store.create_run(NewRun(name, "tests.x:agent", {"n": 1}, status="queued"))
    finally:
        store.close()


def _views(location: str, capsys: pytest.CaptureFixture[str]) -> str:
    """Every view of ``location``; what they printed (each must exit 0 or with a finding, never 3)."""
    out = []
    for argv in (["runs"], ["runs", "--json"], ["show", "victim"], ["show", "victim", "--json"],
                 ["upgrade", "--dry-run"], ["upgrade", "--dry-run", "--json"]):  # fmt: skip
        code = cli_main([*argv, "--store", location])
        printed = capsys.readouterr()
        assert code in (0, 1), (argv, code, printed.err)
        assert "please report" not in printed.err and "Traceback" not in printed.err
        out.append(printed.out)
    store = open_store(location, read_only=True)
    try:  # what GET /runs and GET /runs/{id} answer
        listed = [result_object(r) for r in store.list_runs()]
        assert {r["run_id"] for r in listed} >= {"good-1", "good-2", "victim"}
        rec = store.get_run("victim")
        assert rec is not None
        json.dumps(show_object(store, rec))
        out.append(json.dumps(listed))
    finally:
        store.close()
    return "\n".join(out)


def _check(text: str, column: str) -> None:
    assert f"damaged: column {column}" in text
    assert f'"damaged": {{"column": "{column}"' in text
    assert "good-1" in text and "good-2" in text


@pytest.mark.parametrize("column", sorted({**TEXT_JSON, **SQLITE_ONLY}))
def test_sqlite_a_damaged_column_is_reported_by_every_view(
    tmp_path: Path, column: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "runs.db"
    location = f"sqlite:///{db}"
    _store_with_runs(location)
    value: Any = {**TEXT_JSON, **SQLITE_ONLY}[column]
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE runs SET {column} = ? WHERE run_id = 'victim'", (value,))
    conn.close()
    _check(_views(location, capsys), column)


@pytest.mark.parametrize("column", sorted(TEXT_JSON))
def test_postgres_a_damaged_column_is_reported_by_every_view(
    pg_url: str, column: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    _store_with_runs(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"UPDATE agentrt_runs SET {column} = %s WHERE run_id = 'victim'", (TEXT_JSON[column],))
    _check(_views(pg_url, capsys), column)


def test_a_damaged_event_is_shown_as_damaged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "runs.db"
    location = f"sqlite:///{db}"
    _store_with_runs(location)
    store = open_store(location)
    try:
        store.add_events("victim", [(0, 1, "note", None, {"ok": True})])
    finally:
        store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET data = '{bad' WHERE run_id = 'victim'")
    conn.close()
    assert cli_main(["show", "victim", "--json", "--store", location]) == 0
    assert '"damaged": {"column": "data"' in capsys.readouterr().out


def test_a_parent_cycle_ends_the_walk(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    location = f"sqlite:///{db}"
    _store_with_runs(location)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET parent_id = 'good-1' WHERE run_id = 'victim'")
        conn.execute("UPDATE runs SET parent_id = 'victim' WHERE run_id = 'good-1'")
    conn.close()
    store = open_store(location, read_only=True)
    try:
        rec = store.get_run("victim")
        assert rec is not None
        assert root_of(store, rec).run_id in ("victim", "good-1")
    finally:
        store.close()
    assert MAX_PARENT_DEPTH == 1000
