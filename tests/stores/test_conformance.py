"""The Store protocol, one suite for every backend: memory, SQLite and a real PostgreSQL server.

Contiguous checkpoints, claims (runnable sets, priorities, exactly one winner among racing
threads and processes), fencing of stale writers by lease epoch, wake-ups of parked runs,
cancel requests, isolation between runs, fork, and schema migrations.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time

import pytest

from agentrt import LeaseHeld
from agentrt.stores import NewRun, StoreError, open_store
from agentrt.stores.base import LeaseLost, make_owner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def queued(store, n, prefix="q", **kw):
    for i in range(n):
        store.create_run(NewRun(f"{prefix}{i:04d}", "m:a", {"i": i}, status="queued", **kw))


def drive_to_waiting(store, run_id, pending, waiting_on="child", wake_at=None):
    owner = make_owner()
    rec = store.acquire_lease(run_id, owner, 30)
    store.save_checkpoint(run_id, owner, 1, b"cp1", pending, [], epoch=rec.epoch)
    store.set_waiting(run_id, owner, waiting_on, wake_at, [], epoch=rec.epoch)
    store.release_lease(run_id, owner)
    return store.get_run(run_id)


def test_contiguous_checkpoints_and_retention(open_handle):
    store = open_handle()
    store.retention = 3
    owner = make_owner()
    store.create_run(NewRun("r", "m:a", {}, owner=owner, ttl_seconds=30))
    rec = store.get_run("r")
    assert rec.epoch == 1 and rec.lease_owner == owner and not rec.interrupted
    for seq in range(1, 7):
        store.put_result("r", seq - 1, 0, True, b"res%d" % seq, owner=owner, epoch=rec.epoch)
        store.save_checkpoint("r", owner, seq, b"cp%d" % seq, {"kind": "tool"}, [(seq, 0, "log", "info", {})])
    assert [c.seq for c in store.list_checkpoints("r")] == [4, 5, 6]
    assert store.latest_checkpoint("r") == (6, b"cp6")
    assert store.get_results("r", 1) == {}  # pruned with its checkpoint
    assert store.get_results("r", 5) == {0: (True, b"res6")}
    assert [e.seq for e in store.list_events("r")] == [1, 2, 3, 4, 5, 6]


def test_runnable_sets_and_priorities(store):
    owner, other = make_owner(), make_owner()
    queued(store, 3)
    store.create_run(NewRun("urgent", "m:a", {}, status="queued", priority=5))
    store.create_run(NewRun("held", "m:a", {}, owner=other, ttl_seconds=60))
    store.create_run(NewRun("expired", "m:a", {}, owner=other, ttl_seconds=0.01))
    store.create_run(NewRun("parked", "m:a", {}))
    drive_to_waiting(store, "parked", {"kind": "ask"}, "reply")
    store.create_run(NewRun("timer", "m:a", {}))
    drive_to_waiting(store, "timer", {"kind": "sleep"}, "timer", wake_at=time.time() - 1)
    store.create_run(NewRun("later", "m:a", {}))
    drive_to_waiting(store, "later", {"kind": "sleep"}, "timer", wake_at=time.time() + 3600)
    time.sleep(0.05)
    assert store.get_run("expired").interrupted and not store.get_run("held").interrupted
    first = store.claim_runnable(owner, 30, 1)
    assert [r.run_id for r in first] == ["urgent"]
    rest = store.claim_runnable(owner, 30, 100)
    assert sorted(r.run_id for r in rest) == ["expired", "q0000", "q0001", "q0002", "timer"]
    assert all(r.lease_owner == owner for r in first + rest)
    assert store.get_run("expired").epoch == 2  # created at 1, claimed: 2
    assert store.claim_runnable(make_owner(), 30, 100) == []  # each run is claimed once
    assert store.next_wake_at() is not None


def test_agents_filter_and_limit(store):
    queued(store, 2)
    store.create_run(NewRun("other", "m:b", {}, status="queued"))
    owner = make_owner()
    assert store.claim_runnable(owner, 30, 0) == []
    assert [r.run_id for r in store.claim_runnable(owner, 30, 10, agents=["m:b"])] == ["other"]
    assert store.claim_runnable(owner, 30, 10, agents=[]) == []
    assert len(store.claim_runnable(owner, 30, 10, agents=["m:a", "m:b"])) == 2


def test_dead_owner_is_claimed_at_once(store):
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = f"{make_owner().split('/')[0]}/{int(proc.stdout)}/deadbeef"
    store.create_run(NewRun("r", "m:a", {}, owner=dead, ttl_seconds=3600))
    rec = store.get_run("r")
    assert rec.interrupted
    claimed = store.claim_runnable(make_owner(), 30, 10)
    assert [r.run_id for r in claimed] == ["r"] and claimed[0].epoch == 2


def test_fencing_refuses_every_stale_write(open_handle):
    a_store, b_store = open_handle(), open_handle()
    a, b = make_owner(), make_owner()
    a_store.create_run(NewRun("r", "m:a", {}, status="queued"))
    (mine,) = a_store.claim_runnable(a, 0.05, 1)
    a_store.save_checkpoint("r", a, 1, b"a1", {"kind": "tool"}, [], epoch=mine.epoch)
    time.sleep(0.1)  # A is "paused" past its lease
    (theirs,) = b_store.claim_runnable(b, 30, 1)
    assert theirs.epoch == mine.epoch + 1
    stale = [
        lambda: a_store.save_checkpoint("r", a, 2, b"a2", {"kind": "tool"}, [], epoch=mine.epoch),
        lambda: a_store.put_result("r", 1, 0, True, b"a-result", owner=a, epoch=mine.epoch),
        lambda: a_store.add_events("r", [(1, 5, "log", None, {})], owner=a, epoch=mine.epoch),
        lambda: a_store.set_waiting("r", a, "timer", None, [], epoch=mine.epoch),
        lambda: a_store.finish_run("r", a, "completed", output=1, epoch=mine.epoch),
    ]
    for write in stale:
        with pytest.raises(LeaseLost, match="epoch"):
            write()
    rec = b_store.get_run("r")
    assert rec.status == "running" and rec.seq == 1 and rec.lease_owner == b
    assert b_store.get_results("r", 1) == {} and b_store.list_events("r") == []
    assert [c.seq for c in b_store.list_checkpoints("r")] == [1]
    # B hands the run back; A claims it again: A's old epoch is still refused (the same owner!)
    b_store.put_result("r", 1, 0, True, b"b-result", owner=b, epoch=theirs.epoch)
    b_store.release_lease("r", b)
    (again,) = a_store.claim_runnable(a, 30, 1)
    assert again.epoch == theirs.epoch + 1
    with pytest.raises(LeaseLost):
        a_store.save_checkpoint("r", a, 2, b"a2", {"kind": "tool"}, [], epoch=mine.epoch)
    a_store.save_checkpoint("r", a, 2, b"a2", {"kind": "tool"}, [], epoch=again.epoch)
    assert a_store.finish_run("r", a, "completed", output={"ok": 1}, epoch=again.epoch)
    assert a_store.get_results("r", 1) == {0: (True, b"b-result")}
    assert a_store.get_run("r").status == "completed"


def test_acquire_keeps_the_epoch_for_its_holder_and_refuses_a_live_lease(store):
    a, b = make_owner(), make_owner()
    store.create_run(NewRun("r", "m:a", {}))
    first = store.acquire_lease("r", a, 30)
    assert store.acquire_lease("r", a, 30).epoch == first.epoch  # renewal by the holder
    with pytest.raises(LeaseHeld):
        store.acquire_lease("r", b, 30)
    assert store.renew_leases(a, ["r", "nope"], 30) == ["nope"]
    assert store.renew_leases(b, ["r"], 30) == ["r"]
    store.release_lease("r", a)
    assert store.acquire_lease("r", b, 30).epoch == first.epoch + 1


def test_racing_claimers_threads_exactly_one_winner(open_handle):
    store = open_handle()
    queued(store, 120)
    handles = [open_handle() for _ in range(6)]
    won: list[list[str]] = [[] for _ in handles]
    errors: list[BaseException] = []
    start = threading.Barrier(len(handles))

    def claimer(i):
        owner = make_owner()
        try:
            start.wait()
            while True:
                got = handles[i].claim_runnable(owner, 60, 3)
                if not got:
                    return
                won[i].extend(r.run_id for r in got)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(len(handles))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    everything = [run_id for w in won for run_id in w]
    assert len(everything) == len(set(everything)) == 120


_CLAIMER = r"""
import json, sys, time
from agentrt.stores import open_store
from agentrt.stores.base import make_owner
store = open_store(sys.argv[1]); owner = make_owner(); got = []
while time.time() < float(sys.argv[2]):
    time.sleep(0.001)
