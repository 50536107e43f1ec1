"""The durable step's write path (issue 16): one commit per step, stream events riding on it,
batched retention, plain journal values and inline sync tools -- what each keeps true."""

from __future__ import annotations

import asyncio
import threading

import pytest

import tests.runtime.agents as A
from agentrt import Runtime, Task, agent, tool, ui_tools
from agentrt.exceptions import RunNotFound
from agentrt.stores import SqliteStore
from agentrt.stores.base import NewRun, prune_due


def run(coro):
    return asyncio.run(coro)


async def _run(store, agent_, input, **kw):
    async with Runtime(store, **kw) as rt:
        run_id = await rt.start(agent_, input)
        return run_id, await rt.wait(run_id, timeout=30)


def _transactions(store: SqliteStore) -> list[list[str]]:
    """The statements of each transaction on ``store``'s connection, as they run."""
    txs: list[list[str]] = []

    def trace(sql: str) -> None:
        if sql.startswith("BEGIN"):
            txs.append([])
        elif txs:
            txs[-1].append(sql)

    store._conn.set_trace_callback(trace)
    return txs


def test_a_step_is_one_commit_and_every_result_is_journaled(sqlite_path):
    store = SqliteStore(sqlite_path)
    txs = _transactions(store)
    run_id, out = run(_run(store, A.summer, {"n": 12}))
    assert out == A.Total(66)
    with_result = [tx for tx in txs if any(q.startswith("INSERT INTO results") for q in tx)]
    assert len(with_result) == 12
    # each result shares its transaction with the checkpoint it leads to; the last (the run then
    # returns: no checkpoint follows) is journaled before the run's outcome
    for tx in with_result[:-1]:
        assert any(q.startswith("INSERT INTO checkpoints") for q in tx), tx
    store._conn.set_trace_callback(None)
    for seq in range(1, 13):
        assert set(store.get_results(run_id, seq)) == {0}
    assert [e.kind for e in store.read_stream(run_id)].count("tool_finished") == 12
    store.close()


async def _add_then_ask(input: A.N, task: Task) -> A.Total:
    total = await task.tools.add(a=input.n, b=1)
    answer = await task.ui.ask("go on?")
    return A.Total(total, [answer])


add_then_ask = agent(
    input=A.N, output=A.Total, tools=[A.add, *ui_tools], run=_add_then_ask, name="add_then_ask"
)


def test_the_result_before_a_wait_is_journaled_with_the_waits_checkpoint(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(add_then_ask, {"n": 1})
            await rt.settle(run_id, timeout=10)
            return run_id

    run_id = run(main())
    rec = store.get_run(run_id)
    assert (rec.status, rec.seq) == ("waiting", 2)
    assert set(store.get_results(run_id, 1)) == {0}


def test_stream_events_are_stored_in_order_and_readable_at_once(sqlite_path):
    store = SqliteStore(sqlite_path)

    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.summer, {"n": 3})
            await rt.wait(run_id, timeout=10)
            return run_id, rt.events(run_id)

    run_id, events = run(main())
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    assert events[-1].kind == "completed"
    other = SqliteStore(sqlite_path)  # another connection sees the same stream: it was committed
    assert other.read_stream(run_id) == events
    other.close()
    store.close()


def test_queued_stream_events_survive_a_failed_transaction_and_close(sqlite_path):
    store = SqliteStore(sqlite_path)
    store.queue_stream("r", "log", '{"i": 1}')
    with pytest.raises(RunNotFound):
        store.save_checkpoint("r", "me", 1, b"cp", {}, [])  # no such run: rolled back
    store.queue_stream("r", "log", '{"i": 2}')
    store.close()  # writes the queue
    again = SqliteStore(sqlite_path)
    assert [(e.id, e.data) for e in again.read_stream("r")] == [(1, {"i": 1}), (2, {"i": 2})]
    again.close()


