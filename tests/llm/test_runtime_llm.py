"""Model requests through the runtime: journaled answers, usage, budgets, traces, observers."""

from __future__ import annotations

import asyncio
import json

import pytest

from agentrt import MemoryStore, Runtime
from agentrt.llm import (
    Executors,
    MissingExecutor,
    ModelCallBudgetExceeded,
    ModelToolCall,
    Scripted,
    ScriptedExecutors,
    Usage,
    with_token_budget,
)
from agentrt.observe import JsonlTraceExporter, StructlogTraceSink
from agentrt.stores import SqliteStore
from agentrt.testing import capture_trace
from tests.llm import agents as A


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    s = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "agentrt.db")
    yield s
    s.close()


def everything_script() -> ScriptedExecutors:
    return ScriptedExecutors(
        {
            "plain": [Scripted("hi there", usage={"prompt_tokens": 7, "completion_tokens": 2})],
            "summary": ['{"title": 3}', {"title": "T", "points": ["a", "b"]}],
            "stream": [Scripted("one two three", usage=Usage(1, 3, 4))],
            "choose": [{"type": "Maybe"}, {"type": "Reject", "why": "risky", "severity": 2}],
        }
    )


def drive(store, agent, input, **kw):
    async def main():
        async with Runtime(store, **kw) as rt:
            run_id = await rt.start(agent, input)
            return run_id, await rt.wait(run_id, timeout=30)

    return asyncio.run(main())


def test_every_kind_of_request_end_to_end(store):
    script = everything_script()
    chunks, results, emitted = [], [], []
    with capture_trace() as traces:
        run_id, out = drive(
            store,
            A.everything,
            {"text": "hello"},
            executors=script,
            on_chunk=lambda chunk, request: chunks.append((request.src, chunk)),
            on_result=lambda request, result: results.append(
                (request.src, len(request.attempts), result.raw)
            ),
            on={"SCORED": emitted.append},
        )
    assert out.text == "hi there"
    assert out.notes == [
        "text hi there 9",
        "summary T ['a', 'b'] attempts=2",
        "stream one two three",
        "decide Reject(why='risky', severity=2)",
    ]
    assert chunks == [("stream", "one"), ("stream", " two"), ("stream", " three")]
    # once per attempt, with the refused attempts of the request so far
    assert [(src, n) for src, n, _raw in results] == [
        ("plain", 0), ("summary", 0), ("summary", 1), ("stream", 0), ("choose", 0), ("choose", 1),
    ]  # fmt: skip
    assert isinstance(results[0][2], Scripted)
    assert emitted == [A.Scored(4)]
    # the second summary request carried the first, refused answer and why
    summary_calls = [c for c in script.calls if c.src == "summary"]
    assert summary_calls[1].attempts[0].output == '{"title": 3}'
    assert "title" in summary_calls[1].attempts[0].error
    assert "did not match" in summary_calls[1].chat_messages()[-1]["content"]
    plain = script.calls[0]
    assert (plain.system, plain.model, plain.prompt) == ("Be brief.", "quick", "hello")
    assert plain.id == f"{run_id}:1.0"
    # usage summed per run, with every attempt counted
    assert store.get_run(run_id).usage == {
        "model_calls": 6, "input_tokens": 8, "output_tokens": 5, "total_tokens": 13,
    }  # fmt: skip
    # one ordered trace: seq 0.., request/result pairs, chunks inside the stream request
    assert [t.seq for t in traces] == list(range(len(traces)))
    types = [t.type for t in traces]
    assert types[0] == "run" and types[-1] == "end"
    assert types.count("request") == 4 and types.count("result") == 4 and types.count("chunk") == 3
    stream_req = next(i for i, t in enumerate(traces) if t.type == "request" and t.data["src"] == "stream")
    assert [t.type for t in traces[stream_req : stream_req + 5]] == [
        "request",
        "chunk",
        "chunk",
        "chunk",
        "result",
    ]
    assert "emit" in types and "checkpoint" in types
    assert all(t.run_id == run_id for t in traces)
    assert script.remaining() == 0


