"""The worker registry, one suite for every backend: memory, SQLite and a real PostgreSQL server.

A row per worker, upserted by its owner id, bounded in size, read back as it was written, seen
by every handle on the store, forgotten on request, pruned lazily once long gone; and the fleet
view built on it (live, gone, runs held, stranded runs).
"""

from __future__ import annotations

import time

import attrs
import pytest

from agentrt.stores import NewRun, StoreError
from agentrt.stores.base import make_owner
from agentrt.stores.fleet import fleet_object, read_fleet
from agentrt.stores.registry import (
    MAX_VERDICTS,
    PRUNE_AFTER_SECONDS,
    AgentCode,
    CodeVerdict,
    WorkerInfo,
    from_json,
    requirement_key,
    requirement_summary,
)

OLD = "agentrt-blob 2 python 3.12\napp:run 1111aaaa2222bbbb"
NEW = "agentrt-blob 2 python 3.12\napp:run 3333cccc4444dddd"


def info(owner=None, *, last_seen=None, carried=(), lacking=(), lease_seconds=10.0, **kw) -> WorkerInfo:
    now = time.time()
    return WorkerInfo(
        owner=owner or make_owner(),
        host="h",
        pid=123,
        started_at=kw.pop("started_at", now - 5),
        last_seen=now if last_seen is None else last_seen,
        version="agentrt 0.1.0",
        python="3.12",
        reads_formats=(1, 2),
        writes_format=2,
        lease_seconds=lease_seconds,
        concurrency=8,
        agents=(AgentCode("app:bot", "app:run 1111aaaa"),),
        carried=tuple(CodeVerdict(requirement_key(t), requirement_summary(t)) for t in carried),
        lacking=tuple(CodeVerdict(requirement_key(t), requirement_summary(t), r) for t, r in lacking),
        **kw,
    )


def test_a_row_is_read_back_as_written_and_replaced_by_its_owner(open_handle):
    store, other = open_handle(), open_handle()
    a = info("host/1/a", started_at=1.0, carried=[OLD])
    b = info("host/2/b", started_at=2.0, lacking=[(OLD, "code of app:run changed")])
    store.advertise_worker(a)
    store.advertise_worker(b)
    assert other.list_workers() == [a, b]  # another handle (another process) reads the same rows
    a2 = attrs.evolve(a, last_seen=a.last_seen + 1, carried=(), lacking=b.lacking)
    other.advertise_worker(a2)  # an upsert: one row per owner
    assert store.list_workers() == [a2, b]
    store.forget_worker("host/1/a")
    store.forget_worker("never/0/advertised")  # nothing to forget: no error
    assert other.list_workers() == [b]


def test_a_row_is_bounded_whatever_the_worker_has_judged(store):
    many = [f"agentrt-blob 2 python 3.12\napp:f{i} {i:032x}" for i in range(MAX_VERDICTS * 3)]
    big = info(carried=many, lacking=[(t, "x" * 10_000) for t in many])
    store.advertise_worker(big)
    (row,) = store.list_workers()
    assert len(row.carried) == len(row.lacking) == MAX_VERDICTS
    assert row.carried[-1].key == requirement_key(many[-1])  # the newest are kept
    assert all(len(v.reason) <= 300 for v in row.lacking)


def test_liveness_follows_the_lease_and_long_gone_rows_are_pruned(store):
    now = time.time()
    fresh = info("host/1/fresh", lease_seconds=10)
    stale = info("host/2/stale", last_seen=now - 31, lease_seconds=10)  # 3 leases and a second
    ancient = info("host/3/ancient", last_seen=now - PRUNE_AFTER_SECONDS - 60)
    assert fresh.live(now) and not stale.live(now)
    store.advertise_worker(ancient)
    store.advertise_worker(stale)
    assert {w.owner for w in store.list_workers()} == {"host/2/stale"}  # pruned by the next write
    store.advertise_worker(fresh)
    assert {w.owner for w in store.list_workers()} == {"host/1/fresh", "host/2/stale"}


