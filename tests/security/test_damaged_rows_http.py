"""Issue 25 item 4 over HTTP: ``GET /runs`` and ``GET /runs/{id}`` answer a damaged row as damaged
(no 500) and a ``parent_id`` cycle as a run (no reset connection)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentrt.stores import open_store
from agentrt.stores.base import NewRun

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")
pytest.importorskip("sse_starlette")

from tests.serve.conftest import Server  # needs the serve extra, checked above


def test_http_views_report_a_damaged_row_and_survive_a_parent_cycle(tmp_path: Path) -> None:
    db = tmp_path / "agentrt.db"
    store = open_store(f"sqlite:///{db}")
    try:
        for name in ("good-1", "victim", "cycle-a", "cycle-b"):
            store.create_run(NewRun(name, "nowhere.module:agent", {"n": 1}, status="queued"))
    finally:
        store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET pending = '{bad', status = 'waiting' WHERE run_id = 'victim'")
        conn.execute("UPDATE runs SET parent_id = 'cycle-b', status = 'waiting' WHERE run_id = 'cycle-a'")
        conn.execute("UPDATE runs SET parent_id = 'cycle-a', status = 'waiting' WHERE run_id = 'cycle-b'")
    conn.close()
    server = Server(db, tmp_path)
    server.start()
    try:
        with server.client() as client:
            listed = client.get("/runs")
            assert listed.status_code == 200, listed.text
            runs = {r["run_id"]: r for r in listed.json()["runs"]}
            assert "good-1" in runs
            assert runs["victim"]["damaged"]["column"] == "pending"
            shown = client.get("/runs/victim")
            assert shown.status_code == 200, shown.text
            assert shown.json()["damaged"]["column"] == "pending"
            cycled = client.get("/runs/cycle-a")
            assert cycled.status_code in (200, 404), cycled.text
    finally:
        server.stop()