def test_a_model_answer_is_journaled_and_never_requested_again(tmp_path):
    """Kill the runtime (close it) while the 2nd call is in flight; a new runtime restores the run
    and asks only for what was not answered yet."""
    path = tmp_path / "agentrt.db"
    gate = asyncio.Event

    async def first():
        release = gate()
        calls = []

        async def generate_text(request):
            calls.append(request.id)
            if request.seq == 2:
                await release.wait()  # stays in flight until the runtime is closed
            return f"<{request.seq}>"

        store = SqliteStore(path)
        rt = Runtime(store, executors=Executors(generate_text=generate_text))
        run_id = await rt.start(A.chain, {"text": "x", "n": 3})
        while len(calls) < 2:
            await asyncio.sleep(0.01)
        await rt.close()
        store.close()
        return run_id, calls

    run_id, first_calls = asyncio.run(first())
    assert first_calls == [f"{run_id}:1.0", f"{run_id}:2.0"]

    async def second():
        calls = []

        async def generate_text(request):
            calls.append(request.id)
            return f"<{request.seq}>"

        store = SqliteStore(path)
        async with Runtime(store, executors=Executors(generate_text=generate_text)) as rt:
            await rt.resume(run_id)
            out = await rt.wait(run_id, timeout=30)
        usage = store.get_run(run_id).usage
        store.close()
        return out, calls, usage

    out, calls, usage = asyncio.run(second())
    assert calls == [f"{run_id}:2.0", f"{run_id}:3.0"]  # seq 1 came from the journal
    assert out.notes == ["<1>", "<2>", "<3>"]
    assert usage["model_calls"] == 3  # the abandoned in-flight call was never journaled


def test_max_model_calls_fails_the_run_with_its_cause(store):
    script = ScriptedExecutors({"again": [f"a{i}" for i in range(10)]})

    async def main():
        async with Runtime(store, executors=script, max_model_calls=4) as rt:
            run_id = await rt.start(A.looping, {})
            with pytest.raises(ModelCallBudgetExceeded) as info:
                await rt.wait(run_id, timeout=30)
            return run_id, info.value

    run_id, error = asyncio.run(main())
    assert error.cause == "max-model-calls" and error.limit == 4
    rec = store.get_run(run_id)
    assert rec.status == "failed"
    assert rec.error["cause"] == "max-model-calls"
    assert "max_model_calls=4" in rec.error["message"]
    assert rec.usage["model_calls"] == 4
    assert len(script.calls) == 4
    # the agent's `finally` did not run: the budget ends the run, it is not an exception inside it
    assert not [e for e in store.list_events(run_id) if e.kind == "log"]


def test_the_budget_ends_a_run_that_ignores_failures_in_gather_settled(store):
    script = ScriptedExecutors({"*": [f"x{i}" for i in range(50)]})

    async def main():
        async with Runtime(store, executors=script, max_model_calls=5) as rt:
            run_id = await rt.start(A.settled_loop, {})
            with pytest.raises(ModelCallBudgetExceeded):
                await rt.wait(run_id, timeout=30)
            return run_id

    run_id = asyncio.run(main())
    assert store.get_run(run_id).error["cause"] == "max-model-calls"
    assert len(script.calls) == 5


def test_a_reply_is_refused_while_the_runtime_lacks_the_executor_the_run_needs_next():
    store = MemoryStore()

    async def first():
        async with Runtime(store, executors=ScriptedExecutors({"after": ["fine"]})) as rt:
            run_id = await rt.start(A.ask_then_model, {})
            assert (await rt.settle(run_id, timeout=10)).waiting_on == "reply"
            return run_id

    run_id = asyncio.run(first())

    async def without_executors():
        async with Runtime(store) as rt:
            with pytest.raises(MissingExecutor, match="ask_then_model"):
                await rt.reply(run_id, "yes")

    asyncio.run(without_executors())
    rec = store.get_run(run_id)
    assert rec.status == "waiting" and store.get_results(run_id, rec.seq) == {}  # nothing lost

    async def with_executors():
        async with Runtime(store, executors=ScriptedExecutors({"after": ["fine"]})) as rt:
            await rt.reply(run_id, "yes")
            return await rt.wait(run_id, timeout=10)

    assert asyncio.run(with_executors()).text == "fine"


def test_default_max_model_calls_is_100():
    assert Runtime(MemoryStore()).max_model_calls == 100


def test_gathered_model_calls_run_concurrently_and_keep_source_order(store):
    started, release = [], asyncio.Event

    async def main():
        gate = release()

        async def generate_text(request):
            started.append(request.src)
            if len(started) == 3:
                gate.set()
            await asyncio.wait_for(gate.wait(), 5)  # all three are in flight at once
            return request.src.upper()

        async with Runtime(store, executors=Executors(generate_text=generate_text)) as rt:
            run_id = await rt.start(A.gathered, {"text": "w", "n": 3})
            return await rt.wait(run_id, timeout=30)

    out = asyncio.run(main())
    assert out == A.Answer("W", ["PART0", "PART1", "PART2"])
    assert sorted(started) == ["part0", "part1", "part2"]


