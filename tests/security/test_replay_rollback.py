"""Issue 25 item 6: replay across stores and rollback, on SQLite and PostgreSQL.

Two attacks by someone who can write a store but holds no key that it does not share:

- *Replay across stores.*  Staging and production share a key and a run id; a checkpoint (or a
  journaled reply) copied from staging into production must not restore there: every blob is
  sealed for its store's identity, and the run is blocked with a finding that names
  ``agentrt move``, the deliberate way.
- *Rollback.*  Delete a run's newest checkpoint and its journal rows, rewind the run row (or
  revive a finished run), ``agentrt resume``: a finished tool call must not be made again.  The
  run row's signed head names the newest checkpoint and whether the run finished.

Each attack runs the real runtime on a real store; the harm is counted (``CHARGES``).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrt import Runtime
from agentrt.stores import open_store
from agentrt.stores._sql.packing import unpack
from tests import pgcluster
from tests.conftest import PG_BLOB_KEY
from tests.security import replay_agents as A

KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


class Raw:
    """The attacker's access: SQL on the store's tables, no key."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.pg = location.startswith("postgresql")

    def __call__(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        prefix = "agentrt_" if self.pg else ""
        names = {n: n for n in ("runs", "checkpoints", "results", "meta", "tenants")}
        sql = sql.format(**{k: prefix + v for k, v in names.items()})
        if self.pg:
            import psycopg

            with psycopg.connect(self.location, autocommit=True) as conn:
                cur = conn.execute(sql.replace("?", "%s"), params)
                return cur.fetchall() if cur.description else []
        conn = sqlite3.connect(self.location.removeprefix("sqlite:///"))
        try:
            with conn:
                cur = conn.execute(sql, params)
                return cur.fetchall() if cur.description else []
        finally:
            conn.close()


@pytest.fixture(params=KINDS)
def two_stores(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str]]:
    """Two empty stores ("staging", "production") that share one blob key, as docs/deploy.md once
    suggested; each is a store of its own (its own identity)."""
    if request.param == "sqlite":
        monkeypatch.setenv("AGENTRT_BLOB_KEY", PG_BLOB_KEY)
        yield f"sqlite:///{tmp_path / 'staging.db'}", f"sqlite:///{tmp_path / 'production.db'}"
        return
    staging = request.getfixturevalue("pg_url")  # sets AGENTRT_BLOB_KEY too
    database = request.getfixturevalue("pg_database")
    production = pgcluster.fresh_schema(database, f"prod_{abs(hash(request.node.name)) % 10**8}")
    yield staging, production


@pytest.fixture
def one_store(two_stores: tuple[str, str]) -> str:
    return two_stores[1]


def rid(base: str, location: str) -> str:
    """A run id of its own per backend: the SQLite and PostgreSQL cases may share a process, whose
    ``CHARGES`` counts by run id."""
    return f"{base}-{'pg' if location.startswith('postgres') else 'lite'}"


def _drive(location: str, fn: Any) -> Any:
    """Run ``fn(rt, store)`` (a coroutine function) with a Runtime on a fresh handle of ``location``."""

    async def main() -> Any:
        store = open_store(location)
        try:
            async with Runtime(store) as rt:
                return await fn(rt, store)
        finally:
            store.close()

    return asyncio.run(main())


_ENDS = ("completed", "failed", "cancelled", "blocked")


def _settled(rt: Runtime, run_id: str, until: tuple[str, ...] = _ENDS) -> Any:
    """The run's record once its status is one of ``until`` (or its driver stopped with an error)."""

    async def wait() -> Any:
        for _ in range(400):
            rec = rt.status(run_id)
            if rec.status in until or rt.driver_error(run_id):
                return rec
            await asyncio.sleep(0.025)
        return rt.status(run_id)

    return wait()


def _wait_at_question(location: str, run_id: str, order: A.Order) -> None:
    async def fn(rt: Runtime, store: Any) -> None:
        await rt.start(A.approve, order, run_id=run_id)
        rec = await _settled(rt, run_id, ("waiting", *_ENDS))
        assert rec.status == "waiting", rec

    _drive(location, fn)


