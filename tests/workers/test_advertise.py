"""In one process: when a worker writes its registry row, and what the row says.

At start, on change and once per lease -- never once per durable step; removed on a clean close;
a store without a registry, or one failing to write it, costs the worker nothing.
"""

from __future__ import annotations

import asyncio
import logging
import sys

import tests.runtime.agents as A
from agentrt import Runtime
from agentrt.stores import MemoryStore, SqliteStore
from agentrt.stores.base import StoreError
from agentrt.stores.registry import requirement_key
from tests.workers.agents import mixed
from tests.workers.test_worker import until


def test_the_row_is_written_at_start_shows_what_was_judged_and_is_removed_on_close():
    store = MemoryStore()

    async def main():
        async with Runtime(store, lease_seconds=0.3, concurrency=3) as rt:
            (row,) = store.list_workers()
            assert (row.owner, row.concurrency, row.lacking) == (rt.owner, 3, ())
            assert row.python == f"{sys.version_info[0]}.{sys.version_info[1]}" and 2 in row.reads_formats
            assert "not readable" in rt.lacking_reason("nonsense")  # a requirement judged: it changed
            await until(lambda: store.list_workers()[0].lacking)
            (verdict,) = store.list_workers()[0].lacking
            assert verdict.key == requirement_key("nonsense") and "not readable" in verdict.reason
            run_id = await rt.start(mixed, {"i": 1})  # an agent loaded: it changed again
            await rt.wait(run_id, timeout=30)
            await until(
                lambda: [a.spec for a in store.list_workers()[0].agents] == ["tests.workers.agents:mixed"]
            )
            first = store.list_workers()[0].last_seen
            await until(lambda: store.list_workers()[0].last_seen > first)  # the heartbeat, once a lease
        assert store.list_workers() == []  # a clean stop: forgotten

    asyncio.run(main())


def test_a_durable_step_writes_no_registry_row(tmp_path):
    store = SqliteStore(tmp_path / "s.db")
    writes: list[str] = []
    store._conn.set_trace_callback(lambda sql: writes.append(sql) if "INTO workers" in sql else None)

    async def main():
        async with Runtime(store, lease_seconds=60) as rt:  # no heartbeat falls due during the run
            run_id = await rt.start(A.summer, {"n": 30})
            return await rt.wait(run_id, timeout=60), store.get_run(run_id).seq

    out, steps = asyncio.run(main())
    store._conn.set_trace_callback(None)
    store.close()
    assert out == A.Total(435) and steps >= 30 and len(writes) <= 2, (
        writes
    )  # at start, and once for the agent it loaded


class _NoRegistry(MemoryStore):
    capabilities = frozenset()  # a store written before the registry existed: it declares none


class _FailingRegistry(MemoryStore):
    def advertise_worker(self, info):
        raise StoreError("store memory: the registry is down")


def test_a_store_without_a_registry_or_failing_to_write_it_still_drives_runs(caplog):
    async def drive(store):
        async with Runtime(store, lease_seconds=0.2) as rt:
            run_id = await rt.start(mixed, {"i": 2})
            out = await rt.wait(run_id, timeout=30)
            await asyncio.sleep(0.5)  # a few heartbeats fail meanwhile
            return out

    assert asyncio.run(drive(_NoRegistry())) is not None
    with caplog.at_level(logging.WARNING, logger="agentrt.worker"):
        assert asyncio.run(drive(_FailingRegistry())) is not None
    failures = [r.getMessage() for r in caplog.records if "worker registry failed" in r.getMessage()]
    assert len(failures) == 1 and "the registry is down" in failures[0]  # once per streak
