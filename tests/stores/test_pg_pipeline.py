"""The PostgreSQL store's pipeline of one event loop's statements (agentrt.stores._pg_pipeline)."""

from __future__ import annotations

import asyncio
import time

import psycopg
import pytest

from agentrt.stores import NewRun, open_store
from agentrt.stores._pg_pipeline import StatementPipeline
from agentrt.stores.base import Capability, LeaseLost, StoreError

pytestmark = pytest.mark.postgres


@pytest.fixture
def table(pg_url):
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)")
        conn.execute("INSERT INTO t SELECT g, 0 FROM generate_series(0, 9) g")
    return pg_url


def pipeline_on(url, connections):
    async def connect():
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
        connections.append(conn)
        return conn

    return StatementPipeline(connect, lambda exc: isinstance(exc, psycopg.OperationalError))


def test_one_turns_statements_go_together_and_each_caller_gets_its_row(table):
    connections = []

    async def main():
        pipeline = pipeline_on(table, connections)
        try:
            rows = await asyncio.gather(
                *(
                    pipeline.fetchone("UPDATE t SET v = v + %s WHERE id = %s RETURNING id, v", (i, i))
                    for i in range(10)
                )
            )
            none = await pipeline.fetchone("UPDATE t SET v = v WHERE id = 99 RETURNING id", ())
            nothing = await pipeline.fetchone("UPDATE t SET v = v WHERE id = 0", ())
            return rows, none, nothing
        finally:
            await pipeline.aclose()

    rows, none, nothing = asyncio.run(main())
    assert rows == [(i, i) for i in range(10)]
    assert none is None and nothing is None
    assert len(connections) == 1 and connections[0].closed


def test_a_failing_statement_fails_alone_and_the_others_of_its_batch_land(table):
    async def main():
        pipeline = pipeline_on(table, [])
        try:
            return await asyncio.gather(
                pipeline.fetchone("UPDATE t SET v = 1 WHERE id = 1 RETURNING v", ()),
                pipeline.fetchone("INSERT INTO t VALUES (2, 0)", ()),  # the key refuses it
                pipeline.fetchone("UPDATE t SET v = 3 WHERE id = 3 RETURNING v", ()),
                return_exceptions=True,
            )
        finally:
            await pipeline.aclose()

    first, refused, third = asyncio.run(main())
    assert first == (1,) and third == (3,)
    assert isinstance(refused, psycopg.errors.UniqueViolation)
    with psycopg.connect(table) as conn:
        assert conn.execute("SELECT id, v FROM t WHERE id IN (1, 2, 3) ORDER BY id").fetchall() == [
            (1, 1),
            (2, 0),
            (3, 3),
        ]


def test_a_connection_the_server_dropped_is_replaced_and_the_batch_made_once(table):
    connections = []

    async def main():
        pipeline = pipeline_on(table, connections)
        try:
            await pipeline.fetchone("UPDATE t SET v = v + 1 WHERE id = 0", ())
            with psycopg.connect(table, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (connections[0].info.backend_pid,))
            return await asyncio.gather(
                *(
                    pipeline.fetchone("UPDATE t SET v = v + 1 WHERE id = %s RETURNING v", (0,))
                    for _ in range(3)
                )
            )
        finally:
            await pipeline.aclose()

    rows = asyncio.run(main())
    assert sorted(rows) == [(2,), (3,), (4,)]  # each made once, on the second connection
    assert len(connections) == 2


def test_a_caller_cancelled_while_its_statement_is_on_its_way_waits_for_it(table):
    async def main():
        pipeline = pipeline_on(table, [])
        try:
            call = asyncio.ensure_future(pipeline.fetchone("SELECT pg_sleep(0.2)", ()))
            await asyncio.sleep(0.05)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            return pipeline._sender is None  # the statement ended before the caller saw the cancel
        finally:
            await pipeline.aclose()

    assert asyncio.run(main())


def test_a_pipelined_checkpoint_is_fenced_like_any_other(pg_url):
    """The store's pipelined checkpoint: written for the lease holder, refused for a stale epoch
    (LeaseLost, nothing written), and a result journaled twice is the store's own error."""
    store = open_store(pg_url)
    try:
        assert Capability.PIPELINED in store.capabilities
        store.create_run(NewRun("r", "m:a", {}, owner="w", ttl_seconds=60))
        epoch = store.get_run("r").epoch

        async def main():
            pipeline = store.open_pipeline()
            try:
                await store.save_checkpoint_pipelined(
                    pipeline, "r", "w", 1, b"blob-1", None, [], epoch=epoch, journal=[(0, 0, True, b"x")]
                )
                with pytest.raises(LeaseLost):
                    await store.save_checkpoint_pipelined(
                        pipeline, "r", "w", 2, b"blob-2", None, [], epoch=epoch + 1
                    )
                with pytest.raises(StoreError, match="journal"):
                    await store.save_checkpoint_pipelined(
                        pipeline, "r", "w", 2, b"blob-2", None, [], epoch=epoch, journal=[(0, 0, True, b"x")]
                    )
            finally:
                await pipeline.aclose()

        asyncio.run(main())
        assert store.latest_checkpoint("r")[0] == 1
        assert store.get_results("r", 0) == {0: (True, b"x")}
    finally:
        store.close()