def _reply_and_settle(location: str, run_id: str, answer: str) -> tuple[Any, BaseException | None]:
    async def fn(rt: Runtime, store: Any) -> tuple[Any, BaseException | None]:
        await rt.reply(run_id, answer)  # recorded, and the run driven on here
        rec = await _settled(rt, run_id)
        return rec, rt.driver_error(run_id)

    return _drive(location, fn)


async def _resumed(rt: Runtime, store: Any, run_id: str) -> tuple[Any, BaseException | None]:
    """``agentrt resume``: drive the run here until it settles; its record and the driver's error."""
    try:
        await rt.resume(run_id)
    except Exception as exc:
        return store.get_run(run_id), exc
    rec = await _settled(rt, run_id)
    return rec, rt.driver_error(run_id)


# ---------------------------------------------------------------- replay across stores

Stores = tuple[str, str]
_NEWEST = "SELECT seq, blob FROM {checkpoints} WHERE run_id = ? ORDER BY seq DESC LIMIT 1"
_REPLACE = "UPDATE {checkpoints} SET blob = ? WHERE run_id = ? AND seq = ?"


def test_a_checkpoint_copied_from_another_store_with_the_same_key_is_refused(two_stores: Stores) -> None:
    staging, production = two_stores
    run_id = rid("order-77", production)
    _wait_at_question(staging, run_id, A.Order(5, "staging"))
    _wait_at_question(production, run_id, A.Order(500, "production"))
    ((seq, blob),) = Raw(staging)(_NEWEST, (run_id,))
    Raw(production)(_REPLACE, (bytes(blob), run_id, seq))
    before = list(A.CHARGES)

    rec, error = _reply_and_settle(production, run_id, "yes")

    assert rec.status == "blocked", rec  # kept, not failed: the production blob can be put back
    assert error is not None and "agentrt move" in str(error) and "sealed for store" in str(error)
    assert "agentrt move" in rec.blocked["message"]
    assert before == A.CHARGES  # staging's locals never ran in production
    assert rec.output is None


def test_a_head_copied_with_the_checkpoint_does_not_verify_in_another_store(two_stores: Stores) -> None:
    """The attacker copies the run row's head too: it is signed for the staging store's identity."""
    staging, production = two_stores
    run_id = rid("order-78", production)
    _wait_at_question(staging, run_id, A.Order(5, "staging"))
    _wait_at_question(production, run_id, A.Order(500, "production"))
    src = Raw(staging)
    ((seq, blob),) = src(_NEWEST, (run_id,))
    ((head,),) = src("SELECT head FROM {runs} WHERE run_id = ?", (run_id,))
    dst = Raw(production)
    dst(_REPLACE, (bytes(blob), run_id, seq))
    dst("UPDATE {runs} SET head = ? WHERE run_id = ?", (head, run_id))

    rec, error = _reply_and_settle(production, run_id, "yes")

    assert rec.status == "blocked" and error is not None
    assert "sealed for store" in str(error) or "head does not verify" in str(error)


def test_a_reply_copied_from_another_store_is_refused(two_stores: tuple[str, str]) -> None:
    """A journaled result (the reply "yes") copied from staging into production's waiting run."""
    staging, production = two_stores
    run_id = rid("order-79", production)
    _wait_at_question(staging, run_id, A.Order(5, "staging"))
    _wait_at_question(production, run_id, A.Order(500, "production"))

    async def answer(rt: Runtime, store: Any) -> None:  # a client records the reply; nothing drives it
        await rt.reply(run_id, "yes")

    async def client(rt: Runtime, store: Any) -> None:
        rt.worker = False
        await answer(rt, store)

    _drive(staging, client)
    rows = Raw(staging)("SELECT seq, idx, ok, blob FROM {results} WHERE run_id = ?", (run_id,))
    assert rows, "staging journaled the reply"
    for seq, idx, ok, blob in rows:
        Raw(production)(
            "INSERT INTO {results} (run_id, seq, idx, ok, blob, created_at) VALUES (?, ?, ?, ?, ?, 0)",
            (run_id, seq, idx, ok, bytes(blob)),
        )
    Raw(production)("UPDATE {runs} SET wake_at = 0 WHERE run_id = ?", (run_id,))
    before = list(A.CHARGES)

    rec, error = _drive(production, lambda rt, store: _resumed(rt, store, run_id))
    assert rec.status == "blocked" and error is not None and "sealed for store" in str(error)
    assert before == A.CHARGES


