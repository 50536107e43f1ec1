"""OpenAICompatExecutors against FakeOpenAIServer: a real local socket, no network beyond 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import agentrt
from agentrt.llm import Attempt, EventSpec, ExecutorRequest, ModelProviderError, ModelToolCall, Usage
from agentrt.llm.openai_compat import OpenAICompatExecutors
from agentrt.testing.openai_server import (
    FakeOpenAIServer,
    default_responder,
    delay,
    error,
    minimal_instance,
    reply,
    stream,
)

TITLE_SCHEMA = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}

NESTED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Report",
    "properties": {
        "headline": {"type": "string"},
        "count": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "author": {
            "type": "object",
            "title": "Author",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 18}},
            "required": ["name", "age"],
            "additionalProperties": False,
        },
        "mood": {"enum": ["calm", "angry"]},
        "note": {"anyOf": [{"type": "null"}, {"type": "string"}], "default": None},
    },
    "required": ["headline", "count", "tags", "author", "mood"],
    "additionalProperties": False,
}


def req(prompt: str | None = "Tell me about the weather today", **kw: Any) -> ExecutorRequest:
    kw.setdefault("kind", "generate_text")
    return ExecutorRequest(src="t", run_id="r1", seq=1, idx=0, agent="a", prompt=prompt, **kw)


class FakeSleep:
    """Records backoff waits instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


def call(server: FakeOpenAIServer, method: str, request: ExecutorRequest, *args: Any, **options: Any) -> Any:
    """Run one executor call in a fresh event loop with its own executors (closed afterwards)."""
    options.setdefault("default_model", "gpt-test")

    async def go() -> Any:
        async with OpenAICompatExecutors(server.url, **options) as ex:
            return await getattr(ex, method)(request, *args)

    return asyncio.run(go())


# --------------------------------------------------------------------------- text, headers, models


def test_generate_text_usage_headers_and_body(server: FakeOpenAIServer) -> None:
    server.enqueue(reply("Hello!", usage={"prompt_tokens": 5, "completion_tokens": 2}))
    request = req(
        system="Be brief.",
        metadata={
            "temperature": 0.1,
            "max_tokens": 50,
            "seed": 7,
            "other": 1,
            "openai": {"temperature": 0.5},
        },
    )
    result = call(server, "generate_text", request, api_key="sk-test")
    assert result.output == "Hello!"
    assert result.usage == Usage(5, 2, 7)
    assert result.tool_calls == () and result.model == "gpt-test"
    assert result.raw["choices"][0]["message"]["content"] == "Hello!"
    [(path, headers, body)] = server.requests
    assert path == "/v1/chat/completions"
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["idempotency-key"] == "r1:1.0#1"
    assert body["model"] == "gpt-test"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Tell me about the weather today"},
    ]
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.5, 50, 7)  # metadata["openai"] wins
    assert "other" not in body and "response_format" not in body and "stream" not in body


def test_no_api_key_no_authorization_header_and_extra_headers(server: FakeOpenAIServer) -> None:
    call(server, "generate_text", req(), headers={"X-Team": "blue"})
    headers = server.requests[0].headers
    assert "authorization" not in headers
    assert headers["x-team"] == "blue"


def test_model_aliases_resolve_model_and_errors(server: FakeOpenAIServer) -> None:
    models = {"quick": "gpt-mini", "careful": "gpt-big"}
    call(server, "generate_text", req(model="quick"), models=models)
    assert server.requests[-1].body["model"] == "gpt-mini"

    call(server, "generate_text", req(), models=models, default_model="careful")
    assert server.requests[-1].body["model"] == "gpt-big"

    call(
        server,
        "generate_text",
        req(model="quick"),
        models=models,
        resolve_model=lambda ref: f"resolved/{ref}",
    )
    assert server.requests[-1].body["model"] == "resolved/quick"

    call(server, "generate_text", req(model="raw-model-name"))
    assert server.requests[-1].body["model"] == "raw-model-name"

    sent = len(server.requests)
    with pytest.raises(ValueError, match=r"'nope'.*'quick', 'careful'"):
        call(server, "generate_text", req(model="nope"), models=models)
    with pytest.raises(ValueError, match="default_model="):
        call(server, "generate_text", req(), default_model=None)
    assert len(server.requests) == sent  # nothing was sent for a bad model


def test_feedback_of_refused_attempts_is_sent(server: FakeOpenAIServer) -> None:
    request = req(output_schema=TITLE_SCHEMA, attempts=(Attempt(output="oops", error="not JSON"),))
    call(server, "generate_text", request)
    last = server.requests[0].body["messages"][-1]
    assert last["role"] == "user" and "Attempt 1" in last["content"] and "not JSON" in last["content"]