while True:
    batch = store.claim_runnable(owner, 60, 2)
    if not batch:
        break
    got += [(r.run_id, r.epoch) for r in batch]
print(json.dumps(got), flush=True)
sys.stdin.read()  # stay alive until every claimer is done: a dead owner's runs are claimable again
store.close()
"""


def test_racing_claimers_processes_exactly_one_winner(backend, location, open_handle):
    if backend == "memory":
        pytest.skip("a MemoryStore lives in one process")
    store = open_handle()
    queued(store, 80)
    go = time.time() + 1.5
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CLAIMER, location, str(go)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "AGENTRT_STORE_TIMEOUT": "30"},
        )
        for _ in range(4)
    ]
    results = [json.loads(p.stdout.readline()) for p in procs]  # all alive while any still claims
    for p in procs:
        _out, err = p.communicate("", timeout=120)
        assert p.returncode == 0, err
    everything = [run_id for got in results for run_id, _epoch in got]
    assert len(everything) == len(set(everything)) == 80
    assert all(epoch == 1 for got in results for _run_id, epoch in got)


def test_replies_and_children_wake_a_parked_run(store):
    store.create_run(NewRun("ask", "m:a", {}))
    drive_to_waiting(store, "ask", {"kind": "ask"}, "reply")
    owner = make_owner()
    assert store.claim_runnable(owner, 30, 10) == []
    assert store.put_result("ask", 1, 0, True, b"answer")  # a reply: no epoch
    assert not store.put_result("ask", 1, 0, True, b"again")  # first write wins
    assert [r.run_id for r in store.claim_runnable(owner, 30, 10)] == ["ask"]

    gather = {"kind": "gather", "settled": True, "requests": [{"kind": "agent"}, {"kind": "agent"}]}
    store.create_run(NewRun("g", "m:a", {}))
    drive_to_waiting(store, "g", gather)
    store.put_result("g", 1, 0, False, b"child 0 failed")
    assert store.claim_runnable(owner, 30, 10) == []  # settled gather: waits for both
    store.put_result("g", 1, 1, True, b"child 1")
    assert [r.run_id for r in store.claim_runnable(owner, 30, 10)] == ["g"]

    store.create_run(NewRun("late", "m:a", {}))
    store.put_result("late", 1, 0, True, b"arrived while the driver still ran")
    drive_to_waiting(store, "late", {"kind": "agent"})
    assert store.get_run("late").wake_at is not None  # parking saw the answer: woken at once
    assert [r.run_id for r in store.claim_runnable(owner, 30, 10)] == ["late"]


def test_cancel_requests_reach_descendants(store):
    store.create_run(NewRun("p", "m:a", {}))
    drive_to_waiting(store, "p", {"kind": "agent"})
    store.create_run(NewRun("p.1", "m:a", {}, parent_id="p", parent_seq=1, status="queued"))
    store.create_run(NewRun("p.1.1", "m:a", {}, parent_id="p.1", parent_seq=1, status="queued"))
    store.create_run(NewRun("done", "m:a", {}, parent_id="p", parent_seq=1))
    owner = make_owner()
    store.acquire_lease("done", owner, 30)
    store.finish_run("done", owner, "completed", output=1)
    assert sorted(store.request_cancel("p")) == ["p", "p.1", "p.1.1"]
    assert store.get_run("p.1").status == "cancelled" and store.get_run("p.1.1").status == "cancelled"
    parent = store.get_run("p")
    assert parent.cancel_requested and parent.status == "waiting" and parent.wake_at is not None
    assert store.get_run("done").status == "completed" and not store.get_run("done").cancel_requested
    (claimed,) = store.claim_runnable(owner, 30, 10)
    assert claimed.run_id == "p" and claimed.cancel_requested
    assert store.finish_run("p", owner, "cancelled", epoch=claimed.epoch)
    assert store.get_run("p").finished


def test_runs_are_isolated(store):
    owner = make_owner()
    for run_id in ("a", "b"):
        store.create_run(NewRun(run_id, "m:a", {"id": run_id}, owner=owner, ttl_seconds=30))
    store.save_checkpoint("a", owner, 1, b"A1", {"kind": "tool"}, [(1, 0, "log", None, {"run": "a"})])
    store.put_result("a", 1, 0, True, b"Ares", owner=owner)
    assert store.latest_checkpoint("b") is None and store.get_results("b", 1) == {}
    assert store.list_events("b") == [] and store.get_run("b").seq == 0
    store.finish_run("a", owner, "completed", output={"a": 1})
    assert store.get_run("b").status == "running" and store.get_run("b").output is None


def test_fork_copies_a_checkpoint_into_a_new_run(store):
    """A real run of tests.runtime.agents:summer, forked at its first checkpoint, ends the same way."""
    from agentrt import Runtime
    from agentrt.inspection import fork_run
    from tests.runtime.agents import summer

    async def main():
        async with Runtime(store=store) as rt:
            run_id = await rt.start(summer, {"n": 3})
            first = await rt.wait(run_id, timeout=60)
            result = fork_run(store, run_id, 1, "copy")
            assert result.run_id == "copy" and store.get_run("copy").lease_owner is None
            assert store.latest_checkpoint("copy")[0] == 1 and store.get_run(run_id).status == "completed"
            await rt.resume("copy")
            return first, await rt.wait("copy", timeout=60)

    first, forked = asyncio.run(main())
    assert forked == first


def test_wait_for_work_wakes_on_another_handles_write(open_handle):
    waiter, writer = open_handle(), open_handle()
    assert waiter.wait_for_work(0.01) in (True, False)  # a first call may just start listening
    woke = []
    t = threading.Thread(target=lambda: woke.append(waiter.wait_for_work(20)))
    t.start()
    time.sleep(0.3)
    writer.create_run(NewRun("new", "m:a", {}, status="queued"))
    t.join(30)
    assert woke == [True]


def test_open_store_urls(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTRT_BLOB_KEY", raising=False)
    monkeypatch.delenv("AGENTRT_BLOB_KEY_FILE", raising=False)
    assert type(open_store("memory:")).__name__ == "MemoryStore"
    store = open_store(f"sqlite:///{tmp_path}/x.db")
    assert type(store).__name__ == "SqliteStore"
    store.close()
    with pytest.raises(StoreError, match="agentrt keygen"):
        open_store("postgresql://nobody@127.0.0.1:1/db")
    monkeypatch.setenv("AGENTRT_BLOB_KEY_FILE", str(tmp_path / "missing.key"))
    with pytest.raises(StoreError, match="cannot read the blob key file"):
        open_store("postgresql://nobody@127.0.0.1:1/db")


def test_migrations(backend, location, open_handle):
    """An older schema is migrated in place (its runs kept, then claimable); a newer one is refused."""
    from agentrt.stores import StoreSchemaTooNew

    if backend == "memory":
        pytest.skip("a MemoryStore has no schema")
    if backend == "sqlite":
        import sqlite3

        from agentrt.stores import sqlite as sqlite_store

        conn = sqlite3.connect(location, isolation_level=None)
        for script in sqlite_store.MIGRATIONS[:3]:
            for statement in sqlite_store._statements(script):
                conn.execute(statement)
        conn.execute(
            "INSERT INTO runs (run_id, agent, status, input, created_at, updated_at, "
            "lease_owner, lease_expires) "
            "VALUES ('old', 'm:a', 'running', '{}', 1, 1, 'gone/1/x', 2)"
        )
        conn.execute("PRAGMA user_version=3")
        conn.close()
        store = open_handle()
        rec = store.get_run("old")
        assert rec.epoch == 0 and rec.priority == 0 and rec.interrupted
        assert [r.run_id for r in store.claim_runnable(make_owner(), 30, 5)] == ["old"]
        store.close()
        conn = sqlite3.connect(location)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == sqlite_store.SCHEMA_VERSION
        assert conn.execute("SELECT code_required FROM runs WHERE run_id = 'old'").fetchone() == (None,)
        assert conn.execute("SELECT count(*) FROM workers").fetchone() == (0,)  # schema 9: the registry
        assert conn.execute("SELECT blocked FROM runs WHERE run_id = 'old'").fetchone() == (None,)  # 10
        conn.execute(f"PRAGMA user_version={sqlite_store.SCHEMA_VERSION + 1}")
        conn.commit()
        conn.close()
    else:
        import psycopg

        from agentrt.stores import postgres

        handles = []
        threads = [threading.Thread(target=lambda: handles.append(open_handle())) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(handles) == 3 and all(h.schema_version() == postgres.SCHEMA_VERSION for h in handles)
        _postgres_upgrades_in_place(location, open_handle)
        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("UPDATE agentrt_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreSchemaTooNew, match="newer agentrt"):
        open_handle()


def _postgres_upgrades_in_place(location, open_handle):
    """A store of schema 3 (before code_required): its runs are kept and claimable after the step."""
    import psycopg

    from agentrt.stores import postgres

    with psycopg.connect(location, autocommit=True) as conn:
        tables = [
            "runs",
            "checkpoints",
            "results",
            "events",
            "stream",
            "tenants",
            "replaced_checkpoints",
            "workers",
            "meta",
        ]
        conn.execute("DROP TABLE " + ", ".join(f"agentrt_{t}" for t in tables))
        conn.execute("CREATE TABLE agentrt_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for script in postgres.MIGRATIONS[:3]:
            conn.execute(script)
        conn.execute("INSERT INTO agentrt_meta VALUES ('schema_version', '3')")
        conn.execute(
            "INSERT INTO agentrt_runs (run_id, agent, status, input, created_at, updated_at) "
            "VALUES ('old', 'm:a', 'queued', '{}', 1, 1)"
        )
    store = open_handle()
    assert store.schema_version() == postgres.SCHEMA_VERSION
    assert store.get_run("old").code_required is None
    assert store.list_workers() == []  # schema 5: the worker registry
    assert store.get_run("old").blocked is None  # schema 6: why a run is blocked
    assert [r.run_id for r in store.claim_runnable(make_owner(), 30, 5, lacking=["x"])] == ["old"]


def test_a_parent_whose_finished_child_was_never_delivered_is_runnable(store):
    """The child's worker stored its finish and died before journaling its outcome for the parent:
    the claim hands the parent to a worker, whose driver then journals the outcome from the child."""
    store.create_run(NewRun("p", "m:a", {}))
    drive_to_waiting(store, "p", {"kind": "agent"})
    store.create_run(NewRun("p.1", "m:a", {}, parent_id="p", parent_seq=1, parent_idx=0))
    store.create_run(NewRun("other", "m:a", {}))
    drive_to_waiting(store, "other", {"kind": "agent"})
    owner = make_owner()
    child = store.acquire_lease("p.1", owner, 30)
    assert store.claim_runnable(owner, 30, 10) == []  # the child is driven, the parents wait
    store.finish_run("p.1", owner, "completed", output=1, epoch=child.epoch)
    claimed = store.claim_runnable(owner, 30, 10)
    assert [r.run_id for r in claimed] == ["p"]
    store.put_result("p", 1, 0, True, b"the child's outcome", owner=owner, epoch=claimed[0].epoch)
    store.set_waiting("p", owner, "child", None, [], epoch=claimed[0].epoch)
    store.release_lease("p", owner)
    assert [r.run_id for r in store.claim_runnable(owner, 30, 10)] == ["p"]  # woken: answered
    store.release_lease("p", owner)


def test_agent_limits_hold_in_the_claim(store):
    queued(store, 5, prefix="a", priority=1)
    for i in range(3):
        store.create_run(NewRun(f"b{i}", "m:b", {}, status="queued"))
    first, second = make_owner(), make_owner()
    got = store.claim_runnable(first, 30, 10, limits={"m:a": 2})
    assert [r.run_id for r in got] == ["a0000", "a0001", "b0", "b1", "b2"]  # the limit passes over a2..a4
    assert store.claim_runnable(second, 30, 10, limits={"m:a": 2}) == []  # counted across owners
    store.finish_run("a0000", first, "completed", output=1, epoch=got[0].epoch)
    assert [r.run_id for r in store.claim_runnable(second, 30, 10, limits={"m:a": 2})] == ["a0002"]
    store.release_lease("a0001", first)  # released: no longer driven, and runnable again
    assert [r.run_id for r in store.claim_runnable(second, 30, 10, limits={"m:a": 2})] == ["a0001"]
    assert [r.run_id for r in store.claim_runnable(second, 30, 10)] == ["a0003", "a0004"]  # no limits


def test_racing_claimers_respect_an_agent_limit(open_handle):
    """Six handles (six connections) claim at once: no more than the limit of the limited agent is
    ever leased, and every unlimited run is claimed exactly once."""
    store = open_handle()
    queued(store, 30, prefix="lim", priority=1)
    for i in range(30):
        store.create_run(NewRun(f"free{i:02d}", "m:free", {}, status="queued"))
    handles = [open_handle() for _ in range(6)]
    won: list[list[str]] = [[] for _ in handles]
    errors: list[BaseException] = []
    start = threading.Barrier(len(handles))

    def claimer(i):
        owner = make_owner()
        try:
            start.wait()
            while True:
                got = handles[i].claim_runnable(owner, 60, 2, limits={"m:a": 3})
                if not got:
                    return
                won[i].extend(r.run_id for r in got)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(len(handles))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    everything = [run_id for w in won for run_id in w]
    assert len(everything) == len(set(everything))
    assert sorted(r for r in everything if r.startswith("free")) == [f"free{i:02d}" for i in range(30)]
    assert len([r for r in everything if r.startswith("lim")]) == 3


def test_deadlines_are_stored(store):
    store.create_run(NewRun("d", "m:a", {}, status="queued", deadline=1234.5))
    store.create_run(NewRun("n", "m:a", {}, status="queued"))
    assert store.get_run("d").deadline == 1234.5 and store.get_run("n").deadline is None


def _checkpointed(store, run_id, code, seq=1, pending=None):
    """A run with checkpoint ``seq`` needing ``code``, parked and runnable (its timer is due)."""
    owner = make_owner()
    store.create_run(NewRun(run_id, "m:a", {}, owner=owner, ttl_seconds=30))
    rec = store.get_run(run_id)
    for s in range(1, seq + 1):
        store.save_checkpoint(
            run_id,
            owner,
            s,
            b"cp%d" % s,
            pending or {"kind": "sleep"},
            [],
            epoch=rec.epoch,
            code_required=code,
        )
    store.set_waiting(run_id, owner, "timer", time.time() - 1, [], epoch=rec.epoch)
    store.release_lease(run_id, owner)


def test_a_claim_passes_over_runs_needing_code_the_claimer_lacks(store):
    """Each checkpoint records on the run row what code it needs; a claim given ``lacking`` takes
    only runs needing other code, or none recorded (queued, or checkpointed before it was)."""
    _checkpointed(store, "old", "python 3.12\nm:run v1")
    _checkpointed(store, "new", "python 3.12\nm:run v2")
    queued(store, 1)
    assert store.get_run("old").code_required == "python 3.12\nm:run v1"
    assert store.get_run("q0000").code_required is None
    new_worker = make_owner()
    got = store.claim_runnable(new_worker, 30, 10, lacking=["python 3.12\nm:run v1", "never seen"])
    assert sorted(r.run_id for r in got) == ["new", "q0000"]
    assert store.claim_runnable(new_worker, 30, 10, lacking=["python 3.12\nm:run v1"]) == []
    old_worker = make_owner()
    got = store.claim_runnable(old_worker, 30, 10, lacking=["python 3.12\nm:run v2"])
    assert [r.run_id for r in got] == ["old"] and got[0].code_required == "python 3.12\nm:run v1"


def test_the_code_required_follows_the_newest_checkpoint(store):
    owner = make_owner()
    store.create_run(NewRun("r", "m:a", {}, owner=owner, ttl_seconds=30))
    epoch = store.get_run("r").epoch
    store.save_checkpoint("r", owner, 1, b"cp1", {}, [], epoch=epoch, code_required="a")
    store.save_checkpoint("r", owner, 2, b"cp2", {}, [], epoch=epoch, code_required="a")
    assert store.get_run("r").code_required == "a"
    store.save_checkpoint("r", owner, 3, b"cp3", {}, [], epoch=epoch, code_required="b")
    assert store.get_run("r").code_required == "b"
    store.save_checkpoint("r", owner, 4, b"cp4", {}, [], epoch=epoch)  # a writer that does not know
    assert store.get_run("r").code_required is None
    store.release_lease("r", owner)
    assert [r.run_id for r in store.claim_runnable(make_owner(), 30, 5, lacking=["a", "b"])] == ["r"]


def test_an_upgrade_rewrite_keeps_the_replaced_blob_and_the_run_as_it_was(store):
    _checkpointed(store, "r", "v1", seq=2, pending={"kind": "ask"})
    owner = make_owner()
    rec = store.acquire_lease("r", owner, 30)
    store.put_result("r", 2, 0, True, b"an answer", owner=owner, epoch=rec.epoch)
    store.add_events("r", [(2, 0, "log", "info", {})], owner=owner, epoch=rec.epoch)
    before = store.get_run("r")
    n = store.rewrite_checkpoint(
        "r", owner, 2, b"moved", {"kind": "ask"}, ("upgrade", "info", {"moved": 1}),
        code_required="v2", epoch=rec.epoch,
    )  # fmt: skip
    assert n == 1
    assert store.latest_checkpoint("r") == (2, b"moved")
    assert [(c.seq, c.n, c.blob) for c in store.replaced_checkpoints("r")] == [(2, 1, b"cp2")]
    after = store.get_run("r")
    assert (after.status, after.seq, after.wake_at, after.code_required) == (
        "waiting", 2, before.wake_at, "v2",
    )  # fmt: skip
    assert store.get_results("r", 2) == {0: (True, b"an answer")}
    assert [(e.seq, e.n, e.kind, e.data) for e in store.list_events("r")][-1] == (
        2,
        1,
        "upgrade",
        {"moved": 1},
    )
    assert store.rewrite_checkpoint("r", owner, 2, b"again", {}, ("upgrade", None, {}), epoch=rec.epoch) == 2
    assert [c.blob for c in store.replaced_checkpoints("r")] == [b"cp2", b"moved"]
    with pytest.raises(StoreError, match="rewrites the newest one"):
        store.rewrite_checkpoint("r", owner, 1, b"x", {}, ("upgrade", None, {}), epoch=rec.epoch)
    with pytest.raises(LeaseLost):
        store.rewrite_checkpoint("r", make_owner(), 2, b"x", {}, ("upgrade", None, {}))


def test_a_restart_rewrite_adds_a_checkpoint_with_its_answers_and_makes_the_run_runnable(store):
    _checkpointed(store, "r", "v1", seq=3, pending={"kind": "ask"})
    owner = make_owner()
    rec = store.acquire_lease("r", owner, 30)
    store.rewrite_checkpoint(
        "r", owner, 4, b"restarted", {"kind": "tool"}, ("upgrade", "info", {"restart": 2}),
        journal=[(0, True, b"the answer of 2")], code_required="v2", epoch=rec.epoch,
    )  # fmt: skip
    assert [c.seq for c in store.list_checkpoints("r")] == [1, 2, 3, 4]
    assert store.replaced_checkpoints("r") == []
    assert store.get_results("r", 4) == {0: (True, b"the answer of 2")}
    after = store.get_run("r")
    assert (after.status, after.seq, after.pending, after.waiting_on, after.code_required) == (
        "running", 4, {"kind": "tool"}, None, "v2",
    )  # fmt: skip
    assert [e.kind for e in store.list_events("r") if e.seq == 4] == ["upgrade"]
    store.release_lease("r", owner)
    assert [r.run_id for r in store.claim_runnable(make_owner(), 30, 5, lacking=["v1"])] == ["r"]


def test_replaced_blobs_are_pruned_with_their_checkpoint(store):
    store.retention = 2
    owner = make_owner()
    store.create_run(NewRun("r", "m:a", {}, owner=owner, ttl_seconds=30))
    epoch = store.get_run("r").epoch
    store.save_checkpoint("r", owner, 1, b"cp1", {}, [], epoch=epoch)
    store.rewrite_checkpoint("r", owner, 1, b"moved1", {}, ("upgrade", None, {}), epoch=epoch)
    for seq in range(2, 6):
        store.save_checkpoint("r", owner, seq, b"cp%d" % seq, {}, [], epoch=epoch)
    store.set_waiting("r", owner, "timer", None, [], epoch=epoch)  # at rest: pruned to retention
    assert [c.seq for c in store.list_checkpoints("r")] == [4, 5]
    assert store.replaced_checkpoints("r") == []


FINDING = {"code": "AR106", "message": "AR106: ... cannot cross this await", "function": "run", "lineno": 7,
           "variable": "<exit of the 'with' block>"}  # fmt: skip


def _blocked_at_1(store, run_id="b"):
    """A run checkpointed at 1 with a journaled result, then blocked by its driver."""
    owner = make_owner()
    store.create_run(NewRun(run_id, "m:a", {}, owner=owner, ttl_seconds=30))
    store.save_checkpoint(run_id, owner, 1, b"cp1", {"kind": "tool"}, [], epoch=1)
    store.put_result(run_id, 1, 0, True, b"res", owner=owner, epoch=1)
    assert store.block_run(run_id, owner, FINDING, [(1, 0, "blocked", "error", {})], epoch=1)
    return owner


def test_a_blocked_run_keeps_its_checkpoint_and_journal_and_is_never_claimed(open_handle):
    store = open_handle()
    _blocked_at_1(store)
    for handle in (store, open_handle()):  # what another process reads
        rec = handle.get_run("b")
        assert rec.status == "blocked" and rec.blocked == FINDING and not rec.finished
        assert rec.seq == 1 and rec.pending == {"kind": "tool"} and rec.lease_owner is None
        assert handle.latest_checkpoint("b") == (1, b"cp1") and handle.get_results("b", 1) == {
            0: (True, b"res")
        }
        assert [r.run_id for r in handle.list_runs(status="blocked")] == ["b"]
    assert store.claim_runnable(make_owner(), 30, 10) == []
    assert [e.kind for e in store.list_events("b")] == ["blocked"]


def test_a_blocked_run_goes_on_and_every_status_write_clears_its_finding(store):
    for run_id, end in (("c", "checkpoint"), ("w", "wait"), ("f", "finish")):
        _blocked_at_1(store, run_id)
        owner = make_owner()
        rec = store.acquire_lease(run_id, owner, 30)
        assert rec.status == "blocked"  # taken up as it is; its next write says how it goes on
        if end == "checkpoint":
            store.save_checkpoint(run_id, owner, 2, b"cp2", {"kind": "tool"}, [], epoch=rec.epoch)
            assert store.get_run(run_id).status == "running"
        elif end == "wait":
            store.set_waiting(run_id, owner, "reply", None, [], epoch=rec.epoch)
            assert store.get_run(run_id).status == "waiting"
        else:
            assert store.finish_run(run_id, owner, "completed", output={"ok": 1}, epoch=rec.epoch)
            assert not store.block_run(run_id, owner, FINDING, [], epoch=rec.epoch)  # finished: no
        assert store.get_run(run_id).blocked is None


def test_block_run_is_fenced(store):
    owner = _blocked_at_1(store)
    thief = make_owner()
    store.acquire_lease("b", thief, 30)
    with pytest.raises(LeaseLost):
        store.block_run("b", owner, FINDING, [], epoch=1)


def test_reopen_run_makes_a_failed_or_blocked_run_running_again(store):
    owner = _blocked_at_1(store)
    rec = store.acquire_lease("b", owner, 30)
    n = store.reopen_run("b", owner, ("unblocked", "info", {"why": "upgrade"}), epoch=rec.epoch)
    rec = store.get_run("b")
    assert (rec.status, rec.blocked, rec.seq, rec.pending, n) == ("running", None, 1, {"kind": "tool"}, 1)
    assert rec.lease_owner == owner  # kept: the caller drives it, or releases it for a worker
    store.release_lease("b", owner)
    assert [r.run_id for r in store.claim_runnable(make_owner(), 30, 10)] == ["b"]

    # a failed run: the row forgot its pending request, the checkpoint did not
    other = make_owner()
    store.create_run(NewRun("f", "m:a", {}, owner=other, ttl_seconds=30))
    store.save_checkpoint("f", other, 1, b"cp1", {"kind": "ask"}, [], epoch=1)
    assert store.finish_run(
        "f", other, "failed", error={"type": "E", "message": "m"}, error_blob=b"x", epoch=1
    )
    rec = store.acquire_lease("f", other, 30)
    store.reopen_run("f", other, ("retry", "info", {}), epoch=rec.epoch)
    rec = store.get_run("f")
    assert (rec.status, rec.error, rec.error_blob, rec.output, rec.pending) == (
        "running", None, None, None, {"kind": "ask"},
    )  # fmt: skip
    with pytest.raises(LeaseLost):
        store.reopen_run("f", make_owner(), ("retry", "info", {}))


def test_a_retry_checkpoint_clears_a_failed_runs_error(store):
    owner = make_owner()
    store.create_run(NewRun("f", "m:a", {}, owner=owner, ttl_seconds=30))
    store.save_checkpoint("f", owner, 1, b"cp1", {"kind": "tool"}, [], epoch=1)
    store.finish_run("f", owner, "failed", error={"type": "E", "message": "m"}, epoch=1)
    rec = store.acquire_lease("f", owner, 30)
    store.rewrite_checkpoint(
        "f", owner, 2, b"cp2", {"kind": "tool"}, ("retry", "info", {"from_seq": 1}),
        journal=[(0, True, b"again")], code_required="req", epoch=rec.epoch,
    )  # fmt: skip
    rec = store.get_run("f")
    assert (rec.status, rec.error, rec.seq, rec.code_required) == ("running", None, 2, "req")
    assert store.get_results("f", 2) == {0: (True, b"again")}


def test_cancelling_a_blocked_run_ends_it_at_once(store):
    _blocked_at_1(store)
    assert store.request_cancel("b") == ["b"]
    rec = store.get_run("b")
    assert rec.status == "cancelled" and rec.finished and store.claim_runnable(make_owner(), 30, 10) == []


def test_a_checkpoint_journals_the_results_that_led_to_it_in_its_own_write(store):
    """``save_checkpoint(..., journal=...)`` (Capability.JOURNAL_WITH_CHECKPOINT, every SQL store):
    the results are stored with the checkpoint, and a result another driver already journaled
    refuses the whole write -- neither the checkpoint nor any of the results is written."""
    from agentrt.stores.base import Capability, capabilities

    assert Capability.JOURNAL_WITH_CHECKPOINT in capabilities(store)
    owner = make_owner()
    store.create_run(NewRun("r", "m:a", {}, owner=owner, ttl_seconds=30))
    store.save_checkpoint("r", owner, 1, b"cp1", {"kind": "gather"}, [], epoch=1)
    store.save_checkpoint(
        "r", owner, 2, b"cp2", {"kind": "tool"}, [(2, 0, "note", "info", {"n": 1})],
        epoch=1, journal=[(1, 0, True, b"first"), (1, 1, False, b"second")],
    )  # fmt: skip
    assert store.get_results("r", 1) == {0: (True, b"first"), 1: (False, b"second")}
    assert store.get_run("r").seq == 2 and store.latest_checkpoint("r") == (2, b"cp2")
    with pytest.raises(StoreError, match="already has a result"):
        store.save_checkpoint(
            "r", owner, 3, b"cp3", {}, [], epoch=1, journal=[(2, 0, True, b"new"), (1, 1, True, b"again")]
        )
    assert store.get_run("r").seq == 2 and store.latest_checkpoint("r") == (2, b"cp2")
    assert store.get_results("r", 2) == {} and store.get_results("r", 1)[1] == (False, b"second")
    with pytest.raises(LeaseLost):
        store.save_checkpoint("r", make_owner(), 3, b"cp3", {}, [], epoch=1, journal=[(2, 0, True, b"x")])
    assert store.get_results("r", 2) == {}
    # one result (a step's usual journal; PostgreSQL writes it without arrays): the same contract
    store.save_checkpoint("r", owner, 3, b"cp3", {}, [], epoch=1, journal=[(2, 0, False, b"one")])
    assert store.get_results("r", 2) == {0: (False, b"one")} and store.latest_checkpoint("r") == (3, b"cp3")
    with pytest.raises(StoreError, match="already has a result"):
        store.save_checkpoint("r", owner, 4, b"cp4", {}, [], epoch=1, journal=[(2, 0, True, b"twice")])
    assert store.latest_checkpoint("r") == (3, b"cp3") and store.get_results("r", 2) == {0: (False, b"one")}
