"""``async with Runtime(store=...)`` as a worker: recovery with no host code, clients, cancellation."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from agentrt import Cancelled, Runtime
from agentrt.stores import MemoryStore, NewRun, SqliteStore, open_store
from tests.workers import agents
from tests.workers.agents import Job, expected, mixed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def store(every_store):
    return every_store


def side_log(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f]


async def until(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_a_worker_drives_queued_runs_submitted_by_a_client(store):
    async def main():
        client = Runtime(store, worker=False)
        ids = [await client.start(mixed, {"i": i}) for i in range(5)]
        assert {store.get_run(r).status for r in ids} == {"queued"}
        await client.close()
        async with Runtime(store) as worker:
            outs = [await worker.wait(r, timeout=60) for r in ids]
        return outs

    outs = asyncio.run(main())
    assert [o.value for o in outs] == [expected(Job(i)) for i in range(5)]


def test_priorities_order_the_claims(store):
    for i, prio in enumerate([0, 5, 1]):
        store.create_run(
            NewRun(f"r{i}", "tests.workers.agents:mixed", {"i": i}, status="queued", priority=prio)
        )

    async def main():
        async with Runtime(store, concurrency=1) as rt:
            for i in range(3):
                await rt.wait(f"r{i}", timeout=60)

    asyncio.run(main())
    order = sorted(store.list_runs(), key=lambda r: r.updated_at)
    assert [r.run_id for r in order] == ["r1", "r2", "r0"]


def test_a_due_timer_fires_after_a_restart(store):
    async def main():
        async with Runtime(store) as first:
            run_id = await first.start(mixed, {"i": 1, "sleep": 0.6})
            await until(lambda: store.get_run(run_id).status == "waiting")
        assert store.get_run(run_id).waiting_on == "timer"  # the process that armed it is gone
        async with Runtime(store) as second:  # no resume(): the worker finds the due timer
            return await second.wait(run_id, timeout=60)

    assert asyncio.run(main()).value == expected(Job(1, sleep=0.6))


def test_a_reply_from_a_client_is_taken_up_by_a_worker(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(mixed, {"i": 2, "ask": True, "child": True})
            await until(lambda: store.get_run(run_id).waiting_on == "reply")
        client = Runtime(store, worker=False)
        assert await client.reply(run_id, "yes") == run_id
        await client.close()
        assert store.get_run(run_id).status == "waiting"  # recorded; nobody drives it yet
        async with Runtime(store) as worker:
            return await worker.wait(run_id, timeout=60)

    assert asyncio.run(main()).value == expected(Job(2, ask=True, child=True))


def test_cancel_runs_finally_blocks_and_reaches_children(store):
    agents.FINALLY.clear()

    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(agents.careful, {"i": 1, "child": True})
            child_id = f"{run_id}.1"
            await until(lambda: (store.get_run(child_id) or store.get_run(run_id)).waiting_on == "reply")
            ids = await rt.cancel(run_id)
            assert sorted(ids) == sorted([run_id, child_id])
            with pytest.raises(Cancelled):
                await rt.wait(run_id, timeout=60)
            with pytest.raises(Cancelled):
                await rt.wait(child_id, timeout=60)
            return run_id, child_id

    run_id, child_id = asyncio.run(main())
    assert store.get_run(run_id).status == "cancelled" and store.get_run(child_id).status == "cancelled"
    assert sorted(agents.FINALLY) == sorted([run_id, child_id])


def test_a_client_cancels_a_queued_run_at_once(store):
    async def main():
        client = Runtime(store, worker=False)
        run_id = await client.start(mixed, {"i": 1})
        assert await client.cancel(run_id) == [run_id]
        with pytest.raises(Cancelled):
            await client.wait(run_id, timeout=5)
        await client.close()

    asyncio.run(main())


_KILLED = r"""
import asyncio, sys
import agentrt.stores.base
from agentrt import Runtime
from agentrt.stores import open_store
from tests.workers.agents import mixed

if sys.argv[3:]:  # a process of another machine: its lease owner names that host (no pid to check here)
    agentrt.stores.base._HOST = sys.argv[3]