# --------------------------------------------------------------------------- structured output


def test_structured_output_envelope_sent_and_unwrapped(server: FakeOpenAIServer) -> None:
    server.enqueue(reply(json.dumps({"result": {"title": "Sunny"}, "reasoning": "the sky"})))
    result = call(server, "generate_text", req(output_schema=TITLE_SCHEMA, reasoning=True))
    assert result.output == {"title": "Sunny"}
    assert result.reasoning == "the sky"
    fmt = server.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "envelope" and fmt["json_schema"]["strict"] is False
    schema = fmt["json_schema"]["schema"]
    assert schema["type"] == "object"
    assert schema["properties"]["result"] == TITLE_SCHEMA
    assert schema["required"] == ["result", "reasoning"]


def test_structured_output_without_reasoning_and_fenced_json(server: FakeOpenAIServer) -> None:
    server.enqueue(reply('```json\n{"result": {"title": "T"}}\n```'))
    result = call(server, "generate_text", req(output_schema=TITLE_SCHEMA))
    assert result.output == {"title": "T"} and result.reasoning is None
    assert server.requests[0].body["response_format"]["json_schema"]["schema"]["required"] == ["result"]


@pytest.mark.parametrize("content", ["this is not JSON", '{"title": "no envelope"}', "[1, 2]", ""])
def test_bad_structured_answer_is_returned_raw(server: FakeOpenAIServer, content: str) -> None:
    server.enqueue(reply(content))
    result = call(server, "generate_text", req(output_schema=TITLE_SCHEMA))
    assert result.output == content  # the runtime refuses it and retries with feedback


# --------------------------------------------------------------------------- tools and decisions


def test_tool_calls_parsed(server: FakeOpenAIServer) -> None:
    params = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    server.enqueue(
        reply(
            tool_calls=[
                {"id": "c1", "name": "search", "arguments": {"q": "rain"}},
                {"id": "c2", "name": "search", "arguments": "{not json"},
            ],
            finish_reason="tool_calls",
        )
    )
    result = call(
        server,
        "generate_text",
        req(tools=({"name": "search", "description": "Web search", "parameters": params},)),
    )
    assert result.output == ""
    assert result.tool_calls == (
        ModelToolCall("c1", "search", {"q": "rain"}),
        ModelToolCall("c2", "search", {"_raw": "{not json"}),
    )
    assert server.requests[0].body["tools"] == [
        {
            "type": "function",
            "function": {"name": "search", "description": "Web search", "parameters": params},
        }
    ]


EVENTS = (
    EventSpec(
        "approve", "Approve the change", {"type": "object", "properties": {"note": {"type": "string"}}}
    ),
    EventSpec("reject", "Reject it", {"type": "object", "properties": {"reason": {"type": "string"}}}),
)


def test_decide_maps_events_to_required_tools(server: FakeOpenAIServer) -> None:
    server.enqueue(
        reply(
            tool_calls=[{"name": "reject", "arguments": {"reason": "too risky"}}], usage={"prompt_tokens": 9}
        )
    )
    result = call(server, "decide", req(kind="decide", events=EVENTS))
    assert result.event == {"type": "reject", "reason": "too risky"}
    assert result.usage == Usage(9, 0, 9)
    assert result.reasoning is None and result.raw["choices"]
    body = server.requests[0].body
    assert body["tool_choice"] == "required"
    assert [t["function"]["name"] for t in body["tools"]] == ["approve", "reject"]
    assert body["tools"][0]["function"]["parameters"] == EVENTS[0].schema
    assert body["tools"][0]["function"]["description"] == "Approve the change"


def test_decide_without_tool_call_returns_text_and_default_responder_chooses(
    server: FakeOpenAIServer,
) -> None:
    server.enqueue(reply("I would approve."))
    assert call(server, "decide", req(kind="decide", events=EVENTS)).event == "I would approve."
    event = call(server, "decide", req(kind="decide", events=EVENTS)).event
    assert event == {"type": "approve", "note": "Tell me about"}


# --------------------------------------------------------------------------- streaming