# ---------------------------------------------------------------- rollback


def _finished_run(location: str, run_id: str) -> None:
    async def fn(rt: Runtime, store: Any) -> None:
        await rt.start(A.pay_twice, A.Order(10), run_id=run_id)
        rec = await _settled(rt, run_id)
        assert rec.status == "completed", rec

    _drive(location, fn)


def _resume(location: str, run_id: str) -> tuple[Any, BaseException | None]:
    return _drive(location, lambda rt, store: _resumed(rt, store, run_id))


def test_deleting_the_newest_checkpoint_and_rewinding_a_finished_run_is_refused(one_store: str) -> None:
    run_id = rid("rollback-1", one_store)
    _finished_run(one_store, run_id)
    assert [c for c in A.CHARGES if c[0] == run_id] == [(run_id, 10), (run_id, 11)]
    raw = Raw(one_store)
    ((newest,),) = raw("SELECT max(seq) FROM {checkpoints} WHERE run_id = ?", (run_id,))
    raw("DELETE FROM {checkpoints} WHERE run_id = ? AND seq = ?", (run_id, newest))
    raw("DELETE FROM {results} WHERE run_id = ? AND seq >= ?", (run_id, newest))
    raw("UPDATE {runs} SET status = 'running', seq = ?, output = NULL, lease_owner = NULL, "
        "lease_expires = NULL WHERE run_id = ?", (newest - 1, run_id))  # fmt: skip

    rec, error = _resume(one_store, run_id)

    assert [c for c in A.CHARGES if c[0] == run_id] == [(run_id, 10), (run_id, 11)]  # no charge again
    assert rec.status == "blocked", rec
    assert error is not None and "revived" in str(error)
    assert "agentrt retry" in rec.blocked["message"]  # the deliberate way on, after looking


def test_rolling_a_waiting_run_back_one_checkpoint_does_not_repeat_its_tool_call(one_store: str) -> None:
    """The run charged, then waits on a question (checkpoint 2, whose transaction journaled the
    charge).  The attacker deletes checkpoint 2 and every journal row, and rewinds the row to
    checkpoint 1, before the charge: without the head, resuming would charge again."""
    run_id = rid("rollback-3", one_store)

    async def start(rt: Runtime, store: Any) -> None:
        await rt.start(A.charge_then_ask, A.Order(7), run_id=run_id)
        rec = await _settled(rt, run_id, ("waiting", *_ENDS))
        assert rec.status == "waiting" and rec.seq == 2, rec

    _drive(one_store, start)
    assert [c for c in A.CHARGES if c[0] == run_id] == [(run_id, 7)]
    raw = Raw(one_store)
    raw("DELETE FROM {checkpoints} WHERE run_id = ? AND seq = 2", (run_id,))
    raw("DELETE FROM {results} WHERE run_id = ?", (run_id,))
    raw("UPDATE {runs} SET status = 'running', seq = 1, waiting_on = NULL, pending = NULL, "
        "lease_owner = NULL, lease_expires = NULL WHERE run_id = ?", (run_id,))  # fmt: skip

    rec, error = _resume(one_store, run_id)

    assert [c for c in A.CHARGES if c[0] == run_id] == [(run_id, 7)]  # not charged again
    assert rec.status == "blocked", rec
    assert error is not None and "names checkpoint 2" in str(error) and "holds checkpoint 1" in str(error)


def test_reviving_a_finished_run_is_refused(one_store: str) -> None:
    run_id = rid("rollback-2", one_store)
    _finished_run(one_store, run_id)
    Raw(one_store)("UPDATE {runs} SET status = 'running', output = NULL, lease_owner = NULL, "
                   "lease_expires = NULL WHERE run_id = ?", (run_id,))  # fmt: skip

    rec, error = _resume(one_store, run_id)

    assert rec.status == "blocked" and error is not None and "revived" in str(error)
    assert [c for c in A.CHARGES if c[0] == run_id] == [(run_id, 10), (run_id, 11)]


