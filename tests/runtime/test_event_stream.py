"""The durable event stream behind Runtime.events / subscribe and the SSE ids of agentrt serve."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import tests.runtime.agents as A
from agentrt import Runtime
from agentrt.exceptions import NotWaiting, RunExists, RunNotFound
from agentrt.stores import Capability, MemoryStore, NewRun, SqliteStore
from tests.cli.helpers import cli
from tests.conftest import fresh_store


class BatchingSqliteStore(SqliteStore):
    """A SQLite store that writes stream events in batches, as PostgreSQL's does (no queue of its
    own), through one I/O thread: the runtime's batching path without a server."""

    capabilities = SqliteStore.capabilities - {Capability.QUEUED_STREAM}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.io_threads = 1


@pytest.fixture(params=["memory", "sqlite", "batching", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    """Each way a store takes the stream: memory and SQLite queue events on their next write, a
    batching store (and PostgreSQL) writes each turn of the loop's events in one transaction."""
    if request.param == "batching":
        s = BatchingSqliteStore(tmp_path / "agentrt.db")
    else:
        s = fresh_store(request.param, request, tmp_path)
    yield s
    s.close()


def run(coro):
    return asyncio.run(coro)


def test_every_kind_of_event_is_stored_with_one_sequence(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.asker, {"n": 3})
            await rt.settle(run_id, timeout=10)
            await rt.reply(run_id, "yes")
            await rt.wait(run_id, timeout=10)
            return run_id, rt.events(run_id)

    run_id, events = run(main())
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    kinds = [e.kind for e in events]
    for kind in ("started", "checkpoint", "notify", "log", "waiting", "replied", "emit", "completed"):
        assert kind in kinds, kinds
    assert kinds[0] == "started" and kinds[-1] == "completed"
    assert kinds.index("waiting") < kinds.index("replied") < kinds.index("emit")
    waiting = next(e for e in events if e.kind == "waiting")
    assert waiting.data["prompt"] == {"question": "approve?", "n": 3}
    assert [e.id for e in store.read_stream(run_id, after=4)] == [e.id for e in events[4:]]
    assert store.read_stream(run_id, after=2, limit=1)[0].id == 3


def test_subscribe_joins_history_and_live_tail_exactly(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.fanout, {"n": 4})
            seen = [e async for e in rt.subscribe(run_id)]
            again = [e async for e in rt.subscribe(run_id, after=seen[2].id)]
            finished = [e async for e in rt.subscribe(run_id, after=seen[-1].id)]
            return seen, again, finished, rt.events(run_id)

    seen, again, finished, stored = run(main())
    assert seen == stored and seen[-1].kind == "completed"
    assert again == stored[3:]
    assert finished == []  # after the end: nothing, and the iteration ends at once
    assert {"tool_started", "tool_finished"} <= {e.kind for e in seen}


def test_subscribe_refuses_a_position_no_store_can_compare_with(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.fanout, {"n": 1})
            for bad, error in ((2**63, ValueError), (-1, ValueError), ("3", TypeError), (True, TypeError)):
                with pytest.raises(error, match=r"Runtime.subscribe\(after=...\): must be an event id"):
                    rt.subscribe(run_id, bad)
            return [e.id async for e in rt.subscribe(run_id, after=2**63 - 1)]

    assert run(main()) == []  # the largest id is a position: nothing after it


def test_subscribers_follow_a_run_while_it_waits_and_goes_on(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.asker, {"n": 1})

            async def follow():
                return [e async for e in rt.subscribe(run_id)]

            followers = [asyncio.ensure_future(follow()) for _ in range(5)]
            await rt.settle(run_id, timeout=10)
            await asyncio.sleep(0.05)
            assert not any(f.done() for f in followers)  # waiting is not the end
            await rt.reply(run_id, "no")
            results = await asyncio.wait_for(asyncio.gather(*followers), 10)
            return results, rt.events(run_id)

    results, stored = run(main())
    assert all(r == stored for r in results)
    assert stored[-1].kind == "completed"


def _ended_without_its_end_event(store, run_id):
    """A run whose row says it completed, its end event not stored (as between the driver's commit of
    the row and its write of the event, or forever when its process died in between)."""
    store.create_run(NewRun(run_id, "tests.runtime.agents:asker", {"n": 1}, owner="w", ttl_seconds=60))
    assert store.finish_run(run_id, "w", "completed", output={"n": 1})


def test_a_subscriber_waits_for_the_end_event_stored_just_after_the_row(store):
    """The driver stores a run's end event after the row that ends it commits: a subscriber that reads
    the row in between gets the event, rather than an iteration that ends without it."""

    async def main():
        async with Runtime(store) as rt:
            _ended_without_its_end_event(store, "late")
            follower = asyncio.ensure_future(_collect(rt.subscribe("late")))
            await asyncio.sleep(0.3)
            assert not follower.done()
            await asyncio.to_thread(store.append_stream, "late", "completed", {"output": {"n": 1}})
            return await asyncio.wait_for(follower, 10)

    assert [e.kind for e in run(main())] == ["completed"]


def test_a_run_that_never_got_its_end_event_ends_the_iteration_after_the_grace(store, monkeypatch):
    monkeypatch.setattr("agentrt._runtime.stream.END_EVENT_GRACE_SECONDS", 0.3)

    async def main():
        async with Runtime(store) as rt:
            _ended_without_its_end_event(store, "died")
            return await asyncio.wait_for(_collect(rt.subscribe("died")), 10)

    assert run(main()) == []


def test_a_subscriber_after_the_stored_end_does_not_wait_for_another(store, monkeypatch):
    monkeypatch.setattr("agentrt._runtime.stream.END_EVENT_GRACE_SECONDS", 60.0)

    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.fanout, {"n": 1})
            await rt.wait(run_id, timeout=10)
            last = rt.events(run_id)[-1]
            assert last.kind == "completed"
            for after in (last.id, last.id + 5, 2**63 - 1):  # at the end, and past it
                assert await asyncio.wait_for(_collect(rt.subscribe(run_id, after)), 10) == []

    run(main())


async def _collect(events):
    return [e async for e in events]


def test_runs_lists_and_filters(store):
    async def main():
        async with Runtime(store) as rt:
            a = await rt.start(A.asker, {"n": 1})
            b = await rt.start(A.summer, {"n": 2})
            await rt.wait(b, timeout=10)
            await rt.settle(a, timeout=10)
            return a, b, rt.runs(), rt.runs(status="waiting"), rt.runs(status="completed")

    a, b, every, waiting, completed = run(main())
    assert {r.run_id for r in every} == {a, b}
    assert [r.run_id for r in waiting] == [a]
    assert [r.run_id for r in completed] == [b]


def test_events_of_an_unknown_run(store):
    async def main():
        async with Runtime(store) as rt:
            with pytest.raises(RunNotFound):
                rt.events("nope")
            with pytest.raises(RunNotFound):
                rt.subscribe("nope")

    run(main())


def test_runtime_takes_a_path_or_a_url(tmp_path: Path):
    async def main(store):
        async with Runtime(store) as rt:
            run_id = await rt.start(A.summer, {"n": 3})
            return (await rt.wait(run_id, timeout=10)), rt.store

    out, opened = run(main(str(tmp_path / "a.db")))
    assert out == A.Total(3)  # 0 + 1 + 2
    assert isinstance(opened, SqliteStore)
    opened.close()
    _out, opened = run(main(tmp_path / "b.db"))
    assert isinstance(opened, SqliteStore) and (tmp_path / "b.db").exists()
    opened.close()
    _out, opened = run(main(f"sqlite:///{tmp_path / 'c.db'}"))
    assert isinstance(opened, SqliteStore) and (tmp_path / "c.db").exists()
    opened.close()
    _out, opened = run(main("memory:"))
    assert isinstance(opened, MemoryStore)
    with pytest.raises(TypeError, match=r"Runtime\(store=\.\.\.\) takes a store object"):
        Runtime(store=42)  # type: ignore[arg-type]


def test_python_api_errors_name_no_cli_flags(store):
    async def main():
        async with Runtime(store) as rt:
            errors = []
            for call in (lambda: rt.status("nope"), lambda: rt.events("nope")):
                with pytest.raises(RunNotFound) as info:
                    call()
                errors.append(str(info.value))
            done = await rt.start(A.summer, {"n": 1}, run_id="r1")
            await rt.wait(done, timeout=10)
            with pytest.raises(RunExists) as info:
                await rt.start(A.summer, {"n": 1}, run_id="r1")
            errors.append(str(info.value))
            with pytest.raises(NotWaiting) as info:
                await rt.reply(done, 1)
            errors.append(str(info.value))
            return errors

    for message in run(main()):
        assert "--" not in message and "agentrt runs" not in message, message


def test_the_cli_adds_its_own_hints(tmp_path: Path):
    store = tmp_path / "s.db"
    SqliteStore(store).close()
    out = cli("resume", "nope", "--store", str(store))
    assert out.returncode == 2
    assert "no run 'nope'" in out.stderr and "agentrt runs" in out.stderr and "--store" in out.stderr


def test_a_batching_store_writes_many_runs_events_in_few_transactions(tmp_path: Path):
    """Each turn of the loop's events go in one batch, and a batch gathers while one is written: ten
    runs at once make far fewer transactions than events, and each run's stream is whole and in order."""

    class Counting(BatchingSqliteStore):
        batches: list[int]

        def append_streams(self, events):
            self.batches.append(len(events))
            super().append_streams(events)

    store = Counting(tmp_path / "agentrt.db")
    store.batches = []

    async def main():
        async with Runtime(store) as rt:
            run_ids = [await rt.start(A.summer, {"n": 5}) for _ in range(10)]
            for run_id in run_ids:
                await rt.wait(run_id, timeout=20)
            return {run_id: rt.events(run_id) for run_id in run_ids}

    streams = run(main())
    store.close()
    for events in streams.values():
        assert [e.id for e in events] == list(range(1, len(events) + 1))
        assert events[0].kind == "started" and events[-1].kind == "completed"
    written = sum(len(events) for events in streams.values())
    assert sum(store.batches) == written
    assert len(store.batches) < written / 2, store.batches