def test_the_fleet_view_names_held_and_stranded_runs(store):
    old_worker, new_worker = info("host/1/old", carried=[OLD]), info("host/2/new", carried=[NEW])
    store.advertise_worker(attrs.evolve(new_worker, lacking=info(lacking=[(OLD, "changed")]).lacking))
    store.advertise_worker(old_worker)
    for run_id, code in (("r-old", OLD), ("r-new", NEW), ("r-unmet", "agentrt-blob 2 python 3.12\nx:y 00")):
        store.create_run(NewRun(run_id, "app:bot", {}, owner="setup", ttl_seconds=30))
        epoch = store.get_run(run_id).epoch
        store.save_checkpoint(run_id, "setup", 1, b"cp", {"kind": "ask"}, [], epoch=epoch, code_required=code)
        store.set_waiting(run_id, "setup", "reply", time.time(), [], epoch=epoch)
        store.release_lease(run_id, "setup")
    store.claim_runnable("host/2/new", 30, 5, lacking=[OLD])  # the new worker takes r-new, r-unmet
    fleet = read_fleet(store)
    assert [w.owner for w in fleet.live] == ["host/1/old", "host/2/new"]  # oldest start first
    assert sorted(fleet.holding["host/2/new"]) == ["r-new", "r-unmet"]
    assert fleet.stranded == ()  # the old worker carries r-old's code

    store.forget_worker("host/1/old")  # the old worker stopped: only the new one is live
    obj = fleet_object(read_fleet(store))
    assert [(w["owner"], w["live"]) for w in obj["workers"]] == [("host/2/new", True)]
    assert [s["run_id"] for s in obj["stranded"]] == ["r-old"]  # r-unmet: no live worker judged it
    (stranded,) = obj["stranded"]
    assert stranded["code_required"] == requirement_key(OLD)
    assert stranded["reasons"] == [{"owner": "host/2/new", "reason": "changed"}]
    assert stranded["summary"] == "python 3.12, blob 2: app:run 1111aaaa"


def test_a_stale_worker_is_gone_and_counts_for_nothing(store):
    store.advertise_worker(info("host/9/stale", last_seen=time.time() - 120, lease_seconds=1, carried=[OLD]))
    store.advertise_worker(info("host/1/new", lacking=[(OLD, "changed")]))
    store.create_run(NewRun("r", "app:bot", {}, owner="setup", ttl_seconds=30))
    store.save_checkpoint("r", "setup", 1, b"cp", {}, [], epoch=1, code_required=OLD)
    store.release_lease("r", "setup")
    obj = fleet_object(read_fleet(store))
    listed = [(w["owner"], w["live"]) for w in obj["workers"]]
    assert listed == [("host/1/new", True), ("host/9/stale", False)]
    assert [s["run_id"] for s in obj["stranded"]] == ["r"]


def test_a_read_only_handle_lists_workers_and_refuses_to_advertise(backend, location, open_handle):
    if backend == "memory":
        pytest.skip("a MemoryStore has no read-only handle")
    from agentrt.stores import open_store

    open_handle().advertise_worker(info("host/1/a"))
    reader = open_store(location, read_only=True)
    try:
        assert [w.owner for w in reader.list_workers()] == ["host/1/a"]
        with pytest.raises(StoreError):
            reader.advertise_worker(info("host/2/b"))
    finally:
        reader.close()


@pytest.mark.parametrize(
    "text",
    [
        '{"agents": [[1]], "carried": [[1, 2, 3, 4, 5]], "lacking": 7}',
        '{"reads_formats": "abc", "writes_format": [], "lease_seconds": "x", "concurrency": 1e400}',
        "[1, 2]",
        "{not json",
    ],
)
def test_a_damaged_or_forged_row_reads_as_defaults_not_an_error(text):
    row = from_json("host/1/x", "h", "not a pid", "1.5", 2.5, text)
    assert (row.owner, row.pid, row.started_at, row.last_seen) == ("host/1/x", 0, 1.5, 2.5)
    assert (row.agents, row.carried, row.lacking, row.reads_formats) == ((), (), (), ())
    assert (row.writes_format, row.lease_seconds) == (0, 10.0)
    assert row.damaged is not None  # and says so: agentrt workers names the field (issue 25 item 4)