def test_tool_calls_requested_by_the_model_reach_the_agent(store):
    script = ScriptedExecutors(
        {
            "plan": [Scripted("", tool_calls=(ModelToolCall("c1", "lookup", {"word": "abc"}),))],
            "final": ["done"],
        }
    )
    _run_id, out = drive(store, A.with_tools, {"text": "look up abc"}, executors=script)
    assert out == A.Answer("done", ["ABC"])
    plan = script.calls[0]
    assert plan.tools[0]["name"] == "lookup" and plan.tools[0]["parameters"]["required"] == ["word"]
    final = script.calls[1]
    assert final.messages[-1] == {"role": "tool", "tool_call_id": "c1", "content": "ABC"}


def test_exhausted_structured_output_and_decisions_are_typed_errors_at_the_await(store):
    script = ScriptedExecutors(
        {"summary": ["not json", {"title": 1}], "choose": [{"type": "Nope"}, "neither"]}
    )
    run_id, out = drive(store, A.careful, {}, executors=script)
    assert out.notes == ["structured 2 summary", "decision 2 ['Approve', 'Reject']"]
    assert store.get_run(run_id).usage["model_calls"] == 4


def test_executor_errors_reach_the_agent_and_fail_the_run(store):
    script = ScriptedExecutors({"step": [ConnectionResetError("provider went away")]})

    async def main():
        async with Runtime(store, executors=script) as rt:
            run_id = await rt.start(A.chain, {"n": 1})
            with pytest.raises(ConnectionResetError, match="provider went away"):
                await rt.wait(run_id, timeout=30)
            return run_id

    run_id = asyncio.run(main())
    assert store.get_run(run_id).error["type"] == "ConnectionResetError"


def test_a_dry_script_names_the_request():
    script = ScriptedExecutors({"step": ["one"]})
    store = MemoryStore()

    async def main():
        async with Runtime(store, executors=script) as rt:
            run_id = await rt.start(A.chain, {"text": "abc", "n": 2})
            with pytest.raises(Exception) as info:
                await rt.wait(run_id, timeout=30)
            return info.value

    error = asyncio.run(main())
    assert type(error).__name__ == "ScriptExhausted"
    assert "'step'" in str(error) and "generate_text" in str(error) and "step 1: one" in str(error)


def test_missing_executor_is_refused_before_the_run_starts_and_on_resume():
    store = MemoryStore()

    async def main():
        async with Runtime(store, executors=Executors(generate_text=lambda r: None)) as rt:
            with pytest.raises(MissingExecutor) as info:
                await rt.start(A.everything, {})
            return info.value

    error = asyncio.run(main())
    assert error.agent == "everything" and error.method in ("stream_text", "decide")
    assert "stream_text" in str(error) and "decide" in str(error) and "agents.py:" in str(error)
    assert store.list_runs() == []


def test_sub_agents_needs_are_checked_with_the_parent():
    async def main():
        async with Runtime(MemoryStore()) as rt:
            with pytest.raises(MissingExecutor, match="'chain'"):
                await rt.start(A.parent, {})

    asyncio.run(main())


def test_a_request_the_scan_cannot_see_fails_at_its_await():
    script = ScriptedExecutors({"hidden": ["x"]})  # has generate_text/stream_text/decide
    store = MemoryStore()

    async def main():
        async with Runtime(store, executors=Executors(generate_text=script.generate_text)) as rt:
            run_id = await rt.start(A.indirect, {})
            return await rt.wait(run_id, timeout=30)

    out = asyncio.run(main())
    assert out.text == "MissingExecutor"
    assert "stream_text" in out.notes[0] and "'hidden'" in out.notes[0]


def test_sub_agents_share_the_executors_and_count_their_own_usage(store):
    script = ScriptedExecutors({"step": [Scripted("c", usage=Usage(1, 1, 2))]})
    run_id, out = drive(store, A.parent, {"text": "p"}, executors=script)
    assert out == A.Answer("c", ["child"])
    child = store.children(run_id)[0]
    assert child.usage["total_tokens"] == 2
    assert store.get_run(run_id).usage == {}