def test_stream_chunks_in_order_with_usage(server: FakeOpenAIServer) -> None:
    server.enqueue(stream(["Hel", "lo ", "world"], usage={"prompt_tokens": 3, "completion_tokens": 3}))
    chunks: list[str] = []
    result = call(server, "stream_text", req(kind="stream_text"), chunks.append)
    assert chunks == ["Hel", "lo ", "world"]
    assert result.output == "Hello world"
    assert result.usage == Usage(3, 3, 6)
    assert result.raw["content"] == "Hello world" and result.raw["finish_reason"] == "stop"
    assert result.raw["chunks"] == 5  # three deltas, the finish chunk, the usage chunk
    body = server.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_stream_of_a_reply_is_split_into_chunks(server: FakeOpenAIServer) -> None:
    server.enqueue(reply("one two three four five six"))
    chunks: list[str] = []
    result = call(server, "stream_text", req(kind="stream_text"), chunks.append)
    assert len(chunks) > 1 and "".join(chunks) == "one two three four five six" == result.output
    assert result.usage == Usage(6, 6, 12)  # the fake counts words


def test_stream_tool_calls_accumulated(server: FakeOpenAIServer) -> None:
    calls = [
        {"id": "c1", "name": "search", "arguments": {"q": "x y"}},
        {"id": "c2", "name": "open", "arguments": {}},
    ]
    server.enqueue(stream([], tool_calls=calls))
    chunks: list[str] = []
    result = call(server, "stream_text", req(kind="stream_text"), chunks.append)
    assert chunks == [] and result.output == ""
    assert result.tool_calls == (ModelToolCall("c1", "search", {"q": "x y"}), ModelToolCall("c2", "open", {}))
    assert result.raw["finish_reason"] == "tool_calls"


def test_structured_stream_is_parsed_at_the_end(server: FakeOpenAIServer) -> None:
    server.enqueue(stream(['{"result": ', '{"title": ', '"T"}}']))
    chunks: list[str] = []
    result = call(server, "stream_text", req(kind="stream_text", output_schema=TITLE_SCHEMA), chunks.append)
    assert len(chunks) == 3 and result.output == {"title": "T"}


def test_stream_dropped_after_chunks_raises_without_retry(server: FakeOpenAIServer) -> None:
    server.enqueue(stream(["a", "b", "c"], fail_after=2), reply("never"))
    chunks: list[str] = []
    sleep = FakeSleep()
    with pytest.raises(ModelProviderError) as info:
        call(server, "stream_text", req(kind="stream_text"), chunks.append, sleep=sleep)
    assert chunks == ["a", "b"]
    assert info.value.attempts == 1 and info.value.status is None
    assert "after 2 chunk(s)" in str(info.value)
    assert len(server.requests) == 1 and sleep.delays == []


def test_stream_dropped_before_any_chunk_is_retried(server: FakeOpenAIServer) -> None:
    server.enqueue(stream(["a", "b"], fail_after=0), error(503), stream(["x", "y"]))
    chunks: list[str] = []
    sleep = FakeSleep()
    result = call(server, "stream_text", req(kind="stream_text"), chunks.append, sleep=sleep)
    assert chunks == ["x", "y"] and result.output == "xy"
    assert len(server.requests) == 3 and len(sleep.delays) == 2


# --------------------------------------------------------------------------- retries


def test_429_retry_after_is_honoured(server: FakeOpenAIServer) -> None:
    server.enqueue(error(429, retry_after=3), error(429, retry_after=100), reply("ok"))
    sleep = FakeSleep()
    result = call(server, "generate_text", req(), sleep=sleep, backoff_max=20)
    assert result.output == "ok"
    assert sleep.delays == [3.0, 20.0]  # capped at backoff_max
    assert [r.headers["idempotency-key"] for r in server.requests] == ["r1:1.0#1"] * 3


def test_5xx_retried_with_exponential_backoff(server: FakeOpenAIServer) -> None:
    server.enqueue(error(500), error(503), error(502), reply("ok"))
    sleep = FakeSleep()
    result = call(server, "generate_text", req(), sleep=sleep, backoff_base=0.5)
    assert result.output == "ok" and len(server.requests) == 4
    for n, waited in enumerate(sleep.delays):
        assert 0.5 * 2**n * 0.5 <= waited <= 0.5 * 2**n
    assert len(sleep.delays) == 3


def test_exhausted_retries_raise_model_provider_error(server: FakeOpenAIServer) -> None:
    server.enqueue(*[error(503, body="overloaded")] * 3)
    sleep = FakeSleep()
    with pytest.raises(ModelProviderError) as info:
        call(server, "generate_text", req(), sleep=sleep, max_retries=2)
    assert info.value.status == 503 and info.value.attempts == 3
    assert info.value.body == "overloaded" and info.value.url == server.url + "/chat/completions"
    assert len(server.requests) == 3 and len(sleep.delays) == 2


