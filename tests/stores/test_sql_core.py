"""The SQL stores' shared core: each engine's spelling of a statement, declared capabilities, statuses."""

from __future__ import annotations

import json

from agentrt.stores import MemoryStore, SqliteStore
from agentrt.stores.base import FINAL, STATUSES, Capability, RunStatus, capabilities
from agentrt.stores.postgres import DIALECT as POSTGRES
from agentrt.stores.sqlite import DIALECT as SQLITE

STATEMENT = (
    "SELECT r.run_id FROM runs r JOIN results x ON x.run_id = r.run_id "
    "WHERE r.seq = ? AND r.agent LIKE '%a' FOR UPDATE SKIP LOCKED"
)


def test_sqlite_keeps_the_text_and_drops_the_row_locks():
    assert SQLITE.sql(STATEMENT) == (
        "SELECT r.run_id FROM runs r JOIN results x ON x.run_id = r.run_id "
        "WHERE r.seq = ? AND r.agent LIKE '%a'"
    )
    assert (
        SQLITE.sql("SELECT 1 FROM runs WHERE run_id = ? FOR UPDATE") == "SELECT 1 FROM runs WHERE run_id = ?"
    )


def test_postgres_prefixes_tables_and_takes_its_placeholders():
    assert POSTGRES.sql(STATEMENT) == (
        "SELECT r.run_id FROM agentrt_runs r JOIN agentrt_results x ON x.run_id = r.run_id "
        "WHERE r.seq = %s AND r.agent LIKE '%%a' FOR UPDATE SKIP LOCKED"
    )
    # a table's name inside another word or column is left alone
    assert POSTGRES.sql("DELETE FROM replaced_checkpoints WHERE seq <= ?") == (
        "DELETE FROM agentrt_replaced_checkpoints WHERE seq <= %s"
    )
    assert POSTGRES.sql("UPDATE runs SET x = 1 WHERE runs.run_id = ?") == (
        "UPDATE agentrt_runs SET x = 1 WHERE agentrt_runs.run_id = %s"
    )


def test_a_list_is_one_array_on_postgres_and_one_placeholder_per_item_on_sqlite():
    assert SQLITE.one_of("agent", ["a", "b", "c"]) == ("agent IN (?, ?, ?)", ["a", "b", "c"])
    assert POSTGRES.one_of("agent", ("a", "b")) == ("agent = ANY(?)", [["a", "b"]])


def test_stores_declare_their_capabilities():
    sqlite_features = {
        Capability.JOURNAL_WITH_CHECKPOINT,
        Capability.QUEUED_STREAM,
        Capability.WORKER_REGISTRY,
        Capability.BATCHED_STREAM,
        Capability.WATCHED_OWNERS,
    }
    assert SqliteStore.capabilities == MemoryStore.capabilities == sqlite_features
    from agentrt.stores.postgres import PostgresStore

    # and, per handle unless turned off, OWNER_SESSIONS (tests/stores/test_owner_sessions.py)
    assert PostgresStore.capabilities == sqlite_features - {Capability.QUEUED_STREAM} | {Capability.PIPELINED}

    class Older:  # a store written before capabilities were declared
        def advertise_worker(self, info: object) -> None: ...

    assert capabilities(Older()) == frozenset()


def test_statuses_are_their_stored_text():
    assert RunStatus.WAITING == "waiting" and json.dumps(RunStatus.WAITING) == '"waiting"'
    assert STATUSES == ("queued", "running", "waiting", "blocked", "completed", "failed", "cancelled")
    assert all(type(s) is str for s in STATUSES)
    assert "completed" in FINAL and "blocked" not in FINAL


def test_each_memory_store_is_its_own_database_with_its_own_identity():
    a, b = MemoryStore(), MemoryStore()
    assert a.store_id != b.store_id
    from agentrt.stores.base import NewRun

    a.create_run(NewRun("r", "agent", {"x": 1}, status="queued"))
    assert a.get_run("r") is not None and b.get_run("r") is None
    a.close()  # keeps its contents: the object is the store
    assert a.get_run("r") is not None
