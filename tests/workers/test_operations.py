"""Run operations across workers: per-run deadlines and per-agent concurrency limits."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import signal
import subprocess
import time

import pytest

from agentrt import Cancelled, DeadlineExceeded, Runtime
from agentrt.stores import MemoryStore, NewRun, SqliteStore, open_store
from tests.cli.helpers import command
from tests.workers import agents
from tests.workers.test_worker import ROOT, side_log, until


@pytest.fixture
def store(every_store):
    return every_store


def assert_deadline_cancelled(store, run_id):
    rec = store.get_run(run_id)
    assert rec.status == "cancelled"
    assert rec.error["type"].endswith("DeadlineExceeded") and "passed its deadline" in rec.error["message"]


def test_a_run_in_a_long_call_is_cancelled_at_its_deadline(store):
    """The deadline passes inside a 30 s call: the call is cancelled (nothing journaled), the agent
    gets DeadlineExceeded (a Cancelled) at that await, its cleanup runs, the run ends cancelled."""
    agents.FINALLY.clear()

    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(agents.deadlined, {"i": 1, "sleep": 30.0}, deadline=0.5)
            started = time.monotonic()
            with pytest.raises(DeadlineExceeded) as caught:
                await rt.wait(run_id, timeout=20)
            return run_id, time.monotonic() - started, caught.value

    run_id, seconds, error = asyncio.run(main())
    assert isinstance(error, Cancelled) and seconds < 20
    assert [run_id] == agents.FINALLY
    assert_deadline_cancelled(store, run_id)
    assert store.get_results(run_id, 1) == {}  # the nap was cancelled: nothing of it is journaled


def test_a_waiting_run_with_no_process_is_found_and_cancelled_at_its_deadline(store):
    """The run parks on a question and its process closes: nobody drives it.  Its deadline is its
    wake-up, so a worker started later finds it and throws DeadlineExceeded into it (cleanup runs);
    its sub-run, which inherited the deadline, is cancelled too."""
    agents.FINALLY.clear()

    async def park():
        async with Runtime(store) as rt:
            run_id = await rt.start(
                agents.deadlined,
                {"i": 1, "ask": True, "child": True},
                deadline=datetime.timedelta(seconds=1.5),
            )
            child_id = f"{run_id}.1"
            await until(lambda: (store.get_run(child_id) or store.get_run(run_id)).waiting_on == "reply")
            await until(lambda: store.get_run(run_id).status == "waiting")
        return run_id, child_id

    run_id, child_id = asyncio.run(park())
    parent, child = store.get_run(run_id), store.get_run(child_id)
    assert parent.deadline is not None and child.deadline == parent.deadline
    assert child.wake_at == child.deadline and not child.lease_live()  # waiting, driven by no one
    time.sleep(max(parent.deadline - time.time(), 0) + 0.1)

    async def later():
        async with Runtime(store, poll_seconds=0.2) as rt:
            for rid in (child_id, run_id):
                with pytest.raises(DeadlineExceeded):
                    await rt.wait(rid, timeout=30)

    asyncio.run(later())
    assert_deadline_cancelled(store, child_id)
    assert sorted(agents.FINALLY) == sorted([run_id, child_id])


def test_a_run_that_ends_in_time_is_not_touched_by_its_deadline(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(agents.deadlined, {"i": 1, "sleep": 0.01}, deadline=60)
            return await rt.wait(run_id, timeout=30)

    assert asyncio.run(main()).value == "rested"


def test_a_bad_deadline_is_refused_by_start():
    async def main(deadline):
        async with Runtime(MemoryStore()) as rt:
            await rt.start(agents.deadlined, {"i": 1}, deadline=deadline)

    with pytest.raises(ValueError, match="deadline must be seconds from now"):
        asyncio.run(main(-1))
    with pytest.raises(ValueError, match="no time zone"):
        asyncio.run(main(datetime.datetime(2030, 1, 1)))


def test_a_limited_agent_started_in_process_waits_for_a_claim(store):
    """``Runtime.start`` of a limited agent queues the run: only claims, which count the runs of that
    agent driven anywhere, may take it (runs of other agents are not held up)."""
    spec = "tests.workers.agents:limited"
    owner = "elsewhere/1/x"  # another host: its lease is taken at its word
    store.create_run(NewRun("busy", spec, {"i": 0}, owner=owner, ttl_seconds=600))

    async def main():
        async with Runtime(store, poll_seconds=0.1, agent_limits={agents.limited: 1}) as rt:
            held = await rt.start(agents.limited, {"i": 1, "work": 0.0})
            free = await rt.start(agents.mixed, {"i": 2})
            await rt.wait(free, timeout=30)
            await asyncio.sleep(0.5)
            assert store.get_run(held).status == "queued"  # the one slot is taken elsewhere
            store.release_lease("busy", owner)
            store.create_run(NewRun("gone", spec, {"i": 3}, status="queued"))
            return (await rt.wait(held, timeout=30)).value

    assert asyncio.run(main()) == "l1"


_WORKER_ARGS = ["--concurrency", "8", "--poll-seconds", "0.2", "--log-format", "none"]


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_racing_worker_processes_keep_an_agent_limit(backend, tmp_path, request):
    """Three worker processes, each free to drive 8 runs, race for 12 runs of an agent limited to 2:
    never more than 2 of its calls overlap (the side-effect log of start/end, across processes),
    and every run completes."""
    location = str(tmp_path / "agentrt.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    log = str(tmp_path / "side.jsonl")
    env = {**os.environ, "AGENTRT_TEST_SIDE_LOG": log, "AGENTRT_LEASE_SECONDS": "5"}
    store = SqliteStore(location) if backend == "sqlite" else open_store(location)
    spec = "tests.workers.agents:limited"
    try:
        for i in range(12):
            store.create_run(NewRun(f"l{i:02d}", spec, {"i": i, "work": 0.15}, status="queued"))
        procs = [
            subprocess.Popen(
                command("worker", "--store", location, "--limit", f"{spec}=2", *_WORKER_ARGS),
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for _ in range(3)
        ]
        try:
            deadline = time.monotonic() + 120
            while len(store.list_runs(status="completed")) < 12:
                assert time.monotonic() < deadline, "the runs did not complete"
                assert all(p.poll() is None for p in procs), [p.stderr.read() for p in procs]
                time.sleep(0.1)
        finally:
            for p in procs:
                p.send_signal(signal.SIGTERM)
            for p in procs:
                p.communicate(timeout=60)
        events = sorted(
            (e["t"], 1 if e["kind"] == "span_start" else -1, e["pid"])
            for e in side_log(log)
            if e["kind"].startswith("span_")
        )
        overlap = peak = 0
        for _t, step, _pid in events:
            overlap += step
            peak = max(peak, overlap)
        assert peak == 2  # the limit is reached (so the test can fail) and never passed
        assert [json.loads(json.dumps(r.output)) for r in store.list_runs(status="completed")]
    finally:
        store.close()


def test_runs_json_shows_a_deadline():
    from agentrt.stores.views import result_object

    store = MemoryStore()
    store.create_run(NewRun("d", "m:a", {}, status="queued", deadline=1234.5))
    store.create_run(NewRun("n", "m:a", {}, status="queued"))
    assert result_object(store.get_run("d"))["deadline"] == 1234.5
    assert "deadline" not in result_object(store.get_run("n"))
