"""OpenAICompatExecutors against the wire shapes real servers send beyond the happy path.

Each test serves one shape from the stand-in server over a real socket: a stream cut off
without ``finish_reason`` / ``[DONE]``, an error event inside a 200 stream (vLLM, SGLang), a
refusal (``message.refusal``, OpenAI), ``finish_reason`` ``length`` / ``content_filter``,
several tool calls in a decision, ``retry-after-ms`` and HTTP-date ``Retry-After``, and the
per-attempt idempotency key.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from typing import Any

import pytest

from agentrt import MemoryStore, Runtime
from agentrt.llm import (
    Attempt,
    EventSpec,
    ModelContentFiltered,
    ModelOutputTruncated,
    ModelProviderError,
    ModelRefused,
)
from agentrt.testing.openai_server import FakeOpenAIServer, error, reply, stream
from tests.llm import agents as A
from tests.llm.test_openai_compat import TITLE_SCHEMA, FakeSleep, call, req

EVENTS = (
    EventSpec("Approve", "Accept.", {"type": "object", "properties": {"reason": {"type": "string"}}}),
    EventSpec("Reject", "Refuse.", {"type": "object", "properties": {"why": {"type": "string"}}}),
)


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer() as s:
        yield s


def stream_req(**kw: Any) -> Any:
    return req(kind="stream_text", **kw)


# --------------------------------------------------------------------------- streams that end early


def test_stream_cut_before_any_chunk_is_retried(server: FakeOpenAIServer) -> None:
    server.enqueue(stream([], end="cut"), stream(["x", "y"]))
    chunks: list[str] = []
    sleep = FakeSleep()
    result = call(server, "stream_text", stream_req(), chunks.append, sleep=sleep)
    assert result.output == "xy" and result.finish_reason == "stop"
    assert chunks == ["x", "y"] and len(server.requests) == 2 and len(sleep.delays) == 1


def test_stream_cut_after_chunks_fails_clearly_without_retry(server: FakeOpenAIServer) -> None:
    server.enqueue(stream(["a", "b"], end="cut"), reply("never"))
    chunks: list[str] = []
    sleep = FakeSleep()
    with pytest.raises(ModelProviderError) as info:
        call(server, "stream_text", stream_req(), chunks.append, sleep=sleep)
    assert chunks == ["a", "b"]
    assert "without a finish_reason or data: [DONE]" in str(info.value)
    assert "after 2 chunk(s)" in str(info.value)
    assert len(server.requests) == 1 and sleep.delays == []


def test_cut_stream_exhausting_retries_is_an_error_not_an_answer(server: FakeOpenAIServer) -> None:
    server.enqueue(*[stream([], end="cut")] * 3)
    with pytest.raises(ModelProviderError) as info:
        call(server, "stream_text", stream_req(), lambda _c: None, sleep=FakeSleep(), max_retries=2)
    assert info.value.attempts == 3 and "cut off" in str(info.value)


def test_stream_with_finish_reason_but_no_done_is_complete(server: FakeOpenAIServer) -> None:
    server.enqueue(stream(["all ", "there"], end="no-done"))
    result = call(server, "stream_text", stream_req(), lambda _c: None)
    assert result.output == "all there" and result.finish_reason == "stop"
    assert result.usage is not None and result.usage.total_tokens > 0
    assert len(server.requests) == 1


def test_a_cut_stream_is_not_journaled_as_an_answer(server: FakeOpenAIServer) -> None:
    """Through the runtime: the agent meets the error at its await; the run fails with it."""
    server.enqueue(stream(["partial ", "answer"], end="cut"), reply("a complete answer"))

    async def main() -> Any:
        async with http_executors(server) as ex, Runtime(MemoryStore(), executors=ex) as rt:
            run_id = await rt.start(A.streamer, {"text": "go"})
            with pytest.raises(ModelProviderError):
                await rt.wait(run_id, timeout=30)
            return rt.status(run_id)

    rec = asyncio.run(main())
    assert rec.status == "failed"
    assert "without a finish_reason" in rec.error["message"]
    assert len(server.requests) == 1


def http_executors(server: FakeOpenAIServer, **kw: Any) -> Any:
    from tests.llm.test_openai_end_to_end import executors_for

    return executors_for(server, **kw)


# --------------------------------------------------------------------------- finish_reason


def test_finish_reason_is_kept_on_results(server: FakeOpenAIServer) -> None:
    server.enqueue(reply("done"), reply(tool_calls=[{"name": "lookup", "arguments": {"word": "a"}}]))
    assert call(server, "generate_text", req()).finish_reason == "stop"
    assert call(server, "generate_text", req()).finish_reason == "tool_calls"


@pytest.mark.parametrize("streamed", [False, True])
def test_length_raises_by_default_and_is_returned_on_request(
    server: FakeOpenAIServer, streamed: bool
) -> None:
    method, args, make = (
        ("stream_text", (lambda _c: None,), stream_req) if streamed else ("generate_text", (), req)
    )
    server.enqueue(reply("cut off in the mid", finish_reason="length"))
    with pytest.raises(ModelOutputTruncated) as info:
        call(server, method, make(), *args)
    assert info.value.text == "cut off in the mid" and info.value.finish_reason == "length"
    assert "max_tokens" in str(info.value) and len(server.requests) == 1

    server.enqueue(reply("cut off in the mid", finish_reason="length"))
    result = call(server, method, make(), *args, on_length="return")
    assert result.output == "cut off in the mid" and result.finish_reason == "length"

    # a structured answer cut off cannot be valid JSON: raised whatever the policy, not re-asked
    server.enqueue(reply('{"result": {"ti', finish_reason="length"), reply("never"))
    with pytest.raises(ModelOutputTruncated):
        call(server, method, make(output_schema=TITLE_SCHEMA), *args, on_length="return")
    assert len(server.requests) == 3


def test_content_filter_raises(server: FakeOpenAIServer) -> None:
    server.enqueue(reply("I was saying", finish_reason="content_filter"))
    with pytest.raises(ModelContentFiltered) as info:
        call(server, "generate_text", req(), on_length="return")
    assert info.value.finish_reason == "content_filter" and info.value.text == "I was saying"


def test_length_surfaces_in_the_agent_text_result(server: FakeOpenAIServer) -> None:
    server.enqueue(reply("short", finish_reason="length"))

    async def main() -> Any:
        async with (
            http_executors(server, on_length="return") as ex,
            Runtime(MemoryStore(), executors=ex) as rt,
        ):
            run_id = await rt.start(A.finish_reporter, {"text": "go"})
            return await rt.wait(run_id, timeout=30)

    assert asyncio.run(main()).notes == ["short", "length"]


# --------------------------------------------------------------------------- error events in a 200 stream


VLLM_400 = {"message": "max_tokens is too large", "type": "BadRequestError", "param": None, "code": 400}
SGLANG_500 = {"message": "CUDA out of memory", "type": "InternalServerError", "code": 500}


def test_error_event_with_a_client_status_fails_at_once(server: FakeOpenAIServer) -> None:
    server.enqueue(stream([], error=VLLM_400), reply("never"))
    sleep = FakeSleep()
    with pytest.raises(ModelProviderError) as info:
        call(server, "stream_text", stream_req(), lambda _c: None, sleep=sleep)
    err = info.value
    assert (err.status, err.provider_message, err.error_type, err.error_code) == (
        400,
        "max_tokens is too large",
        "BadRequestError",
        400,
    )
    assert "max_tokens is too large" in str(err) and "no response" not in str(err)
    assert len(server.requests) == 1 and sleep.delays == []


def test_error_event_with_a_server_status_is_retried(server: FakeOpenAIServer) -> None:
    server.enqueue(stream([], error=SGLANG_500), stream(["fine"]))
    sleep = FakeSleep()
    result = call(server, "stream_text", stream_req(), lambda _c: None, sleep=sleep)
    assert result.output == "fine" and len(server.requests) == 2 and len(sleep.delays) == 1


def test_error_event_after_chunks_is_not_retried(server: FakeOpenAIServer) -> None:
    server.enqueue(stream(["half"], error=SGLANG_500), reply("never"))
    chunks: list[str] = []
    with pytest.raises(ModelProviderError) as info:
        call(server, "stream_text", stream_req(), chunks.append, sleep=FakeSleep())
    assert chunks == ["half"] and info.value.status == 500
    assert "after 1 streamed chunk(s)" in str(info.value) and "CUDA out of memory" in str(info.value)
    assert len(server.requests) == 1


def test_error_event_without_status_classified_by_type(server: FakeOpenAIServer) -> None:
    server.enqueue(
        stream([], error={"message": "busy", "type": "server_error", "code": None}),
        stream([], error={"message": "no such model", "type": "invalid_request_error"}),
    )
    with pytest.raises(ModelProviderError) as info:
        call(server, "stream_text", stream_req(), lambda _c: None, sleep=FakeSleep())
    assert info.value.provider_message == "no such model" and info.value.status is None
    assert len(server.requests) == 2  # the server_error was retried, the invalid request was not


def test_error_object_in_a_200_json_answer(server: FakeOpenAIServer) -> None:
    server.enqueue(error(200, body={"error": VLLM_400}))
    with pytest.raises(ModelProviderError) as info:
        call(server, "generate_text", req(), sleep=FakeSleep())
    assert info.value.status == 400 and info.value.provider_message == "max_tokens is too large"


def test_http_error_message_is_the_providers_not_the_raw_body(server: FakeOpenAIServer) -> None:
    body = {"error": {"message": "Invalid model", "type": "invalid_request_error", "code": "model_not_found"}}
    server.enqueue(error(400, body=body))
    with pytest.raises(ModelProviderError) as info:
        call(server, "generate_text", req())
    text = str(info.value)
    assert "Invalid model" in text and "model_not_found" in text and '{"error"' not in text
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_run_error_record_carries_the_provider_error_and_no_internal_frames(server: FakeOpenAIServer) -> None:
    body = {"error": {"message": "Invalid model", "type": "invalid_request_error", "code": "model_not_found"}}
    server.enqueue(error(400, body=body))

    async def main() -> Any:
        async with http_executors(server) as ex, Runtime(MemoryStore(), executors=ex) as rt:
            run_id = await rt.start(A.chain, {"text": "x", "n": 1})
            with pytest.raises(ModelProviderError):
                await rt.wait(run_id, timeout=30)
            return rt.status(run_id)

    record = asyncio.run(main()).error
    assert record["provider"] == {
        "status": 400,
        "message": "Invalid model",
        "type": "invalid_request_error",
        "code": "model_not_found",
        "attempts": 1,
    }
    assert "chain_run" in record["traceback"]  # the agent's own frame: where it awaited
    assert "_runtime" not in record["traceback"] and "openai_compat" not in record["traceback"]
    assert "lowlevel.py" not in record["traceback"] and '\\"error\\"' not in record["traceback"]


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("streamed", [False, True])
def test_refusal_is_typed_and_not_retried_as_bad_json(server: FakeOpenAIServer, streamed: bool) -> None:
    server.enqueue(reply(None, refusal="I can't help with that request."), reply("never"))
    method, args, make = (
        ("stream_text", (lambda _c: None,), stream_req) if streamed else ("generate_text", (), req)
    )
    with pytest.raises(ModelRefused) as info:
        call(server, method, make(output_schema=TITLE_SCHEMA), *args)
    assert info.value.text == "I can't help with that request."
    assert "I can't help" in str(info.value)
    assert len(server.requests) == 1


def test_refusal_reaches_the_agent_once_through_the_runtime(server: FakeOpenAIServer) -> None:
    server.enqueue(reply(None, refusal="No."), reply("never"), reply("never"))

    async def main() -> Any:
        async with http_executors(server) as ex, Runtime(MemoryStore(), executors=ex) as rt:
            run_id = await rt.start(A.refusal_catcher, {"text": "go"})
            return await rt.wait(run_id, timeout=30)

    out = asyncio.run(main())
    assert out.notes == ["refused: No."]
    assert len(server.requests) == 1  # not re-asked as "not JSON"


# --------------------------------------------------------------------------- decide


def test_decide_turns_parallel_tool_calls_off(server: FakeOpenAIServer) -> None:
    result = call(server, "decide", req(kind="decide", events=EVENTS))
    assert result.event["type"] == "Approve"
    assert server.requests[0].body["parallel_tool_calls"] is False


def test_decide_with_several_calls_reports_them_all(server: FakeOpenAIServer) -> None:
    server.enqueue(
        reply(
            tool_calls=[
                {"name": "Approve", "arguments": {"reason": "ok"}},
                {"name": "Reject", "arguments": {"why": "no"}},
            ]
        )
    )
    result = call(server, "decide", req(kind="decide", events=EVENTS))
    assert result.event == [{"type": "Approve", "reason": "ok"}, {"type": "Reject", "why": "no"}]


def test_several_choices_are_refused_with_feedback_through_the_runtime(server: FakeOpenAIServer) -> None:
    server.enqueue(
        reply(
            tool_calls=[
                {"name": "Approve", "arguments": {"reason": "ok"}},
                {"name": "Reject", "arguments": {"why": "no"}},
            ]
        ),
        reply(tool_calls=[{"name": "Reject", "arguments": {"why": "risky", "severity": 2}}]),
    )

    async def main() -> Any:
        async with http_executors(server) as ex, Runtime(MemoryStore(), executors=ex) as rt:
            run_id = await rt.start(A.decider, {"text": "go"})
            return await rt.wait(run_id, timeout=30)

    assert asyncio.run(main()).notes == ["Reject(why='risky', severity=2)"]
    feedback = server.requests[1].body["messages"][-1]["content"]
    assert "2 choices were made at once (Approve, Reject)" in feedback
    keys = [r.headers["idempotency-key"] for r in server.requests]
    assert keys[0].endswith("#1") and keys[1].endswith("#2") and keys[0][:-2] == keys[1][:-2]


def test_an_override_of_none_removes_a_parameter(server: FakeOpenAIServer) -> None:
    call(
        server,
        "decide",
        req(kind="decide", events=EVENTS, metadata={"openai": {"parallel_tool_calls": None}}),
    )
    assert "parallel_tool_calls" not in server.requests[0].body


# --------------------------------------------------------------------------- idempotency keys


def test_idempotency_key_per_attempt(server: FakeOpenAIServer) -> None:
    server.enqueue(error(503), reply("a"), reply("b"))
    call(server, "generate_text", req(), sleep=FakeSleep())
    call(server, "generate_text", req(attempts=(Attempt("x", "bad"), Attempt("y", "bad"))))
    keys = [r.headers["idempotency-key"] for r in server.requests]
    assert keys == ["r1:1.0#1", "r1:1.0#1", "r1:1.0#3"]


# --------------------------------------------------------------------------- retry headers


def test_retry_after_ms_is_honoured_before_retry_after(server: FakeOpenAIServer) -> None:
    server.enqueue(error(429, retry_after=9, headers={"retry-after-ms": "1500"}), reply("ok"))
    sleep = FakeSleep()
    assert call(server, "generate_text", req(), sleep=sleep).output == "ok"
    assert sleep.delays == [1.5]


def test_http_date_retry_after_is_honoured(server: FakeOpenAIServer) -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    past = email.utils.formatdate(time.time() - 30, usegmt=True)
    server.enqueue(error(503, retry_after=when), error(503, retry_after=past), reply("ok"))
    sleep = FakeSleep()
    assert call(server, "generate_text", req(), sleep=sleep, backoff_max=60).output == "ok"
    assert 20 < sleep.delays[0] <= 30  # about 30 s from now (the date has 1 s resolution)
    assert sleep.delays[1] == 0.0  # a date in the past: retry at once


def test_unreadable_retry_after_falls_back_to_backoff(server: FakeOpenAIServer) -> None:
    server.enqueue(error(503, retry_after="soon", headers={"retry-after-ms": "x"}), reply("ok"))
    sleep = FakeSleep()
    call(server, "generate_text", req(), sleep=sleep, backoff_base=0.5)
    assert 0.25 <= sleep.delays[0] <= 0.5


def test_run_json_of_a_provider_400_shows_the_provider_error(server: FakeOpenAIServer, tmp_path: Any) -> None:
    """``agentrt run --json``: the error carries error.message/type/code and no agentrt frames."""
    from tests.cli.helpers import cli_env, cli_json

    body = {
        "error": {"message": "Unknown model 'x'", "type": "invalid_request_error", "code": "model_not_found"}
    }
    server.enqueue(error(400, body=body))
    code, out, err = cli_json(
        "run", "examples/issue_summarizer.py:summarize_issue",
        "--input", '{"repo": "octo/widgets", "issue_number": 42}',
        "--executors", "examples/executors.py:openai", "--store", str(tmp_path / "s.db"),
        env=cli_env(AGENTRT_EXAMPLE_OPENAI_URL=server.url),
    )  # fmt: skip
    assert code == 1, err
    error_record = out["error"]
    assert error_record["provider"]["message"] == "Unknown model 'x'"
    assert error_record["provider"]["code"] == "model_not_found"
    assert "Unknown model 'x'" in error_record["message"] and '{\\"error\\"' not in json.dumps(error_record)
    assert "issue_summarizer.py" in error_record["traceback"]
    for internal in ("_runtime", "lowlevel.py", "openai_compat", "httpx"):
        assert internal not in error_record["traceback"]


# --------------------------------------------------------------------------- answers that are not results


def test_a_tool_call_answering_a_structured_request_without_tools_is_refused_and_retried(
    server: FakeOpenAIServer,
) -> None:
    """No tools were offered, so a tool call is no answer: before, the agent got ``output=None``."""
    server.enqueue(
        reply(tool_calls=[{"name": "lookup", "arguments": {"word": "x"}}]),
        reply(json.dumps({"result": {"title": "T", "points": ["a"]}})),
    )

    async def main() -> Any:
        async with http_executors(server) as ex, Runtime(MemoryStore(), executors=ex) as rt:
            run_id = await rt.start(A.answer_catcher, {"text": "go"})
            return await rt.wait(run_id, timeout=30)

    out = asyncio.run(main())
    assert (out.text, out.notes) == ("T", ["attempts=2"])
    assert "tools" not in server.requests[0].body
    feedback = server.requests[1].body["messages"][-1]["content"]
    assert "calls tool(s) lookup, but this request offers no tools" in feedback
    assert '"tool_call": "lookup"' in feedback  # the model is shown what it did


SPENT = {"prompt_tokens": 7, "completion_tokens": 3}


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (reply(None, refusal="No.", usage=SPENT), "ModelRefused"),
        (reply('{"result": {"ti', finish_reason="length", usage=SPENT), "ModelOutputTruncated"),
        (reply("", finish_reason="content_filter", usage=SPENT), "ModelContentFiltered"),
    ],
    ids=["refused", "truncated", "filtered"],
)
def test_usage_the_server_reported_for_a_failed_answer_is_counted(
    server: FakeOpenAIServer, answer: Any, error: str
) -> None:
    server.enqueue(answer)

    async def main() -> Any:
        async with http_executors(server) as ex, Runtime(MemoryStore(), executors=ex) as rt:
            run_id = await rt.start(A.answer_catcher, {"text": "go"})
            out = await rt.wait(run_id, timeout=30)
            return out, rt.status(run_id).usage

    out, usage = asyncio.run(main())
    assert out.notes == [error]
    assert usage["model_calls"] == 1
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (7, 3, 10)
