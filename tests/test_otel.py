"""agentrt.otel: real runs' traces become OpenTelemetry spans (SDK in-memory exporter, private provider)."""

from __future__ import annotations

import asyncio
import importlib
import sys
import threading
import time

import pytest

# opentelemetry-sdk is part of the test extra: a missing SDK fails here, it does not skip the module.
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agentrt import MemoryStore, Runtime
from agentrt.llm import Scripted, ScriptedExecutors, Usage
from agentrt.observe import TraceEvent
from agentrt.otel import MAX_ATTRIBUTE_CHARS, OpenTelemetryTraceSink
from examples.approval_flow import refund
from tests.llm import agents as A
from tests.llm.test_runtime_llm import everything_script


@pytest.fixture
def otel():
    """A private provider (the global one is left alone) exporting finished spans to memory."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def sink_for(otel, **kw) -> OpenTelemetryTraceSink:
    provider, _exporter = otel
    return OpenTelemetryTraceSink(provider.get_tracer("test"), **kw)


def drive(agent, input, sink, **kw):
    async def main():
        async with Runtime(MemoryStore(), on_trace=sink, **kw) as rt:
            run_id = await rt.start(agent, input)
            try:
                return run_id, await rt.wait(run_id, timeout=30)
            except Exception as exc:
                return run_id, exc

    return asyncio.run(main())


def finished(otel) -> list[ReadableSpan]:
    return list(otel[1].get_finished_spans())


def by_name(spans, name) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def test_everything_run_becomes_a_run_span_with_request_children(otel):
    sink = sink_for(otel)
    run_id, out = drive(A.everything, {}, sink, executors=everything_script())
    assert out.text == "hi there"
    spans = finished(otel)
    assert sorted(s.name for s in spans) == [
        "agentrt.llm decide",
        "agentrt.llm generate_text",
        "agentrt.llm generate_text",
        "agentrt.llm stream_text",
        "agentrt.run",
    ]
    (run,) = by_name(spans, "agentrt.run")
    assert run.parent is None
    assert run.attributes["agentrt.run_id"] == run_id and run.attributes["agentrt.agent"] == "everything"
    assert run.status.status_code is StatusCode.OK
    requests = [s for s in spans if s is not run]
    assert {parent_id(s) for s in requests} == {run.context.span_id}
    assert {s.context.trace_id for s in spans} == {run.context.trace_id}
    assert all(run.start_time <= s.start_time <= s.end_time <= run.end_time for s in requests)
    # in journal order, with the request's own attributes and its usage
    assert [s.attributes["agentrt.src"] for s in sorted(requests, key=lambda s: s.start_time)] == [
        "plain", "summary", "stream", "choose",
    ]  # fmt: skip
    plain = next(s for s in requests if s.attributes["agentrt.src"] == "plain")
    assert plain.attributes["agentrt.seq"] == 1 and plain.attributes["agentrt.idx"] == 0
    assert (
        plain.attributes["agentrt.model"] == "quick" and plain.attributes["gen_ai.request.model"] == "quick"
    )
    assert plain.attributes["gen_ai.usage.input_tokens"] == 7
    assert plain.attributes["gen_ai.usage.output_tokens"] == 2
    assert plain.attributes["agentrt.ok"] is True and plain.attributes["agentrt.calls"] == 1
    summary = next(s for s in requests if s.attributes["agentrt.src"] == "summary")
    assert summary.attributes["agentrt.calls"] == 2 and summary.status.status_code is StatusCode.UNSET
    # streamed chunks: events on the stream span, sizes only
    (stream,) = by_name(spans, "agentrt.llm stream_text")
    assert stream.attributes["gen_ai.usage.output_tokens"] == 3
    chunks = [e for e in stream.events if e.name == "chunk"]
    assert [dict(e.attributes) for e in chunks] == [{"size": 3}, {"size": 4}, {"size": 6}]
    assert all(stream.start_time <= e.timestamp <= stream.end_time for e in chunks)
    # checkpoints and the emitted event: on the run span, scalar data as attributes
    checkpoints = [e for e in run.events if e.name == "checkpoint"]
    assert [e.attributes["seq"] for e in checkpoints] == [1, 2, 3, 4]
    assert all(isinstance(e.attributes["size_bytes"], int) for e in checkpoints)
    assert '"method": "generate_text"' in checkpoints[0].attributes["request"]  # JSON-encoded
    assert all(len(e.attributes["request"]) <= MAX_ATTRIBUTE_CHARS for e in checkpoints)
    (emit,) = [e for e in run.events if e.name == "emit"]
    assert emit.attributes["type"] == "SCORED" and emit.attributes["data"] == '{"score": 4}'
    assert "level" not in emit.attributes  # None is dropped


def test_record_chunks_adds_the_text(otel):
    sink = sink_for(otel, record_chunks=True)
    drive(A.everything, {}, sink, executors=everything_script())
    (stream,) = by_name(finished(otel), "agentrt.llm stream_text")
    assert [e.attributes["text"] for e in stream.events if e.name == "chunk"] == ["one", " two", " three"]


def test_sub_agent_span_is_a_child_of_the_parent_run_span(otel):
    sink = sink_for(otel)
    script = ScriptedExecutors({"step": [Scripted("c", usage=Usage(1, 1, 2))]})
    run_id, out = drive(A.parent, {"text": "p"}, sink, executors=script)
    assert out == A.Answer("c", ["child"])
    spans = finished(otel)
    runs = by_name(spans, "agentrt.run")
    parent_runs = sorted(
        (s for s in runs if s.attributes["agentrt.run_id"] == run_id), key=lambda s: s.start_time
    )
    (child,) = [s for s in runs if s.attributes["agentrt.run_id"] != run_id]
    # the parent parks while its child runs: two stretches, the second linked to the first
    first, second = parent_runs
    assert first.attributes["agentrt.waiting_on"] == "child" and first.status.status_code is StatusCode.UNSET
    assert second.status.status_code is StatusCode.OK and second.attributes["agentrt.agent"] == "parent"
    assert [link.context.span_id for link in second.links] == [first.context.span_id]
    assert child.attributes["agentrt.agent"] == "chain"
    assert child.attributes["agentrt.parent_run_id"] == run_id
    assert parent_id(child) == first.context.span_id and child.context.trace_id == first.context.trace_id
    assert child.status.status_code is StatusCode.OK
    (step,) = by_name(spans, "agentrt.llm generate_text")
    assert parent_id(step) == child.context.span_id
    assert step.attributes["gen_ai.usage.input_tokens"] == 1


def test_failed_run_has_error_status(otel):
    sink = sink_for(otel)
    script = ScriptedExecutors({"again": ["x"] * 5})
    _run_id, error = drive(A.looping, {}, sink, executors=script, max_model_calls=2)
    assert type(error).__name__ == "ModelCallBudgetExceeded"
    spans = finished(otel)
    (run,) = by_name(spans, "agentrt.run")
    assert run.status.status_code is StatusCode.ERROR
    assert "ModelCallBudgetExceeded" in run.status.description
    assert run.attributes["error.type"].endswith("ModelCallBudgetExceeded")
    assert [e.name for e in run.events if e.name == "exception"] == ["exception"]
    calls = sorted(by_name(spans, "agentrt.llm generate_text"), key=lambda s: s.start_time)
    assert [s.status.status_code for s in calls] == [StatusCode.UNSET, StatusCode.UNSET, StatusCode.ERROR]
    assert calls[-1].attributes["agentrt.ok"] is False
    assert calls[-1].attributes["error.type"] == "ModelCallBudgetExceeded"


def test_waiting_run_closes_its_span_and_the_reply_opens_the_next(otel):
    sink = sink_for(otel)

    async def main():
        async with Runtime(MemoryStore(), on_trace=sink) as rt:
            run_id = await rt.start(refund, {"order_id": "A-1001", "reason": "broken"})
            rec = await rt.settle(run_id, timeout=10)
            assert rec.status == "waiting"
            waiting = finished(otel)
            await rt.reply(run_id, {"approve": True, "note": "ok"})
            return run_id, waiting, await rt.wait(run_id, timeout=10)

    run_id, waiting, out = asyncio.run(main())
    assert out.refunded is True
    # while it waits, its spans are finished: nothing of it stays open here
    assert sorted(s.name for s in waiting) == ["agentrt.run", "agentrt.tool orders_get"]
    (first,) = by_name(waiting, "agentrt.run")
    assert first.attributes["agentrt.waiting_on"] == "reply"
    assert first.status.status_code is StatusCode.UNSET
    assert [e.name for e in first.events] == ["checkpoint", "notify", "checkpoint"]
    assert first.events[1].attributes["message"] == "Refund of 249 EUR needs approval"
    (tool,) = by_name(waiting, "agentrt.tool orders_get")
    assert parent_id(tool) == first.context.span_id
    assert tool.attributes["agentrt.tool"] == "orders_get" and tool.attributes["agentrt.key"] == f"{run_id}:1"
    assert not sink._runs
    spans = finished(otel)
    second = next(s for s in by_name(spans, "agentrt.run") if s.context.span_id != first.context.span_id)
    assert second.attributes["agentrt.agent"] == "refund"  # remembered from the first stretch
    assert [link.context.span_id for link in second.links] == [first.context.span_id]
    assert second.events[0].name == "reply" and second.status.status_code is StatusCode.OK
    (pay,) = by_name(spans, "agentrt.tool issue_refund")
    assert parent_id(pay) == second.context.span_id


def test_close_ends_leftover_spans(otel):
    sink = sink_for(otel)
    now = time.time()
    sink(TraceEvent("run", "r1", 0, now, "started", {"agent": "a"}))
    sink(TraceEvent("request", "r1", 1, now + 0.5, "tool_started", {"tool": "t", "seq": 1, "idx": 0}))
    assert finished(otel) == []
    sink.close()
    spans = finished(otel)
    assert sorted(s.name for s in spans) == ["agentrt.run", "agentrt.tool t"]
    assert all(s.attributes["agentrt.abandoned"] is True for s in spans)
    assert all(s.status.status_code is StatusCode.UNSET for s in spans)
    run = next(s for s in spans if s.name == "agentrt.run")
    assert run.start_time == int(now * 1e9)
    sink.close()  # idempotent
    assert len(finished(otel)) == 2


def test_lazy_open_host_error_and_orphan_result(otel):
    sink = sink_for(otel)
    now = time.time()
    # a result whose request this sink never saw: the run span opens lazily, the request is rebuilt
    sink(TraceEvent("result", "r2", 0, now, "tool_finished", {"tool": "t", "seq": 3, "idx": 1, "ok": True,
                                                               "seconds": 0.25}))  # fmt: skip
    sink(TraceEvent("error", "r2", 1, now + 1, "lease_lost", {"message": "taken over"}))
    spans = finished(otel)
    (tool,) = by_name(spans, "agentrt.tool t")
    assert tool.end_time - tool.start_time == 250_000_000
    (run,) = by_name(spans, "agentrt.run")
    assert parent_id(tool) == run.context.span_id and run.start_time == tool.end_time
    assert run.status.status_code is StatusCode.ERROR and run.status.description == "taken over"
    assert run.attributes["agentrt.error_kind"] == "lease_lost"


def test_run_started_inside_an_application_span_nests_under_it(otel):
    provider, _exporter = otel
    sink = sink_for(otel)
    script = ScriptedExecutors({"step": [Scripted("a")]})

    async def main():
        async with Runtime(MemoryStore(), executors=script, on_trace=sink) as rt:
            with provider.get_tracer("app").start_as_current_span("handle"):
                run_id = await rt.start(A.chain, {"n": 1})
            return await rt.wait(run_id, timeout=10)

    asyncio.run(main())
    spans = finished(otel)
    (app,) = by_name(spans, "handle")
    (run,) = by_name(spans, "agentrt.run")
    assert parent_id(run) == app.context.span_id
    assert trace.get_current_span() is trace.INVALID_SPAN  # the sink never makes its spans current


def test_bad_events_do_not_raise_and_threads_are_safe(otel):
    sink = sink_for(otel)
    now = time.time()
    sink(TraceEvent("chunk", "r3", 0, now, "model_chunk", {"seq": "x", "chunk": None}))
    sink(TraceEvent("result", "r3", 1, now, "model_result", {"usage": "junk", "seconds": "soon"}))
    sink(TraceEvent("log", "r3", 2, now, "log", {"obj": object(), 1: {"a": [1, 2]}, "big": "x" * 5000}))
    sink(TraceEvent("end", "r3", 3, "not a time", "completed", {}))  # type: ignore[arg-type]
    sink(TraceEvent("end", "r3", 4, now, "failed", {"error": "boom"}))
    (run,) = by_name(finished(otel), "agentrt.run")
    assert run.status.status_code is StatusCode.ERROR and run.status.description == "boom"
    (log,) = [e for e in run.events if e.name == "log"]
    assert log.attributes["1"] == '{"a": [1, 2]}' and len(log.attributes["big"]) == MAX_ATTRIBUTE_CHARS
    assert log.attributes["obj"].startswith('"<object object')  # JSON of its repr

    def feed(n: int) -> None:
        for i in range(50):
            run_id = f"t{n}-{i}"
            sink(TraceEvent("run", run_id, 0, now, "started", {"agent": "a"}))
            sink(TraceEvent("request", run_id, 1, now, "tool_started", {"tool": "t", "seq": 1, "idx": 0}))
            sink(TraceEvent("result", run_id, 2, now, "tool_finished", {"tool": "t", "seq": 1, "idx": 0,
                                                                        "ok": True}))  # fmt: skip
            sink(TraceEvent("end", run_id, 3, now, "completed", {}))

    threads = [threading.Thread(target=feed, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not sink._runs
    assert len(by_name(finished(otel), "agentrt.tool t")) == 200


def test_an_event_the_sink_cannot_use_is_logged_once_and_the_sink_goes_on(otel, caplog):
    sink = sink_for(otel)
    now = time.time()
    sink(TraceEvent("run", "r4", 0, now, "started", {"agent": "a"}))
    with caplog.at_level("WARNING", logger="agentrt.otel"):
        sink(TraceEvent("end", "r4", 1, "not a time", "completed", {}))  # type: ignore[arg-type]
        sink(TraceEvent("end", "r4", 2, "still not a time", "completed", {}))  # type: ignore[arg-type]
    (record,) = caplog.records
    assert "'completed' event of run 'r4' could not become span data" in record.getMessage()
    assert record.exc_info is not None  # with the traceback that says what went wrong
    sink(TraceEvent("run", "r5", 0, now, "started", {"agent": "a"}))
    sink(TraceEvent("end", "r5", 1, now, "completed", {}))
    assert [span.attributes["agentrt.run_id"] for span in by_name(finished(otel), "agentrt.run")][-1] == "r5"


def test_missing_opentelemetry_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    monkeypatch.delitem(sys.modules, "agentrt.otel")
    with pytest.raises(ImportError, match=r"pip install agentrt\[otel\]"):
        importlib.import_module("agentrt.otel")
