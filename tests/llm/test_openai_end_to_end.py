"""The real path, end to end: agent -> runtime -> OpenAICompatExecutors -> HTTP -> a local stand-in server.

Every kind of request goes over a socket (JSON, SSE, tool-forced decisions, the structured-output
envelope), refused answers are fed back over HTTP, transient errors are retried, and a resumed run
does not send a journaled request again.
"""

from __future__ import annotations

import asyncio

import pytest

from agentrt import MemoryStore, Runtime
from agentrt.llm.openai_compat import OpenAICompatExecutors
from agentrt.stores import SqliteStore
from agentrt.testing.openai_server import FakeOpenAIServer, delay, error, reply, stream
from tests.llm import agents as A


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def executors_for(server, **kw):
    async def no_wait(_seconds):
        return None

    return OpenAICompatExecutors(
        server.url, models={"quick": "small-1"}, default_model="quick", sleep=no_wait, **kw
    )


def drive(agent, input, executors, store=None):
    async def main():
        async with executors, Runtime(store or MemoryStore(), executors=executors) as rt:
            run_id = await rt.start(agent, input)
            out = await rt.wait(run_id, timeout=30)
            return run_id, out, rt.status(run_id)

    return asyncio.run(main())


def test_every_request_kind_over_http(server):
    server.enqueue(
        reply("hello back", usage={"prompt_tokens": 11, "completion_tokens": 2}),
        error(503, retry_after=0),  # transient: retried by the executor, invisible to the agent
        reply('{"result": {"title": "T"}}'),  # refused: no points -> fed back, asked again
        reply('{"result": {"title": "T", "points": ["p1", "p2"]}, "reasoning": "short"}'),
        stream(["one", " two", " three"], usage={"prompt_tokens": 3, "completion_tokens": 3}),
        reply(tool_calls=[{"name": "Reject", "arguments": {"why": "risky", "severity": 3}}]),
    )
    chunks = []

    async def main():
        async with (
            executors_for(server) as ex,
            Runtime(MemoryStore(), executors=ex, on_chunk=lambda c, r: chunks.append(c)) as rt,
        ):
            run_id = await rt.start(A.everything, {"text": "hi"})
            return await rt.wait(run_id, timeout=30), rt.status(run_id)

    out, rec = asyncio.run(main())
    assert out.notes == [
        "text hello back 13",
        "summary T ['p1', 'p2'] attempts=2",
        "stream one two three",
        "decide Reject(why='risky', severity=3)",
    ]
    assert chunks == ["one", " two", " three"]
    bodies = [r.body for r in server.requests]
    assert len(bodies) == 6
    assert bodies[0]["model"] == "small-1" and bodies[0]["messages"][0] == {
        "role": "system",
        "content": "Be brief.",
    }
    schema = bodies[2]["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["result"] and schema["properties"]["result"]["title"] == "Summary"
    feedback = bodies[3]["messages"][-1]["content"]
    assert "did not match" in feedback and "points" in feedback
    assert bodies[4]["stream"] is True
    assert bodies[5]["tool_choice"] == "required"
    assert [t["function"]["name"] for t in bodies[5]["tools"]] == ["Approve", "Reject"]
    keys = [r.headers["idempotency-key"] for r in server.requests]
    assert keys[1] == keys[2]  # the retried 503 and its retry are one request to the provider
    # the retry with feedback is a different body: its own key (IETF idempotency-key draft)
    assert keys[2].endswith("#1") and keys[3] == keys[2][:-1] + "2"
    assert rec.usage["model_calls"] == 5  # the HTTP retry is the executor's, not a model call


def test_the_default_stand_in_answers_every_kind(server):
    _run_id, out, rec = drive(A.everything, {"text": "tell me about widgets"}, executors_for(server))
    assert out.text.startswith("Summary: tell me about widgets")
    assert out.notes[3].startswith("decide Approve(")
    assert rec.usage["model_calls"] == 4 and rec.usage["total_tokens"] > 0


def test_provider_failure_reaches_the_agent_as_a_typed_error(server):
    server.enqueue(*[error(500)] * 3)

    async def main():
        async with executors_for(server, max_retries=2) as ex, Runtime(MemoryStore(), executors=ex) as rt:
            run_id = await rt.start(A.chain, {"n": 1})
            with pytest.raises(Exception) as info:
                await rt.wait(run_id, timeout=30)
            return info.value

    err = asyncio.run(main())
    assert type(err).__name__ == "ModelProviderError" and err.status == 500 and err.attempts == 3


def test_a_journaled_http_answer_is_not_requested_again_after_restart(tmp_path, server):
    path = tmp_path / "agentrt.db"
    server.enqueue(reply("first"), delay(30))  # the second call hangs until the runtime goes away

    async def first():
        store = SqliteStore(path)
        ex = executors_for(server)
        rt = Runtime(store, executors=ex)
        run_id = await rt.start(A.chain, {"n": 3})
        while len(server.requests) < 2:
            await asyncio.sleep(0.01)
        await rt.close()  # cancels the in-flight HTTP request
        await ex.aclose()
        store.close()
        return run_id

    run_id = asyncio.run(first())
    server.enqueue(reply("second"), reply("third"))

    async def second():
        store = SqliteStore(path)
        async with executors_for(server) as ex, Runtime(store, executors=ex) as rt:
            await rt.resume(run_id)
            out = await rt.wait(run_id, timeout=30)
        store.close()
        return out

    out = asyncio.run(second())
    assert out.notes == ["first", "second", "third"]
    ids = [r.headers["idempotency-key"] for r in server.requests]
    # the answer lost to the crash is asked again with the same body, so with the same key
    assert ids == [f"{run_id}:1.0#1", f"{run_id}:2.0#1", f"{run_id}:2.0#1", f"{run_id}:3.0#1"]