async def main():
    rt = Runtime(open_store(sys.argv[1]), lease_seconds=float(sys.argv[2]) if sys.argv[2:] else 10.0)
    run_id = await rt.start(mixed, {"i": 7}, run_id="victim")
    print("started", flush=True)
    await rt.wait(run_id)

asyncio.run(main())
"""


def test_an_interrupted_run_is_recovered_by_a_worker_without_host_code(tmp_path, monkeypatch):
    """SIGKILL mid-tool (its lease has 60 s left): a new worker on this machine sees the dead pid
    and finishes the run; the tool in flight runs again (no result was journaled), nothing else."""
    db, log = str(tmp_path / "agentrt.db"), str(tmp_path / "side.jsonl")
    monkeypatch.setenv("AGENTRT_TEST_SIDE_LOG", log)
    proc = _start_victim(db, log, "60")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    store = SqliteStore(db)
    rec = store.get_run("victim")
    assert rec.status == "running" and rec.interrupted and rec.epoch == 1
    monkeypatch.setenv("AGENTRT_TEST_SIDE_LOG", log)

    async def main():
        async with Runtime(store) as rt:
            return await rt.wait("victim", timeout=60)

    try:
        out = asyncio.run(main())
    finally:
        store.close()
    assert out.value == expected(Job(7))
    keys = [e["key"] for e in side_log(log)]
    assert keys.count("victim:1") == 2 and keys.count("victim:2") == 1


def _start_victim(location: str, log: str, *args: str) -> subprocess.Popen[str]:
    """A process driving run ``victim`` (``args``: lease seconds, host), inside its first tool call
    (60 s long)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED, location, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "AGENTRT_TEST_TOOL_DELAY": "60"},
    )
    assert proc.stdout.readline().strip() == "started"
    deadline = time.monotonic() + 60
    while not any(e["key"] == "victim:1" for e in side_log(log)):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return proc


