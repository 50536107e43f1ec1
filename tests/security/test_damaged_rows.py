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


def _views(location: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """What every view of ``location`` printed; each must answer (0, or 1 for a stranded run), never
    exit 3 with "unexpected ... please report"."""
    out = {}
    agents = str(Path(__file__).parent / "agents.py")
    for argv in (["runs"], ["runs", "--json"], ["show", "victim"], ["show", "victim", "--json"],
                 ["upgrade", "--dry-run"], ["upgrade", "--dry-run", "--json"],
                 ["check", "--against", location, agents],
                 ["check", "--against", location, "--json", agents]):  # fmt: skip
        store_arg = [] if argv[0] == "check" else ["--store", location]
        code = cli_main([*argv, *store_arg])
        printed = capsys.readouterr()
        assert code in (0, 1), (argv, code, printed.err)
        assert "please report" not in printed.err and "Traceback" not in printed.err
        out[" ".join(argv[:3])] = printed.out
    store = open_store(location, read_only=True)
    try:  # what GET /runs and GET /runs/{id} answer (the same shapes)
        listed = [result_object(r) for r in store.list_runs()]
        rec = store.get_run("victim")
        assert rec is not None
        out["GET /runs"] = json.dumps(listed)
        out["GET /runs/victim"] = json.dumps(show_object(store, rec))
    finally:
        store.close()
    return out


def _check(outputs: dict[str, str], column: str) -> None:
    for view, text in outputs.items():
        assert "victim" in text, view
        assert f"damaged: column {column}" in text or f'"damaged": {{"column": "{column}"' in text, (
            view,
            text,
        )
        if view.startswith(("runs", "GET /runs", "upgrade", "check")) and view != "GET /runs/victim":
            assert "good-1" in text and "good-2" in text, view  # the others are still listed


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


def test_a_run_with_a_damaged_input_is_not_driven_with_the_default(tmp_path: Path) -> None:
    import asyncio

    from agentrt import Runtime
    from agentrt.exceptions import StoreCorrupt
    from agentrt.stores import SqliteStore

    db = tmp_path / "runs.db"
    store = SqliteStore(db)
    store.create_run(NewRun("victim", "tests.runtime.agents:summer", {"n": 3}, status="queued"))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET input = '{bad' WHERE run_id = 'victim'")
    conn.close()

    async def main() -> BaseException | None:
        async with Runtime(store, poll_seconds=0.05) as rt:
            for _ in range(100):
                if rt.driver_error("victim") is not None:
                    break
                await asyncio.sleep(0.05)
            return rt.driver_error("victim")

    try:
        error = asyncio.run(main())
        rec = store.get_run("victim")
    finally:
        store.close()
    assert isinstance(error, StoreCorrupt) and "column input" in str(error)
    # blocked with the finding (not retried in a loop, not driven on a default input)
    assert rec is not None and rec.status == "blocked" and rec.output is None
    assert rec.blocked is not None and "column input" in rec.blocked["message"]


def _workers_views(location: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    outputs = []
    for argv in (["workers"], ["workers", "--json"]):
        code = cli_main([*argv, "--store", location])
        printed = capsys.readouterr()
        assert code == 0, (argv, printed.err)
        outputs.append(printed.out)
    return outputs[0], outputs[1]


@pytest.mark.parametrize(("info", "column"), [("{bad", "data"), ('{"lacking": 7}', "lacking")])
def test_sqlite_a_damaged_worker_row_is_named_by_agentrt_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], info: str, column: str
) -> None:
    import time

    db = tmp_path / "runs.db"
    location = f"sqlite:///{db}"
    _store_with_runs(location)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO workers (owner, host, pid, started_at, last_seen, info) VALUES (?, ?, ?, ?, ?, ?)",
            ("h/1/bad", "h", "not a pid", time.time(), time.time(), info),
        )
    conn.close()
    text, as_json = _workers_views(location, capsys)
    assert "h/1/bad" in text and "damaged: column" in text
    worker = json.loads(as_json)["workers"][0]
    assert worker["owner"] == "h/1/bad" and "damaged" in worker


def test_postgres_a_damaged_worker_row_is_named_by_agentrt_workers(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    import psycopg

    _store_with_runs(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO agentrt_workers (owner, host, pid, started_at, last_seen, info) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            ("h/1/bad", "h", 1, time.time(), time.time(), "{bad"),
        )
    text, as_json = _workers_views(pg_url, capsys)
    assert "damaged: column data: invalid JSON" in text
    assert json.loads(as_json)["workers"][0]["damaged"]["column"] == "data"