def test_400_is_not_retried(server: FakeOpenAIServer) -> None:
    server.enqueue(error(400, body={"error": {"message": "bad model"}}), reply("never"))
    sleep = FakeSleep()
    with pytest.raises(ModelProviderError) as info:
        call(server, "generate_text", req(), sleep=sleep)
    assert info.value.status == 400 and info.value.attempts == 1 and "bad model" in info.value.body
    assert len(server.requests) == 1 and sleep.delays == []


def test_timeout_is_retried(server: FakeOpenAIServer) -> None:
    server.enqueue(delay(1.0, then=reply("late")), reply("ok"))
    sleep = FakeSleep()
    result = call(server, "generate_text", req(), sleep=sleep, timeout=0.2)
    assert result.output == "ok"  # not "late": the first attempt timed out, the retry answered
    assert len(server.requests) == 2 and len(sleep.delays) == 1


def test_connection_refused_is_a_transport_error() -> None:
    with FakeOpenAIServer() as gone:
        url = gone.url
    sleep = FakeSleep()

    async def go() -> None:
        async with OpenAICompatExecutors(url, default_model="m", max_retries=1, sleep=sleep) as ex:
            await ex.generate_text(req())

    with pytest.raises(ModelProviderError) as info:
        asyncio.run(go())
    assert info.value.status is None and info.value.attempts == 2 and "Connect" in info.value.body


# --------------------------------------------------------------------------- cancellation and lifecycle


def test_cancellation_aborts_the_request_promptly(server: FakeOpenAIServer) -> None:
    server.enqueue(delay(60.0, then=reply("late")))  # the server's stop() cuts the wait short

    async def go() -> float:
        async with OpenAICompatExecutors(server.url, default_model="m") as ex:
            task = asyncio.create_task(ex.generate_text(req()))
            await asyncio.sleep(0.2)
            task.cancel()
            started = time.monotonic()
            with pytest.raises(asyncio.CancelledError):
                await task
            elapsed = time.monotonic() - started
            assert asyncio.all_tasks() == {asyncio.current_task()}  # no background work left
            return elapsed

    # Generous (a loaded machine may stall for seconds), yet far below the 60 s the server would take.
    assert asyncio.run(go()) < 30.0


def test_own_client_is_closed_and_a_given_client_is_not(server: FakeOpenAIServer) -> None:
    async def go() -> None:
        ex = OpenAICompatExecutors(server.url, default_model="m")
        await ex.generate_text(req())
        own = ex._http()
        await ex.aclose()
        assert own.is_closed

        async with httpx.AsyncClient() as client:
            async with OpenAICompatExecutors(server.url, default_model="m", client=client) as given:
                await given.generate_text(req())
            assert not client.is_closed

    asyncio.run(go())
    assert "sk-" not in repr(OpenAICompatExecutors(server.url, "sk-secret"))


# --------------------------------------------------------------------------- the fake's default responder


def test_default_responder_answers_a_nested_schema_with_a_valid_envelope(server: FakeOpenAIServer) -> None:
    result = call(server, "generate_text", req("Quarterly sales went up", output_schema=NESTED_SCHEMA))
    value = result.output
    assert value == {
        "headline": "Quarterly sales went",
        "count": 0,
        "tags": ["Quarterly sales went"],
        "author": {"name": "Quarterly sales went", "age": 18},
        "mood": "calm",
        "note": "Quarterly sales went",
    }
    assert set(NESTED_SCHEMA["required"]) <= set(value)
    assert result.usage is not None and result.usage.input_tokens == 4 and result.usage.output_tokens > 0


def test_default_responder_text_and_helpers() -> None:
    body = {"messages": [{"role": "system", "content": "x y"}, {"role": "user", "content": "a b c"}]}
    answer = default_responder(body)
    assert answer == reply("Summary: a b c")
    assert minimal_instance({"type": "string", "minLength": 3, "maxLength": 5}, "ab") == "abx"
    assert minimal_instance({"type": "array", "items": {"type": "integer"}, "minItems": 2}) == [0, 0]
    schema = {
        "$defs": {"P": {"type": "object", "properties": {"n": {"type": "number"}}}},
        "$ref": "#/$defs/P",
    }
    assert minimal_instance(schema) == {"n": 0}


def test_server_runs_as_a_module() -> None:
    root = str(Path(agentrt.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "agentrt.testing.openai_server", "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as proc:
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
            body = {"model": "m", "messages": [{"role": "user", "content": "hi there"}]}
            answer = httpx.post(url + "/chat/completions", json=body, timeout=5).json()
            assert answer["choices"][0]["message"]["content"] == "Summary: hi there"
        finally:
            proc.terminate()
