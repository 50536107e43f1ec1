"""Issue 25 (leftovers of items 1 and 4): the runtime's own reads of a damaged row, and tenant rows
an older agentrt left for ids no run has (a squatted id), on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentrt import Runtime
from agentrt.exceptions import RowDamaged
from agentrt.stores import open_store
from agentrt.stores.base import NewRun
from tests.security import replay_agents as A
from tests.security.test_replay_rollback import KINDS, Raw, _drive, _wait_at_question
from tests.security.test_store_identity import _downgrade


@pytest.fixture(params=KINDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'agentrt.db'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.mark.parametrize(("column", "value"), [("pending", "{bad"), ("usage", '{"model_calls": "many"}')])
def test_a_worker_blocks_a_run_whose_row_is_damaged_and_goes_on_with_the_others(
    location: str, column: str, value: str
) -> None:
    """The run was answered while no process drove it (a worker is due to take it up); then its row
    was damaged.  The worker that claims it blocks it with a finding naming the column, and drives
    another run to its end meanwhile."""
    run_id = f"damaged-{column}"
    _wait_at_question(location, run_id, A.Order(3))

    async def client(rt: Runtime, store: Any) -> None:
        rt.worker = False
        await rt.reply(run_id, "yes")

    _drive(location, client)
    Raw(location)(f"UPDATE {{runs}} SET {column} = ? WHERE run_id = ?", (value, run_id))

    async def worker() -> tuple[Any, Any]:
        store = open_store(location)
        try:
            async with Runtime(store) as rt:  # claims every runnable run of the store
                healthy = await rt.start(A.pay_twice, A.Order(1), run_id=f"healthy-{column}")
                for _ in range(400):
                    if store.get_run(run_id).status == "blocked" and rt.status(healthy).finished:
                        break
                    await asyncio.sleep(0.025)
                return store.get_run(run_id), rt.status(healthy)
        finally:
            store.close()

    rec, healthy = asyncio.run(worker())
    assert rec.status == "blocked", rec
    assert f"column {column}" in rec.blocked["message"], rec.blocked
    assert healthy.status == "completed"
    assert not [c for c in A.CHARGES if c[0] == run_id]


def test_a_reply_to_a_run_whose_pending_request_is_damaged_is_refused_naming_the_column(
    location: str,
) -> None:
    run_id = "damaged-reply"
    _wait_at_question(location, run_id, A.Order(3))
    Raw(location)("UPDATE {runs} SET pending = ? WHERE run_id = ?", ("[1,", run_id))

    async def client(rt: Runtime, store: Any) -> BaseException | None:
        rt.worker = False
        try:
            await rt.reply(run_id, "yes")
        except RowDamaged as exc:
            return exc
        return None

    error = _drive(location, client)
    assert isinstance(error, RowDamaged) and error.column == "pending" and error.run_id == run_id
    assert "column pending" in str(error) and "nothing was written" in str(error)
    store = open_store(location)  # a client writing the store itself meets the store's own check
    try:
        with pytest.raises(RowDamaged, match="damaged pending column"):
            store.put_result(run_id, 1, 0, True, b"not read: the row is checked first")
    finally:
        store.close()
    assert not Raw(location)("SELECT idx FROM {results} WHERE run_id = ?", (run_id,))


def test_a_tenant_row_of_no_run_claims_nothing(location: str) -> None:
    """An older agentrt wrote a request's tenant before validating the run and kept it when the run
    was refused: that row must neither list nor own the id once a run takes it."""
    store = open_store(location)
    try:
        store.create_run(NewRun("real-a", "tests.x:agent", {}, status="queued", tenant="A"))
        Raw(location)("INSERT INTO {tenants} (run_id, tenant) VALUES (?, ?)", ("nightly-report", "A"))
        assert store.tenant_runs("A") == {"real-a"}  # the squatted id is not listed
        assert store.get_tenant("nightly-report") is None
        store.create_run(NewRun("nightly-report", "tests.x:agent", {}, status="queued"))  # the operator's
        assert store.get_tenant("nightly-report") is None
        assert store.tenant_runs("A") == {"real-a"}
    finally:
        store.close()


def test_migration_drops_the_tenant_rows_of_no_run(location: str) -> None:
    _wait_at_question(location, "kept", A.Order(1))
    store = open_store(location)
    try:
        store.create_run(NewRun("owned", "tests.x:agent", {}, status="queued", tenant="A"))
    finally:
        store.close()
    _downgrade(location)
    Raw(location)("INSERT INTO {tenants} (run_id, tenant) VALUES (?, ?)", ("squatted", "A"))
    open_store(location).close()  # migrates
    rows = Raw(location)("SELECT run_id, tenant FROM {tenants} ORDER BY run_id")
    assert [tuple(r) for r in rows] == [("owned", "A")]