def test_token_budget_wrapper_reads_the_journaled_usage(store):
    script = ScriptedExecutors({"step": [Scripted(f"a{i}", usage=Usage(5, 5, 10)) for i in range(5)]})
    executors = with_token_budget(script, 25)

    async def main():
        async with Runtime(store, executors=executors) as rt:
            run_id = await rt.start(A.chain, {"n": 5})
            with pytest.raises(Exception) as info:
                await rt.wait(run_id, timeout=30)
            return run_id, info.value

    run_id, error = asyncio.run(main())
    assert type(error).__name__ == "TokenBudgetExceeded" and error.used == 30 and error.limit == 25
    assert len(script.calls) == 3
    assert store.get_run(run_id).error["cause"] == "max-tokens"


def test_jsonl_and_structlog_trace_sinks(tmp_path):
    import structlog

    path = tmp_path / "trace.jsonl"
    logged = []

    def capture(logger, method, event_dict):
        logged.append((method, event_dict["event"], event_dict["run_id"]))
        raise structlog.DropEvent

    logger = structlog.wrap_logger(structlog.PrintLogger(), processors=[capture])
    with JsonlTraceExporter(str(path)) as exporter:
        run_id, _out = drive(
            MemoryStore(),
            A.everything,
            {},
            executors=everything_script(),
            on_trace=[exporter, StructlogTraceSink(logger)],
        )
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["seq"] for line in lines] == list(range(len(lines)))
    assert {line["run_id"] for line in lines} == {run_id}
    assert all(isinstance(line["at"], float) for line in lines)
    assert lines[0]["type"] == "run" and lines[-1]["type"] == "end" and lines[-1]["kind"] == "completed"
    chunk = next(line for line in lines if line["type"] == "chunk")
    assert chunk["chunk"] == "one" and chunk["src"] == "stream"
    assert [name for _m, name, _r in logged] == [line["type"] for line in lines]
    assert {m for m, name, _r in logged if name == "chunk"} == {"debug"}


def test_observers_that_raise_do_not_change_the_run_and_are_logged_once_then_switched_off(store, caplog):
    calls = []

    def boom(*args):
        calls.append(args)
        raise RuntimeError("observer bug")

    with capture_trace() as traces:
        _run_id, out = drive(
            store,
            A.everything,
            {},
            executors=everything_script(),
            on_trace=boom,
            on_chunk=boom,
            on_result=boom,
            on={"*": boom},
        )
    assert out.text == "hi there"
    # Each of the four registrations was called once, raised, and was never called again
    # (the run reports far more than four events: chunks, results, emits).
    assert len(calls) == 4 and len(traces) > 10
    warned = [r for r in caplog.records if r.name == "agentrt.observe" and r.levelname == "WARNING"]
    roles = sorted(r.args[0] for r in warned)
    assert roles == ["on['*']", "on_chunk", "on_result", "on_trace"]
    assert all(r.exc_info and "observer bug" in str(r.exc_info[1]) for r in warned)
    assert "switched off" in warned[0].getMessage()


def test_an_executor_whose_own_work_is_cancelled_fails_the_request_instead_of_hanging(store):
    async def generate_text(request):
        inner = asyncio.ensure_future(asyncio.sleep(10))
        asyncio.get_running_loop().call_soon(inner.cancel)
        await inner  # raises CancelledError, though nobody cancelled the runtime's task

    async def main():
        async with Runtime(store, executors=Executors(generate_text=generate_text)) as rt:
            run_id = await rt.start(A.chain, {"n": 1})
            with pytest.raises(RuntimeError, match="was cancelled"):
                await rt.wait(run_id, timeout=10)

    asyncio.run(main())


def test_a_tool_whose_own_work_is_cancelled_raises_at_the_await_instead_of_hanging(store):
    _run_id, out = drive(store, A.tool_cancel, {})
    assert out.text == "caught" and "'cancels_itself' was cancelled from inside" in out.notes[0]


def test_offering_a_tool_the_agent_lacks_fails_the_request_and_closes_it_in_the_trace(store):
    script = ScriptedExecutors()
    with capture_trace() as traces:
        _run_id, out = drive(store, A.unknown_tool, {}, executors=script)
    assert out.text == "refused" and "'no_such_tool'" in out.notes[0] and "unknown_tool" in out.notes[0]
    assert script.calls == []  # no model was asked
    result = next(t for t in traces if t.kind == "model_result")
    assert result.data["ok"] is False and result.data["calls"] == 0 and "LookupError" in result.data["error"]
