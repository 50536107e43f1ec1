"""The durable scheduler: tools, errors, gather, sub-agents, replies, timers, budget, recovery."""

from __future__ import annotations

import asyncio

import pytest

from agentrt import (
    LeaseHeld,
    NotWaiting,
    RunNotFound,
    Runtime,
    SchemaError,
    StepBudgetExceeded,
    ToolError,
)
from agentrt.exceptions import ForeignAwaitable
from agentrt.stores import MemoryStore, SqliteStore
from tests.runtime import agents as A


def run(coro):
    return asyncio.run(coro)


async def _run(store, agent, input, **kw):
    async with Runtime(store, **kw) as rt:
        run_id = await rt.start(agent, input)
        return run_id, await rt.wait(run_id, timeout=30)


def test_sequential_tool_calls(store):
    run_id, out = run(_run(store, A.summer, {"n": 5}))
    assert out == A.Total(10)
    rec = store.get_run(run_id)
    assert rec.status == "completed" and rec.output == {"total": 10, "notes": []}
    assert rec.agent == "tests.runtime.agents:summer"
    assert [seq for seq, _ in [(c.seq, c) for c in store.list_checkpoints(run_id)]] == [1, 2, 3, 4, 5]
    keys = [k for _t, k in A.calls_of(run_id)]
    assert keys == [f"{run_id}:{i}" for i in range(1, 6)]  # one call per seq, key RUN:SEQ


def test_fanout_results_in_source_order(store):
    run_id, out = run(_run(store, A.fanout, {"n": 6}))
    assert out == A.Total(30)
    keys = sorted(k for _t, k in A.calls_of(run_id))
    assert f"{run_id}:1.0" in keys and f"{run_id}:1.5" in keys and f"{run_id}:2" in keys


def test_tool_errors_reach_the_agent(store):
    _run_id, out = run(_run(store, A.errors, {"n": 0}))
    assert out.notes == [
        "typed github 3",
        "ToolError tests.runtime.agents.fail_untyped.<locals>.Unimportable: nope",
        "fulfilled 3 rejected QuotaExceeded",
        "gather failed fast y",
    ]


def test_uncaught_tool_error_fails_the_run_with_the_original_type(store):
    async def main():
        async with Runtime(store) as rt:
            typed = await rt.start(A.uncaught, {"n": 0})
            untyped = await rt.start(A.uncaught, {"n": 1})
            with pytest.raises(A.QuotaExceeded) as info:
                await rt.wait(typed, timeout=10)
            assert info.value.args == ("uncaught", 3)
            with pytest.raises(ToolError) as info2:
                await rt.wait(untyped, timeout=10)
            assert info2.value.type_name.endswith("Unimportable") and info2.value.message == "really nope"
            return typed, untyped

    typed, untyped = run(main())
    t, u = store.get_run(typed), store.get_run(untyped)
    assert t.status == "failed" and t.error["type"] == "tests.runtime.agents.QuotaExceeded"
    assert "quota" not in t.error["message"] and "uncaught" in t.error["message"]
    assert u.error["type"].endswith("Unimportable") and u.error["message"] == "really nope"
    assert "fail_untyped" in u.error["traceback"]


def test_sub_agents(store):
    run_id, out = run(_run(store, A.parent, {"n": 5}))
    assert out.total == 1005 + 1001 + 1002 + 2
    assert out.notes == [f"{run_id}.1", f"{run_id}.2.0"]
    children = {c.run_id: c for c in store.children(run_id)}
    assert set(children) == {f"{run_id}.1", f"{run_id}.2.0", f"{run_id}.2.1"}
    assert all(c.status == "completed" and c.parent_id == run_id for c in children.values())