@pytest.mark.parametrize(
    "backend, poll_seconds, elsewhere",
    [
        ("sqlite", None, False),
        ("sqlite", 3600.0, False),
        pytest.param("postgres", None, False, marks=pytest.mark.postgres),
        pytest.param("postgres", 3600.0, False, marks=pytest.mark.postgres),
        pytest.param("postgres", None, True, marks=pytest.mark.postgres),
    ],
)
def test_an_idle_worker_takes_over_a_sigkilled_workers_run_at_once(
    backend, poll_seconds, elsewhere, tmp_path, monkeypatch, request
):
    """An idle worker is up (default settings; or a poll so long it never fires) when the process
    driving a run is SIGKILLed inside a tool call, its lease far from lapsing: the survivor sees
    the dead pid between claims (or, for a process of another machine on PostgreSQL, its session's
    lock gone) and takes the run over (well within the bound below: it does not wait for its next
    poll nor for the lease), and the run ends with the uninterrupted result."""
    location = str(tmp_path / "agentrt.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    log = str(tmp_path / "side.jsonl")
    monkeypatch.setenv("AGENTRT_TEST_SIDE_LOG", log)
    store = SqliteStore(location) if backend == "sqlite" else open_store(location)
    options = {} if poll_seconds is None else {"poll_seconds": poll_seconds}

    async def main():
        async with Runtime(store, **options) as survivor:
            # Its first claim made: idle, waiting (and, on PostgreSQL, its own session settled).
            await asyncio.sleep(2.5 if elsewhere else 0.3)
            args = ("60", "elsewhere.example") if elsewhere else ()
            victim = await asyncio.to_thread(_start_victim, location, log, *args)
            try:
                victim.send_signal(signal.SIGKILL)
                await asyncio.to_thread(victim.wait)
                killed = time.monotonic()
            finally:
                victim.stdout.close()
            # Taken over: a claim raised the epoch (the survivor may finish the run before we look).
            await until(lambda: store.get_run("victim").epoch > 1, timeout=10)
            took = time.monotonic() - killed
            out = await survivor.wait("victim", timeout=60)
            return took, out

    try:
        took, out = asyncio.run(main())
    finally:
        store.close()
    assert took < 10
    assert out.value == expected(Job(7))  # what an uninterrupted run returns
    keys = [e["key"] for e in side_log(log)]
    assert keys.count("victim:1") == 2 and keys.count("victim:2") == 1


def test_a_driver_whose_lease_lapsed_is_fenced_even_when_its_process_claims_the_run_again():
    """The process was 'paused' inside a call: its lease lapsed, another worker took the run
    (epoch + 1) and handed it back; this process's worker claims it again (epoch + 2).  The old
    driver must not inherit the new epoch: its write is refused and a fresh driver goes on."""

    from agentrt.testing import capture_trace

    store = MemoryStore()
    agents.GATE.clear()
    agents.GATED.clear()

    async def main():
        async with Runtime(store, poll_seconds=0.1) as rt:
            run_id = await rt.start(agents.gate, {"i": 0})
            await until(lambda: agents.GATED)
            rec = store.get_run(run_id)
            with store._tx() as conn:  # another worker claimed it and released it meanwhile
                conn.execute(
                    "UPDATE runs SET lease_owner = NULL, lease_expires = NULL, epoch = ? WHERE run_id = ?",
                    (rec.epoch + 1, run_id),
                )
            await until(lambda: store.get_run(run_id).epoch == rec.epoch + 2)  # claimed again here
            agents.GATE.set()
            return run_id, rec.epoch, await rt.wait(run_id, timeout=60)

    with capture_trace() as events:
        run_id, first_epoch, out = asyncio.run(main())
    assert out.value == "through"
    assert [e.kind for e in events if e.kind == "lease_lost"] == ["lease_lost"]
    assert [f"{run_id}:1", f"{run_id}:1"] == agents.GATED  # the fresh driver made the call again
    assert store.get_run(run_id).epoch == first_epoch + 2


def test_a_parent_whose_child_outcome_was_lost_is_driven_again(store, monkeypatch):
    """The child's worker stored the child's finish, then died before journaling its outcome for the
    parent (played by dropping that delivery): a later worker claims the parent (the store counts it
    runnable) and drives it on."""
    from agentrt._runtime.driver import Driver
    from agentrt._runtime.worker import Worker

    async def nothing(*args):
        return []

    async def lose_delivery():
        with monkeypatch.context() as patch:
            patch.setattr(Driver, "_notify_parent", nothing)
            # This runtime drives only what it starts: its own claims would take the parent up at once.
            patch.setattr(Worker, "claim", nothing)
            async with Runtime(store, poll_seconds=0.1) as first:
                run_id = await first.start(mixed, {"i": 7, "child": True})
                await until(
                    lambda: store.get_run(f"{run_id}.2") is not None and store.get_run(f"{run_id}.2").finished
                )
                await until(lambda: store.get_run(run_id).status == "waiting")
        parent = store.get_run(run_id)
        assert parent.waiting_on == "child" and not store.get_results(run_id, parent.seq)
        return run_id

    async def recover(run_id):
        async with Runtime(store, poll_seconds=0.1) as second:
            return await second.wait(run_id, timeout=60)

    run_id = asyncio.run(lose_delivery())
    assert asyncio.run(recover(run_id)).value == expected(Job(7, child=True))


def test_the_dead_owner_watch_tells_once_per_owner():
    """A dead owner wakes a waiting worker once: a run its claim could not take (the worker full,
    the agent at its limit) waits for the next poll, never a hot loop of wake-ups."""
    import socket

    from agentrt._runtime import worker as worker_module
    from agentrt.stores.base import Capability

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that ran on this machine and is no longer (reaped)
    dead = f"{socket.gethostname()}/{gone.pid}/0badc0de"
    alive = f"{socket.gethostname()}/{os.getpid()}/c0ffee00"

    class Store:
        capabilities = frozenset({Capability.WATCHED_OWNERS})
        reads = 0

        def watched_owners(self):
            self.reads += 1
            return [(dead, False), (alive, False), ("elsewhere/1/x~s", True)]

    store = Store()
    watch = worker_module.DeadOwnerWatch(store)
    assert watch.active
    assert watch.dead_owner_found()  # the dead pid and the ended session
    assert not any(watch.dead_owner_found() for _ in range(20))  # told already: no more wake-ups
    assert store.reads == 1  # read every _OWNERS_SECONDS, not at every pid check
    assert not worker_module.DeadOwnerWatch(object()).active  # a store that declares no watch