def test_stream_ids_stay_contiguous_when_two_stores_write_one_run(sqlite_path):
    # a store numbers a run's events after the last id it wrote itself; another store's write in
    # between takes that id, and the insert that meets it looks the last id up again
    a, b = SqliteStore(sqlite_path), SqliteStore(sqlite_path)
    a.queue_stream("r", "log", '{"i": 1}')
    a.flush_stream()
    assert b.append_stream("r", "log", {"i": 2}) == 2
    a.queue_stream("r", "log", '{"i": 3}')
    a.queue_stream("other", "log", '{"i": 1}')
    a.queue_stream("r", "log", '{"i": 4}')
    a.flush_stream()
    assert a.append_stream("r", "log", {"i": 5}) == 5
    assert b.append_stream("r", "log", {"i": 6}) == 6
    a.queue_stream("r", "log", '{"i": 7}')
    with pytest.raises(RunNotFound):
        a.save_checkpoint("r", "me", 1, b"cp", {}, [])  # rolled back: its event is queued again
    assert b.append_stream("r", "log", {"i": 8}) == 7
    a.queue_stream("r", "log", '{"i": 9}')
    a.close()  # writes i=7 and i=9 after b's
    got = [(e.id, e.data["i"]) for e in b.read_stream("r")]
    assert got == [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 8), (8, 7), (9, 9)]
    assert [(e.id, e.data) for e in b.read_stream("other")] == [(1, {"i": 1})]
    b.close()


def test_retention_prunes_in_batches_and_exactly_at_rest(sqlite_path):
    assert not prune_due(100, 100) and prune_due(125, 100) and not prune_due(126, 100)
    assert all(prune_due(seq, 3) for seq in range(4, 10))  # small retentions: every checkpoint
    assert not prune_due(10**6, None)
    store = SqliteStore(sqlite_path, retention=8)
    owner = "host/1/x"
    store.create_run(NewRun("r", "m:a", {}, owner=owner, ttl_seconds=30))
    epoch = store.get_run("r").epoch
    for seq in range(1, 20):
        store.save_checkpoint("r", owner, seq, b"cp%d" % seq, {"kind": "tool"}, [], epoch=epoch)
        kept = [c.seq for c in store.list_checkpoints("r")]
        assert kept[-8:] == list(range(max(1, seq - 7), seq + 1))  # never fewer than the newest 8
        assert len(kept) <= 8 + 8 // 4
    store.set_waiting("r", owner, "reply", None, [], epoch=epoch)
    assert [c.seq for c in store.list_checkpoints("r")] == list(range(12, 20))
    store.close()


@tool(inline=True)
def on_the_loop(x: int) -> dict[str, int]:
    """Return the thread it ran on."""
    return {"x": x, "thread": threading.get_ident()}


async def _run_inline(input: A.N, task: Task) -> A.Total:
    total = 0
    for i in range(input.n):
        total += (await task.tools.on_the_loop(x=i))["thread"] == threading.get_ident()
    return A.Total(total)


inline_agent = agent(input=A.N, output=A.Total, tools=[on_the_loop], run=_run_inline, name="inline_agent")


def test_an_inline_sync_tool_runs_on_the_loop_thread(store):
    _, out = run(_run(store, inline_agent, {"n": 3}))
    assert out == A.Total(3)  # the agent steps on the loop's thread, and so did every call


def test_inline_is_for_sync_tools_without_a_timeout():
    async def coro_tool() -> int:
        return 1

    def quick() -> int:
        return 1

    with pytest.raises(TypeError, match="inline=True is for sync"):
        tool(inline=True)(coro_tool)
    with pytest.raises(ValueError, match="no timeout can stop it"):
        tool(inline=True, timeout=1)(quick)
    with pytest.raises(TypeError, match="True or False"):
        tool(inline="yes")(quick)  # type: ignore[call-overload]
    assert not tool(quick).inline


async def _double_then_add(input: A.N, task: Task) -> A.Total:
    x = await task.tools.double(x=input.n, delay=0.3)
    y = await task.tools.add(a=x, b=1)
    return A.Total(y)


doubler = agent(input=A.N, output=A.Total, tools=[A.double, A.add], run=_double_then_add, name="doubler")


def test_drain_waits_for_the_call_a_driver_makes_itself(sqlite_path):
    # a run's one pending call runs in its driver's task (no task of its own): drain still waits
    # for it, and its result is journaled, so resuming never makes it again
    store = SqliteStore(sqlite_path)

    async def main():
        rt = Runtime(store)
        await rt.__aenter__()
        run_id = await rt.start(doubler, {"n": 5})
        while not A.calls_of(run_id):  # the doubling is in flight
            await asyncio.sleep(0.01)
        await rt.drain(grace_seconds=5)
        return run_id

    run_id = run(main())
    assert set(store.get_results(run_id, 1)) == {0}

    async def again():
        async with Runtime(store) as rt:
            await rt.resume(run_id)
            return await rt.wait(run_id, timeout=10)

    assert run(again()) == A.Total(11)
    assert [c for c in A.calls_of(run_id) if c[0] == "double"] == [("double", f"{run_id}:1")]
    store.close()