@pytest.mark.parametrize("head", [None, "1:r:00:00", "garbage"])
def test_an_edited_or_dropped_head_is_refused(one_store: str, head: str | None) -> None:
    run_id = rid(f"rollback-head-{head}", one_store)
    _wait_at_question(one_store, run_id, A.Order(1))
    Raw(one_store)("UPDATE {runs} SET head = ? WHERE run_id = ?", (head, run_id))

    rec, error = _reply_and_settle(one_store, run_id, "yes")

    assert rec.status == "blocked" and error is not None and "head" in str(error)
    assert not [c for c in A.CHARGES if c[0] == run_id]


def test_an_older_checkpoint_swapped_in_breaks_the_chain(one_store: str) -> None:
    """Checkpoint 1 of the run replaced by checkpoint 1 of another run of the same store (re-bound
    blobs cannot be made without the key, so the attacker uses a genuine blob of the same run id from
    before: here, one kept by an earlier run that was deleted and started again)."""
    run_id = rid("chain-1", one_store)
    raw = Raw(one_store)

    async def twice(rt: Runtime, store: Any) -> bytes:
        await rt.start(A.approve, A.Order(1, "first life"), run_id=run_id)
        await _settled(rt, run_id, ("waiting", *_ENDS))
        (_seq, blob) = store.latest_checkpoint(run_id)
        return blob

    old_blob = _drive(one_store, twice)
    raw("DELETE FROM {checkpoints} WHERE run_id = ?", (run_id,))
    raw("DELETE FROM {runs} WHERE run_id = ?", (run_id,))

    async def second(rt: Runtime, store: Any) -> None:
        await rt.start(A.pay_twice, A.Order(20), run_id=run_id)
        await _settled(rt, run_id)

    _drive(one_store, second)  # completes: checkpoints 1 and 2, head finished
    # the attacker wants checkpoint 2 restored on top of the first life's checkpoint 1
    raw("UPDATE {checkpoints} SET blob = ? WHERE run_id = ? AND seq = 1", (old_blob, run_id))
    from agentrt._runtime.history import check_chain

    store = open_store(one_store)
    try:
        ((blob2,),) = raw("SELECT blob FROM {checkpoints} WHERE run_id = ? AND seq = 2", (run_id,))
        from agentrt.exceptions import HistoryRefused

        with pytest.raises(HistoryRefused, match="checkpoint 1 was swapped"):
            check_chain(store, run_id, 2, unpack(blob2))
    finally:
        store.close()


def test_upgrade_never_signs_a_copied_checkpoint_or_a_rolled_back_history(
    two_stores: Stores, capsys: pytest.CaptureFixture[str]
) -> None:
    """``agentrt upgrade`` signs the checkpoints it moves: it must judge a run whose newest checkpoint
    came from another store, or whose head was dropped, blocked -- not launder it into this store."""
    import json

    from agentrt.cli import main as cli_main

    staging, production = two_stores
    copied, headless = rid("upgrade-copied", production), rid("upgrade-headless", production)
    _wait_at_question(staging, copied, A.Order(5, "staging"))
    for run_id in (copied, headless):
        _wait_at_question(production, run_id, A.Order(500, "production"))
    ((seq, blob),) = Raw(staging)(_NEWEST, (copied,))
    Raw(production)(_REPLACE, (bytes(blob), copied, seq))
    Raw(production)("UPDATE {runs} SET head = NULL WHERE run_id = ?", (headless,))

    assert cli_main(["upgrade", "--json", "--store", production]) in (0, 1)
    verdicts = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    assert verdicts[copied]["verdict"] == "blocked" and "sealed for store" in verdicts[copied]["reason"]
    assert verdicts[headless]["verdict"] == "blocked" and "no signed head" in verdicts[headless]["reason"]
    assert not verdicts[copied]["applied"] and not verdicts[headless]["applied"]
