"""The durable event stream and run tenants, on every backend (memory, SQLite, a real PostgreSQL)."""

from __future__ import annotations

import threading

import pytest

from agentrt.stores import NewRun


def test_stream_ids_count_per_run_across_handles(open_handle):
    a, b = open_handle(), open_handle()
    a.create_run(NewRun("r1", "m:a", {}))
    a.create_run(NewRun("r2", "m:a", {}))
    assert a.append_stream("r1", "started", {"agent": "a"}) == 1
    assert b.append_stream("r1", "tool_started", {"tool": "t", "n": [1, 2]}) == 2
    assert a.append_stream("r2", "started", {}) == 1
    assert b.append_stream("r1", "completed", {"output": None}) == 3
    events = b.read_stream("r1")
    assert [(e.id, e.kind) for e in events] == [(1, "started"), (2, "tool_started"), (3, "completed")]
    assert events[1].data == {"tool": "t", "n": [1, 2]} and events[1].created_at > 0
    assert [e.id for e in a.read_stream("r1", after=1)] == [2, 3]
    assert [e.id for e in a.read_stream("r1", after=1, limit=1)] == [2]
    assert a.read_stream("r1", after=3) == [] and a.read_stream("nope") == []


def test_concurrent_appends_get_distinct_ids(open_handle):
    handles = [open_handle() for _ in range(4)]
    handles[0].create_run(NewRun("r", "m:a", {}))
    got: list[int] = []
    lock = threading.Lock()

    def append(h):
        for i in range(25):
            n = h.append_stream("r", "log", {"i": i})
            with lock:
                got.append(n)

    threads = [threading.Thread(target=append, args=(h,)) for h in handles]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(1, 101))
    assert [e.id for e in handles[1].read_stream("r")] == list(range(1, 101))


def test_a_batch_numbers_each_runs_events_after_its_last(open_handle):
    a, b = open_handle(), open_handle()
    for run_id in ("r1", "r2", "r3"):
        a.create_run(NewRun(run_id, "m:a", {}))
    assert a.append_stream("r1", "started", {}) == 1
    a.append_streams(
        [
            ("r1", "checkpoint", '{"seq": 1}', 1.5),
            ("r2", "started", "{}", 1.5),
            ("r1", "tool_started", '{"tool": "t"}', 1.6),
            ("r2", "completed", '{"output": null}', 1.7),
        ]
    )
    b.append_streams([])  # nothing to write: no transaction either
    assert b.append_stream("r1", "completed", {"output": 1}) == 4
    assert [(e.id, e.kind, e.data) for e in b.read_stream("r1")] == [
        (1, "started", {}),
        (2, "checkpoint", {"seq": 1}),
        (3, "tool_started", {"tool": "t"}),
        (4, "completed", {"output": 1}),
    ]
    assert [(e.id, e.kind, e.created_at) for e in b.read_stream("r2")] == [
        (1, "started", 1.5),
        (2, "completed", 1.7),
    ]
    assert b.read_stream("r3") == []


def test_a_batch_larger_than_one_statement_is_written_whole_and_in_order(open_handle):
    """SQLite writes a batch as multi-row inserts of at most 999 parameters (199 events of 5 columns):
    a batch of 450 takes three statements, numbered and stored as one."""
    h = open_handle()
    h.create_run(NewRun("r1", "m:a", {}))
    h.create_run(NewRun("r2", "m:a", {}))
    h.append_streams([(f"r{1 + i % 2}", "log", f'{{"i": {i}}}', float(i)) for i in range(450)])
    for run, first in (("r1", 0), ("r2", 1)):
        events = h.read_stream(run, limit=1000)
        assert [e.id for e in events] == list(range(1, 226))
        assert [e.data["i"] for e in events] == list(range(first, 450, 2))