def test_ask_reply_and_timer(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.asker, {"n": 7})
            rec = await rt.settle(run_id, timeout=10)
            assert rec.status == "waiting" and rec.waiting_on == "reply"
            assert rec.pending == {"kind": "ask", "prompt": {"question": "approve?", "n": 7}}
            assert run_id not in rt.driver.lives  # a waiting run leaves memory
            with pytest.raises(RunNotFound):
                await rt.reply(run_id + "x", 1)
            summer = await rt.start(A.summer, {"n": 2})
            await rt.wait(summer, timeout=10)
            with pytest.raises(NotWaiting, match="completed"):
                await rt.reply(summer, 1)

    run(main())

    async def main2():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.asker, {"n": 7})
            await rt.settle(run_id, timeout=10)
            await rt.reply(run_id, "yes")
            with pytest.raises(NotWaiting, match=r"already has a reply|not waiting"):
                await rt.reply(run_id, "again")
            out = await rt.wait(run_id, timeout=10)
            with pytest.raises(NotWaiting, match="completed"):
                await rt.reply(run_id, "late")
            return run_id, out

    run_id, out = run(main2())
    assert out == A.Total(7, ["approved"])
    kinds = [(e.kind, e.level) for e in store.list_events(run_id)]
    assert kinds == [("notify", None), ("log", "info"), ("emit", None)]
    assert store.list_events(run_id)[2].data == {"type": "Total", "data": {"total": 7, "notes": ["emitted"]}}


def test_reply_reaches_a_waiting_sub_agent(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.ask_parent, {"n": 2})
            rec = await rt.settle(run_id, timeout=10)
            assert rec.status == "waiting" and rec.waiting_on == "child"
            target = await rt.reply(run_id, "no")
            assert target == f"{run_id}.1"
            return await rt.wait(run_id, timeout=10)

    assert run(main()) == A.Total(1, ["rejected: no"])


def test_durable_timers(store):
    _run_id, out = run(_run(store, A.sleeper, {"n": 2}))
    assert out == A.Total(4)


def test_sync_tools_run_in_the_bounded_pool(store):
    async def main():
        async with Runtime(store, max_workers=4) as rt:
            A.CONCURRENCY["max"] = 0
            run_id = await rt.start(A.slow_tools, {"n": 12})
            return await rt.wait(run_id, timeout=20)

    assert run(main()) == A.Total(12)
    assert 2 <= A.CONCURRENCY["max"] <= 4  # in parallel threads, never more than max_workers


def test_invalid_input_is_refused_before_any_run_exists(store):
    async def main():
        async with Runtime(store) as rt:
            with pytest.raises(SchemaError, match=r"input\.n of agent 'summer': expected integer"):
                await rt.start(A.summer, {"n": "x"})

    run(main())
    assert store.list_runs() == []


def test_output_is_validated_and_converted(store):
    async def main():
        async with Runtime(store) as rt:
            bad = await rt.start(A.bad_output, {"n": 1})
            with pytest.raises(SchemaError, match=r"output\.total"):
                await rt.wait(bad, timeout=10)
            good = await rt.start(A.dict_output, {"n": 4})
            return await rt.wait(good, timeout=10)

    assert run(main()) == A.Total(4)


@pytest.mark.parametrize(
    ("agent", "exc", "words"),
    [
        (A.foreign, ForeignAwaitable, "AR102"),
        (A.raw, TypeError, "AR102"),
    ],
)
def test_agent_mistakes_fail_the_run_clearly(store, agent, exc, words):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(agent, {"n": 1})
            with pytest.raises(exc, match=words):
                await rt.wait(run_id, timeout=10)
            return run_id

    run_id = run(main())
    assert store.get_run(run_id).status == "failed"


def test_step_budget_stops_a_computing_agent(store):
    async def main():
        async with Runtime(store, step_budget_seconds=0.2) as rt:
            spinner = await rt.start(A.spinner, {"seconds": 5})
            swallower = await rt.start(A.swallower, {"seconds": 5})
            with pytest.raises(StepBudgetExceeded) as info:
                await rt.wait(spinner, timeout=10)
            with pytest.raises(StepBudgetExceeded):
                await rt.wait(swallower, timeout=10)
            return spinner, info.value

    run_id, error = run(main())  # the error itself shows the spin was interrupted (it never returns)
    assert "Agent ran too many synchronous steps without yielding" in str(error)
    assert error.function == "spin" and error.filename.endswith("agents.py")
    rec = store.get_run(run_id)
    assert rec.error["code"] == "AR110" and rec.error["function"] == "spin"
    assert "spin (" in rec.error["message"] and str(error.lineno) in rec.error["message"]