def test_without_pipeline_mode_the_statements_are_made_one_after_another(table):
    """libpq older than 14 has no pipeline mode (psycopg-binary bundles a newer one)."""

    async def main():
        pipeline = pipeline_on(table, [])
        pipeline._together_ok = False
        try:
            return await asyncio.gather(
                pipeline.fetchone("UPDATE t SET v = 5 WHERE id = 5 RETURNING v", ()),
                pipeline.fetchone("INSERT INTO t VALUES (6, 0)", ()),
                pipeline.fetchone("UPDATE t SET v = 7 WHERE id = 7 RETURNING v", ()),
                return_exceptions=True,
            )
        finally:
            await pipeline.aclose()

    five, refused, seven = asyncio.run(main())
    assert (five, seven) == ((5,), (7,)) and isinstance(refused, psycopg.errors.UniqueViolation)


def test_a_server_that_cannot_be_reached_fails_each_statement_with_the_stores_error(table):
    from agentrt.stores.base import StoreError

    async def main():
        async def connect():
            raise StoreError("cannot connect to the PostgreSQL store (test)")

        pipeline = StatementPipeline(connect, lambda exc: False)
        try:
            return await asyncio.gather(
                *(pipeline.fetchone("SELECT 1", ()) for _ in range(2)), return_exceptions=True
            )
        finally:
            await pipeline.aclose()

    assert [type(r) for r in asyncio.run(main())] == [StoreError, StoreError]


def test_a_batch_is_sent_in_the_order_of_its_keys_the_order_a_renewal_locks_runs_in(table):
    """A batch locks its runs' rows in the order of their run ids, as a lease renewal does (below):
    two transactions that lock rows in one order cannot deadlock."""
    with psycopg.connect(table, autocommit=True) as conn:
        conn.execute("CREATE SEQUENCE made")

    async def main():
        pipeline = pipeline_on(table, [])
        try:
            return await asyncio.gather(
                *(
                    pipeline.fetchone("SELECT %s::text, nextval('made')", (k,), k)
                    for k in ("r-c", "r-a", "R-b")
                )
            )
        finally:
            await pipeline.aclose()

    made = dict(asyncio.run(main()))
    assert sorted(made, key=made.get) == sorted(made) == ["R-b", "r-a", "r-c"]  # code points: "R" < "r"


def test_a_lease_renewal_locks_its_runs_in_the_order_of_their_ids(pg_url):
    """Made while another transaction holds the last of the runs (by code point): the renewal has
    locked the others already when it waits for it.  (In the order they were made, "r-c" first, it
    would wait holding none.)"""
    import threading

    store = open_store(pg_url)
    try:
        for run_id in ("r-c", "r-a", "R-b"):
            store.create_run(NewRun(run_id, "m:a", {}, owner="w", ttl_seconds=60))
        with psycopg.connect(pg_url) as holder, psycopg.connect(pg_url, autocommit=True) as probe:
            holder.execute("SELECT 1 FROM agentrt_runs WHERE run_id = 'r-c' FOR UPDATE")
            renewal = threading.Thread(target=store.renew_leases, args=("w", ["r-c", "r-a", "R-b"], 60))
            renewal.start()
            for _ in range(200):  # until the renewal waits for the held row
                waiting = probe.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()[0]
                if waiting:
                    break
                time.sleep(0.01)
            free = [run_id for run_id in ("R-b", "r-a") if _lockable(probe, run_id)]
            holder.rollback()
            renewal.join(10)
        assert waiting and free == []
    finally:
        store.close()


def _lockable(conn, run_id):
    try:
        with conn.transaction():
            conn.execute("SELECT 1 FROM agentrt_runs WHERE run_id = %s FOR UPDATE NOWAIT", (run_id,))
        return True
    except psycopg.errors.LockNotAvailable:
        return False


def test_a_new_event_loop_gets_a_new_pipeline_and_the_old_connection_is_closed(pg_url):
    from agentrt._runtime.storeio import StoreIO

    store = open_store(pg_url)
    io = StoreIO(store)
    try:
        for run_id in ("one", "two"):
            store.create_run(NewRun(run_id, "m:a", {}, owner="w", ttl_seconds=60))
        asyncio.run(io.save_checkpoint("one", "w", 1, b"blob", None, [], epoch=1))
        first = io._pipeline
        asyncio.run(io.save_checkpoint("two", "w", 1, b"blob", None, [], epoch=1))
        assert io._pipeline is not first and first._conn is None
        asyncio.run(io.aclose())
        assert store.latest_checkpoint("one")[0] == store.latest_checkpoint("two")[0] == 1
    finally:
        io.close()
        store.close()


def test_statements_made_one_by_one_on_a_server_gone_fail_each_rather_than_hang(table):
    """Made one after another (no pipeline mode, or a batch that failed as a whole) with no
    connection to be had: every caller hears the store's error, none waits for ever."""
    from agentrt.stores.base import StoreError

    async def main():
        async def connect():
            raise StoreError("cannot connect to the PostgreSQL store (test)")

        pipeline = StatementPipeline(connect, lambda exc: False)
        pipeline._together_ok = False
        try:
            return await asyncio.wait_for(
                asyncio.gather(
                    *(pipeline.fetchone("SELECT 1", ()) for _ in range(2)), return_exceptions=True
                ),
                10,
            )
        finally:
            await pipeline.aclose()

    assert [type(r) for r in asyncio.run(main())] == [StoreError, StoreError]