def test_batches_and_appends_from_many_handles_keep_each_writers_order(open_handle):
    """Writers that race for a run's next ids: each batch is numbered again until it fits, so every
    event is stored once and each writer's events keep their order."""
    handles = [open_handle() for _ in range(3)]
    handles[0].create_run(NewRun("r", "m:a", {}))

    def batches(h, who):
        for i in range(10):
            h.append_streams(
                [
                    ("r", "log", f'{{"who": "{who}", "i": {2 * i}}}', 0.0),
                    ("r", "log", f'{{"who": "{who}", "i": {2 * i + 1}}}', 0.0),
                ]
            )

    def appends(h, who):
        for i in range(20):
            h.append_stream("r", "log", {"who": who, "i": i})

    threads = [
        threading.Thread(target=batches, args=(handles[0], "a")),
        threading.Thread(target=batches, args=(handles[1], "b")),
        threading.Thread(target=appends, args=(handles[2], "c")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = handles[1].read_stream("r")
    assert [e.id for e in events] == list(range(1, 61))
    for who in "abc":
        assert [e.data["i"] for e in events if e.data["who"] == who] == list(range(20))


def test_a_runs_first_tenant_stays(store):
    for run_id in ("r1", "r2", "r3"):  # a tenant row counts beside its run only (issue 25)
        store.create_run(NewRun(run_id, "m:a", {}))
    store.set_tenant("r1", "acme")
    store.set_tenant("r1", "globex")  # a second claim changes nothing
    store.set_tenant("r2", "acme")
    store.set_tenant("r3", "globex")
    assert store.get_tenant("r1") == "acme" and store.get_tenant("nope") is None
    assert store.tenant_runs("acme") == {"r1", "r2"}
    assert store.tenant_runs("globex") == {"r3"}
    assert store.tenant_runs("initech") == set()


def test_a_runs_tenant_is_written_with_it_and_an_older_row_is_dropped(store):
    """Issue 25: the tenant is part of creating the run; a row written for the id before (by a version
    that recorded tenants before validating) claims nothing."""
    store.set_tenant("squatted", "acme")
    store.create_run(NewRun("squatted", "m:a", {}))  # the CLI's run: no tenant
    assert store.get_tenant("squatted") is None and store.tenant_runs("acme") == set()
    store.set_tenant("taken", "acme")
    store.create_run(NewRun("taken", "m:a", {}, tenant="globex"))
    assert store.get_tenant("taken") == "globex" and store.tenant_runs("globex") == {"taken"}
    store.create_run(NewRun("child", "m:a", {}, parent_id="taken"))
    assert store.get_tenant("child") is None  # a sub-run's tenant is its root's (the API walks up)


def test_a_batch_finds_each_runs_last_id_by_its_key_not_by_a_scan(open_handle):
    """Numbering a batch reads each run's newest id with one backward step of the ``(run_id, id)``
    key per run.  ``run_id = ANY(?) GROUP BY run_id`` read every event of the runs listed, and
    PostgreSQL's planner, misjudging how many rows a list of ids matches, scanned the whole stream
    table instead at every durable step (a benchmark's 32,000 events: 7 ms a step)."""
    from agentrt.stores._sql.store import APPEND_NUMBERED, newest_stream_ids

    h = open_handle()
    dialect = getattr(h, "dialect", None)
    if dialect is None:
        pytest.skip("not a SQL store")
    runs = [f"r{i}" for i in range(60)]
    for run_id in runs:
        h.create_run(NewRun(run_id, "m:a", {}))
    h.append_streams([(run_id, "log", "{}", 0.0) for _ in range(50) for run_id in runs])
    h.append_streams([("r7", "log", "{}", 0.0)])
    if dialect.arrays:
        with h._tx() as conn:
            conn.execute(dialect.sql("ANALYZE stream"))
    sql, params = newest_stream_ids(dialect, ["r3", "r7", "none"])
    assert sorted(h._read(sql, params)) == [("none", 0), ("r3", 50), ("r7", 51)]
    sql, params = newest_stream_ids(dialect, runs)
    explain = "EXPLAIN " if dialect.arrays else "EXPLAIN QUERY PLAN "
    plan = " ".join(str(row[-1]) for row in h._read(explain + sql, params))
    if dialect.arrays:
        assert "Index Only Scan Backward" in plan and "Seq Scan" not in plan, plan
        # where a batch is numbered by the statement that inserts it: the same step per event
        batch = [runs, [1] * len(runs), ["log"] * len(runs), ["{}"] * len(runs), [0.0] * len(runs)]
        plan = " ".join(str(row[-1]) for row in h._read(explain + APPEND_NUMBERED, batch))
        assert "Index Only Scan Backward" in plan and "Seq Scan" not in plan, plan
    else:
        assert "CORRELATED SCALAR SUBQUERY" in plan and "SEARCH s USING PRIMARY KEY" in plan, plan