def test_step_budget_is_configurable(store):
    async def main():
        async with Runtime(store, step_budget_seconds=None) as rt:
            run_id = await rt.start(A.spinner, {"seconds": 0.3})
            return await rt.wait(run_id, timeout=10)

    assert run(main()) == A.Total(0)


def test_resume_after_the_host_stopped(store):
    """A runtime closed mid-run (tool in flight) leaves a run another runtime resumes without repeats."""

    async def first():
        rt = Runtime(store)
        run_id = await rt.start(A.summer, {"n": 200})
        while store.get_run(run_id).seq < 10:
            await asyncio.sleep(0.001)
        await rt.close()
        return run_id

    run_id = run(first())
    before = len(A.calls_of(run_id))
    assert store.get_run(run_id).status == "running"

    async def second():
        async with Runtime(store) as rt:
            await rt.resume(run_id)
            return await rt.wait(run_id, timeout=20)

    assert run(second()) == A.Total(sum(range(200)))
    keys = [k for _t, k in A.calls_of(run_id)]
    assert len(keys) - len(set(keys)) <= 1  # at most the one call in flight ran twice
    assert len(set(keys)) == 200 and before >= 9


def test_leases_keep_two_runtimes_apart(sqlite_path):
    async def main():
        s1, s2 = SqliteStore(sqlite_path), SqliteStore(sqlite_path)
        rt1, rt2 = Runtime(s1), Runtime(s2)
        run_id = await rt1.start(A.slow_tools, {"n": 40})  # holds the lease once start returns: no sleep
        with pytest.raises(LeaseHeld, match="being driven by another process"):
            await rt2.resume(run_id)
        out = await rt1.wait(run_id, timeout=20)
        await rt1.close()
        await rt2.close()
        s1.close()
        s2.close()
        return out

    assert run(main()) == A.Total(40)


def test_two_hundred_concurrent_runs(store):
    async def main():
        async with Runtime(store) as rt:
            ids = [await rt.start(A.fanout, {"n": 5}) for _ in range(200)]
            return await asyncio.gather(*(rt.wait(i, timeout=60) for i in ids)), ids

    outs, ids = run(main())  # each wait is bounded (60 s): a stuck run fails with TimeoutError
    assert outs == [A.Total(20)] * 200
    assert all(store.get_run(i).status == "completed" for i in ids)


def test_unknown_run():
    async def main():
        async with Runtime(MemoryStore()) as rt:
            with pytest.raises(RunNotFound, match=r"Runtime\.runs\(\)"):
                await rt.resume("missing")
            with pytest.raises(RunNotFound):
                rt.status("missing")

    run(main())


def test_checkpoint_retention(sqlite_path):
    store = SqliteStore(sqlite_path, retention=3)
    run_id, _ = run(_run(store, A.summer, {"n": 10}))
    assert [c.seq for c in store.list_checkpoints(run_id)] == [8, 9, 10]
    assert all(c.pending["kind"] == "tool" for c in store.list_checkpoints(run_id))
    store.close()


def test_an_agent_defined_in_a_function_runs_in_its_runtime(store):
    import attrs

    from agentrt import Task, agent, tool

    @tool
    def shout(text: str) -> str:
        return text.upper()

    async def run_local(input: A.N, task: Task) -> A.Total:
        words = []
        for i in range(input.n):
            words.append(await task.tools.shout(text=f"w{i}"))
        return A.Total(len(words), words)

    local = agent(input=A.N, output=A.Total, tools=[shout], run=run_local, name="local")
    run_id, out = run(_run(store, local, {"n": 3}))
    assert out == A.Total(3, ["W0", "W1", "W2"])
    assert store.get_run(run_id).agent.startswith("<local>:local@")
    assert attrs.has(A.Total)


def test_a_runtime_closes_the_store_it_opened_and_leaves_one_passed_in_open(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTRT_STORE", str(tmp_path / "default.db"))
    passed_in = SqliteStore(tmp_path / "mine.db")

    async def main():
        async with Runtime() as own, Runtime(passed_in):
            return own.store

    opened = run(main())
    assert opened._conn is None  # closed: no connection left for the garbage collector to warn about
    assert passed_in._conn is not None
    passed_in.close()
