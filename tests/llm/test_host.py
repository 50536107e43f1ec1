"""The host side of a model request: ``build_request`` and ``execute`` (validate, retry with feedback)."""

from __future__ import annotations

import asyncio
import json
import types
from typing import ClassVar

import attrs
import pytest

import agentrt
from agentrt import Task, agent, tool
from agentrt._sdk.schema import object_schema
from agentrt.llm import (
    LLM,
    Attempt,
    DecideResult,
    DecisionExhausted,
    EventSpec,
    ExecutorRequest,
    Executors,
    GenerateResult,
    MissingExecutor,
    ModelToolCall,
    ScriptedExecutors,
    StructuredOutputError,
    TextResult,
    Usage,
    as_executors,
    envelope_schema,
    feedback_messages,
    render_decision_attempts,
)
from agentrt.llm._host import Outcome, build_request, execute


@agentrt.serializable
@attrs.frozen
class Out:
    """A summary of the text."""

    summary: str
    n: int = 0


@agentrt.serializable
@attrs.frozen
class Approve:
    """Approve the change.

    Longer text that is not part of the description.
    """

    reason: str


@agentrt.serializable
@attrs.frozen
class Reject:
    why: str
    severity: int = 1


@agentrt.serializable
@attrs.frozen
class Escalate:
    type: ClassVar[str] = "escalate"
    to: str


@agentrt.serializable
@attrs.frozen
class HasResultField:
    result: str


@agentrt.serializable
@attrs.frozen
class HasPayloadField:
    payload: str


@attrs.frozen
class In:
    text: str


@tool
def lookup(query: str, limit: int = 3) -> str:
    """Look something up.

    Args:
        query: What to look for.
    """
    return query


async def _sub_run(input: In, task: Task) -> Out:
    return Out(input.text)


sub = agent(input=In, output=Out, run=_sub_run, name="sub")

llm = LLM("ag")


NO_USAGE = Usage()


def req(call, *, tools=None, run_usage=NO_USAGE, seq=1, idx=0):
    return build_request(
        call, run_id="run1", seq=seq, idx=idx, agent="ag", tools=tools or {}, run_usage=run_usage
    )


def run_exec(call, executors, **kw):
    return asyncio.run(execute(call, req(call), executors, **kw))


def answers(*values, kind="generate_text"):
    """An executor (of ``kind``) returning ``values`` in turn and recording its requests in ``.requests``."""
    queue = list(values)
    seen: list[ExecutorRequest] = []

    if kind == "stream_text":

        async def fn(request, on_chunk):
            seen.append(request)
            return queue.pop(0)

    else:

        async def fn(request):
            seen.append(request)
            return queue.pop(0)

    fn.requests = seen  # type: ignore[attr-defined]
    return fn


# --------------------------------------------------------------------------- build_request


def test_build_request_plain_data():
    call = llm.generate_text("hi", system="sys", model="m", metadata={"k": [1]}, src="s", reasoning=True)
    r = req(call, run_usage=Usage(1, 2, 3), seq=4, idx=2)
    assert (r.kind, r.src, r.run_id, r.seq, r.idx, r.agent) == ("generate_text", "s", "run1", 4, 2, "ag")
    assert r.id == "run1:4.2"
    assert (r.prompt, r.system, r.model, r.metadata, r.reasoning) == ("hi", "sys", "m", {"k": [1]}, True)
    assert r.run_usage == Usage(1, 2, 3)
    assert r.output_type is None and r.output_schema is None and not r.structured
    assert r.tools == () and r.events == () and r.attempts == ()
    assert r.chat_messages() == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]


def test_build_request_output_schema():
    r = req(llm.generate_text("hi", output=Out))
    assert r.output_type is Out
    assert r.output_schema == object_schema(Out)
    assert r.output_schema["properties"]["summary"] == {"type": "string"}
    assert r.structured


def test_build_request_resolves_tool_schemas():
    call = llm.generate_text("hi", tools=[lookup, "sub"])
    r = req(call, tools={"lookup": lookup, "sub": sub})
    assert r.tools == (lookup.json_schema(), sub.json_schema())
    assert r.tools[0]["name"] == "lookup"
    assert r.tools[0]["parameters"]["properties"]["query"]["description"] == "What to look for."


def test_build_request_unknown_tool():
    call = llm.generate_text("hi", tools=["lookup", "nope"], src="site")
    with pytest.raises(LookupError) as info:
        req(call, tools={"lookup": lookup})
    text = str(info.value)
    assert "'nope'" in text and "agent 'ag'" in text and "'site'" in text
    assert "its tools: lookup" in text
    with pytest.raises(LookupError, match=r"\(none\)"):
        req(call, tools={})


def test_build_request_events():
    r = req(llm.decide("pick", events=[Approve, Reject, Escalate]))
    assert r.events == (
        EventSpec("Approve", "Approve the change.", object_schema(Approve)),
        EventSpec("Reject", "", object_schema(Reject)),
        EventSpec("escalate", "", object_schema(Escalate)),
    )
    assert r.events[1].schema["required"] == ["why"]
    assert r.output_schema is None


# --------------------------------------------------------------------------- text


def test_text_ok():
    gen = answers("hello")
    out = run_exec(llm.generate_text("hi", src="s"), Executors(generate_text=gen))
    assert out == Outcome(True, TextResult(output="hello", usage=Usage(), attempts=1), Usage(), 1)
    assert len(gen.requests) == 1 and gen.requests[0].prompt == "hi"


def test_text_result_fields_from_generate_result():
    result = GenerateResult(
        output="calling",
        usage={"prompt_tokens": 5, "completion_tokens": 1},  # type: ignore[arg-type]
        tool_calls=({"id": "c1", "name": "lookup", "arguments": '{"query": "q"}'},),  # type: ignore[arg-type]
        model="m-1",
    )
    out = run_exec(llm.generate_text("hi"), Executors(generate_text=answers(result)))
    assert out.ok
    assert out.value.tool_calls == (ModelToolCall("c1", "lookup", {"query": "q"}),)
    assert out.value.model == "m-1"
    assert out.value.usage == out.usage == Usage(5, 1, 6)


def test_text_mapping_answer():
    out = run_exec(
        llm.generate_text("hi"),
        Executors(generate_text=answers({"output": "yo", "usage": {"input_tokens": 2, "output_tokens": 3}})),
    )
    assert out.ok and out.value.output == "yo" and out.usage == Usage(2, 3, 5)


def test_text_executor_returning_non_str():
    out = run_exec(llm.generate_text("hi", src="s"), Executors(generate_text=answers({"output": 42})))
    assert not out.ok
    assert isinstance(out.value, TypeError)
    assert "must be a str" in str(out.value) and "'s'" in str(out.value)
    assert out.calls == 1


def test_text_executor_returning_unusable_value():
    out = run_exec(llm.generate_text("hi"), Executors(generate_text=answers(42)))
    assert not out.ok and isinstance(out.value, TypeError)
    assert "returned int" in str(out.value)


# --------------------------------------------------------------------------- structured output


@pytest.mark.parametrize(
    "answer",
    [
        {"summary": "ok", "n": 2},
        '{"summary": "ok", "n": 2}',
        b'{"summary": "ok", "n": 2}',
        Out("ok", 2),
        {"result": {"summary": "ok", "n": 2}},
        {"result": {"summary": "ok", "n": 2}, "reasoning": "because"},
        '{"result": {"summary": "ok", "n": 2}}',
        GenerateResult(output={"summary": "ok", "n": 2}),
    ],
    ids=["dict", "json", "bytes", "instance", "envelope", "envelope+reasoning", "json-envelope", "result"],
)
def test_structured_output_accepted(answer):
    returned = answer if isinstance(answer, GenerateResult) else {"output": answer}
    out = run_exec(llm.generate_text("hi", output=Out), Executors(generate_text=answers(returned)))
    assert out.ok, out.value
    assert out.value.output == Out("ok", 2)
    assert out.value.attempts == 1 and out.calls == 1


def test_structured_output_stream():
    out = run_exec(
        llm.stream_text("hi", output=Out),
        Executors(stream_text=answers('{"summary": "s"}', kind="stream_text")),
    )
    assert out.ok and out.value.output == Out("s")


def test_structured_output_retried_with_feedback():
    gen = answers({"output": {"summary": 5}}, {"output": {"summary": "good"}})
    call = llm.generate_text("write", output=Out, src="sum")
    out = run_exec(call, Executors(generate_text=gen))
    assert out.ok
    assert out.value == TextResult(output=Out("good"), usage=Usage(), attempts=2)
    assert out.calls == 2
    first, second = gen.requests
    assert first.attempts == ()
    assert len(second.attempts) == 1
    attempt = second.attempts[0]
    assert isinstance(attempt, Attempt)
    assert attempt.output == {"summary": 5}
    assert "summary" in attempt.error and "expected string" in attempt.error
    assert first.id == second.id  # stable across retries
    messages = second.chat_messages()
    assert messages[0] == {"role": "user", "content": "write"}
    assert messages[-1] == feedback_messages(second)[0]
    assert messages[-1]["role"] == "user"
    assert '{"summary": 5}' in messages[-1]["content"]
    assert attempt.error in messages[-1]["content"]
    assert "did not match the required JSON schema" in messages[-1]["content"]
    assert len(first.chat_messages()) == 1


def test_structured_output_not_json_is_refused():
    gen = answers({"output": "not json at all"}, {"output": '{"summary": "x"}'})
    out = run_exec(llm.generate_text("hi", output=Out), Executors(generate_text=gen))
    assert out.ok and out.value.attempts == 2
    assert "not JSON" in gen.requests[1].attempts[0].error
    assert gen.requests[1].attempts[0].output == "not json at all"


def test_structured_output_exhausted():
    gen = answers({"output": {"summary": 1}}, {"output": {"nope": "x"}}, {"output": "never asked"})
    call = llm.generate_text("hi", output=Out, src="sum-site", max_attempts=2)
    out = run_exec(call, Executors(generate_text=gen))
    assert not out.ok and out.calls == 2 and len(gen.requests) == 2
    exc = out.value
    assert isinstance(exc, StructuredOutputError)
    assert isinstance(exc, ValueError)
    assert exc.src == "sum-site" and exc.output_type == "Out"
    assert [a["output"] for a in exc.attempts] == [{"summary": 1}, {"nope": "x"}]
    assert all(set(a) == {"output", "error"} for a in exc.attempts)
    assert "unknown field" in exc.attempts[1]["error"]
    text = str(exc)
    assert "'sum-site'" in text and "Out" in text and "2 attempt(s)" in text


def test_structured_output_max_attempts_one():
    out = run_exec(
        llm.generate_text("hi", output=Out, max_attempts=1),
        Executors(generate_text=answers({"output": {}}, {"output": {"summary": "late"}})),
    )
    assert not out.ok and out.calls == 1 and isinstance(out.value, StructuredOutputError)


def test_output_class_with_a_result_field():
    out = run_exec(
        llm.generate_text("hi", output=HasResultField),
        Executors(generate_text=answers({"output": {"result": "hi"}})),
    )
    assert out.ok, out.value
    assert out.value.output == HasResultField("hi")


# --------------------------------------------------------------------------- decide


def decide_call(**kw):
    return llm.decide("pick", events=[Approve, Reject, Escalate], src=kw.pop("src", "gate"), **kw)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"type": "Approve", "reason": "fine"}, Approve("fine")),
        ({"type": "Reject", "payload": {"why": "bad", "severity": 3}}, Reject("bad", 3)),
        ({"type": "Reject", "payload": {"why": "bad"}}, Reject("bad", 1)),
        (Approve("direct"), Approve("direct")),
        ('{"type": "escalate", "to": "boss"}', Escalate("boss")),
        ({"event": {"type": "Approve", "reason": "wrapped"}}, Approve("wrapped")),
        (DecideResult(event={"type": "Reject", "why": "w"}), Reject("w")),
    ],
    ids=["flat", "payload", "payload-default", "instance", "json", "event-key", "decide-result"],
)
def test_decide_accepts(answer, expected):
    out = run_exec(decide_call(), Executors(decide=answers(answer)))
    assert out.ok, out.value
    assert out.value == expected
    assert type(out.value) is type(expected)
    assert out.calls == 1


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ({"type": "Nope"}, "'Nope' is not one of the allowed events (Approve, Reject, escalate)"),
        ({"type": "Approve", "reason": 5}, "expected string"),
        ({"type": "Approve"}, "missing required field"),
        (42, 'must be an object with a "type" among Approve, Reject, escalate'),
        (["Approve"], 'must be an object with a "type"'),
        ({"reason": "no type"}, 'must be an object with a "type"'),
        ("no json here", "not a choice"),
        (Out("wrong class"), 'must be an object with a "type"'),
    ],
    ids=["unknown", "bad-payload", "missing-field", "int", "list", "no-type", "not-json", "other-instance"],
)
def test_decide_refused_then_retried_with_feedback(bad, problem):
    dec = answers(bad, {"type": "Reject", "why": "second"})
    out = run_exec(decide_call(), Executors(decide=dec))
    assert out.ok, out.value
    assert out.value == Reject("second")
    assert out.calls == 2
    retry = dec.requests[1]
    assert len(retry.attempts) == 1
    assert problem in retry.attempts[0].error
    feedback = render_decision_attempts(retry)
    assert feedback == feedback_messages(retry)
    assert retry.chat_messages()[-1] == feedback[0]
    content = feedback[0]["content"]
    assert "Choose exactly one of: Approve, Reject, escalate." in content
    assert retry.attempts[0].error in content
    assert render_decision_attempts(dec.requests[0]) == []


def test_decide_exhausted():
    dec = answers({"type": "Nope"}, {"type": "Maybe"}, {"type": "Approve", "reason": "too late"})
    out = run_exec(decide_call(src="gate-x", max_attempts=2), Executors(decide=dec))
    assert not out.ok and out.calls == 2
    exc = out.value
    assert isinstance(exc, DecisionExhausted)
    assert exc.src == "gate-x"
    assert exc.events == ["Approve", "Reject", "escalate"]
    assert [a["output"] for a in exc.attempts] == [{"type": "Nope"}, {"type": "Maybe"}]
    assert "'gate-x'" in str(exc) and "Approve, Reject, escalate" in str(exc) and "2 attempt(s)" in str(exc)
    assert len(dec.requests) == 2 and len(dec.requests[1].attempts) == 1


def test_event_with_a_payload_field():
    call = llm.decide("pick", events=[HasPayloadField])
    out = run_exec(call, Executors(decide=answers({"type": "HasPayloadField", "payload": "hi"})))
    assert out.ok, out.value
    assert out.value == HasPayloadField("hi")


# --------------------------------------------------------------------------- usage


def test_usage_summed_over_attempts_both_spellings():
    gen = answers(
        {"output": {"bad": 1}, "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
        {"output": {"summary": "ok"}, "usage": {"input_tokens": 4, "output_tokens": 1}},
    )
    call = llm.generate_text("hi", output=Out)
    out = asyncio.run(execute(call, req(call, run_usage=Usage(100, 0, 100)), Executors(generate_text=gen)))
    assert out.ok
    assert out.usage == Usage(7, 3, 10)
    assert out.value.usage == Usage(7, 3, 10)
    # each request sees the run's usage so far, including earlier attempts of this request
    assert gen.requests[0].run_usage == Usage(100, 0, 100)
    assert gen.requests[1].run_usage == Usage(103, 2, 105)


def test_usage_summed_for_decide_and_failures():
    dec = answers(
        DecideResult(event={"type": "Nope"}, usage={"prompt_tokens": 1, "completion_tokens": 1}),  # type: ignore[arg-type]
        {"event": {"type": "Nope"}, "usage": {"input_tokens": 2, "output_tokens": 2, "total_tokens": 9}},
    )
    out = run_exec(decide_call(max_attempts=2), Executors(decide=dec))
    assert not out.ok and isinstance(out.value, DecisionExhausted)
    assert out.usage == Usage(3, 3, 11)


# --------------------------------------------------------------------------- hooks and failures


def test_before_call_runs_before_every_call():
    log: list[tuple[str, int]] = []

    async def gen(request):
        log.append(("call", len(request.attempts)))
        return {"output": {"bad": 1}} if len(request.attempts) < 2 else {"output": {"summary": "x"}}

    out = run_exec(
        llm.generate_text("hi", output=Out),
        Executors(generate_text=gen),
        before_call=lambda r: log.append(("before", len(r.attempts))),
    )
    assert out.ok and out.calls == 3
    assert log == [("before", 0), ("call", 0), ("before", 1), ("call", 1), ("before", 2), ("call", 2)]


def test_before_call_exception_propagates():
    gen = answers("never")

    def refuse(request):
        raise RuntimeError(f"no more calls for {request.src}")

    with pytest.raises(RuntimeError, match="no more calls for s"):
        run_exec(llm.generate_text("hi", src="s"), Executors(generate_text=gen), before_call=refuse)
    assert gen.requests == []


def test_executor_exception_becomes_outcome():
    boom = ConnectionError("provider down")

    async def gen(request):
        raise boom

    out = run_exec(llm.generate_text("hi"), Executors(generate_text=gen))
    assert out == Outcome(False, boom, Usage(), 1)
    assert out.value is boom


@pytest.mark.parametrize("kind", ["generate_text", "stream_text", "decide"])
def test_missing_executor_kind(kind):
    call = decide_call() if kind == "decide" else getattr(llm, kind)("hi", src="s")
    others = {k: answers("x") for k in ("generate_text", "stream_text", "decide") if k != kind}
    out = run_exec(call, Executors(**others))
    assert not out.ok and out.calls == 0 and out.usage == Usage()
    assert isinstance(out.value, MissingExecutor)
    assert out.value.agent == "ag" and out.value.method == kind
    assert f"task.llm.{kind}" in str(out.value) and "run1" in str(out.value)


def test_stream_text_chunks_in_order():
    async def stream(request, on_chunk):
        for piece in ("Hel", "lo", " wor", "ld"):
            on_chunk(piece)
        return "Hello world"

    seen: list[tuple[ExecutorRequest, str]] = []
    out = run_exec(
        llm.stream_text("hi", src="st"),
        Executors(stream_text=stream),
        on_chunk=lambda r, c: seen.append((r, c)),
    )
    assert out.ok and out.value.output == "Hello world"
    assert [c for _, c in seen] == ["Hel", "lo", " wor", "ld"]
    assert all(r.kind == "stream_text" and r.src == "st" for r, _ in seen)
    # without an observer the chunks are simply dropped
    assert run_exec(llm.stream_text("hi"), Executors(stream_text=stream)).value.output == "Hello world"


def test_stream_chunks_carry_the_attempt_request():
    async def stream(request, on_chunk):
        on_chunk(f"try{len(request.attempts)}")
        return '{"summary": 1}' if not request.attempts else '{"summary": "ok"}'

    seen: list[tuple[int, str]] = []
    out = run_exec(
        llm.stream_text("hi", output=Out),
        Executors(stream_text=stream),
        on_chunk=lambda r, c: seen.append((len(r.attempts), c)),
    )
    assert out.ok and out.value.attempts == 2
    assert seen == [(0, "try0"), (1, "try1")]


def test_on_result_once_per_attempt():
    raw_first = {"output": {"bad": 1}, "raw": "provider-body-1"}
    gen = answers(raw_first, GenerateResult(output={"summary": "x"}, raw="provider-body-2"))
    results: list[tuple[int, object]] = []
    out = run_exec(
        llm.generate_text("hi", output=Out),
        Executors(generate_text=gen),
        on_result=lambda r, res: results.append((len(r.attempts), res)),
    )
    assert out.ok
    assert [n for n, _ in results] == [0, 1]
    assert all(isinstance(res, GenerateResult) for _, res in results)
    assert [res.raw for _, res in results] == ["provider-body-1", "provider-body-2"]


def test_on_result_decide():
    results = []
    out = run_exec(
        decide_call(),
        Executors(decide=answers({"type": "Reject", "why": "x"})),
        on_result=lambda r, res: results.append(res),
    )
    assert out.ok
    assert results == [DecideResult(event={"type": "Reject", "why": "x"}, raw={"type": "Reject", "why": "x"})]


def test_execute_with_scripted_executors():
    scripted = ScriptedExecutors({"gate": [{"type": "Nope"}, {"type": "Approve", "reason": "r"}]})
    out = run_exec(decide_call(), as_executors(scripted))
    assert out.ok and out.value == Approve("r") and out.calls == 2
    assert scripted.remaining() == 0


# --------------------------------------------------------------------------- envelope_schema


def test_envelope_schema():
    inner = object_schema(Out)
    assert envelope_schema(inner) == {
        "type": "object",
        "title": "Envelope",
        "properties": {"result": inner},
        "required": ["result"],
        "additionalProperties": False,
    }
    with_reasoning = envelope_schema(inner, reasoning=True)
    assert with_reasoning["required"] == ["result", "reasoning"]
    assert with_reasoning["properties"]["result"] is inner
    assert with_reasoning["properties"]["reasoning"]["type"] == "string"
    assert with_reasoning["additionalProperties"] is False
    json.dumps(with_reasoning)  # plain JSON


# --------------------------------------------------------------------------- Usage.of


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"prompt_tokens": 3, "completion_tokens": 4}, Usage(3, 4, 7)),
        ({"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 10}, Usage(3, 4, 10)),
        ({"input_tokens": 5, "output_tokens": 6}, Usage(5, 6, 11)),
        ({"inputTokens": 1, "outputTokens": 2, "totalTokens": 4}, Usage(1, 2, 4)),
        ({"promptTokens": 7, "completionTokens": 1}, Usage(7, 1, 8)),
        ({"input_tokens": True, "output_tokens": None, "total_tokens": "9"}, Usage(0, 0, 0)),
        ({}, Usage(0, 0, 0)),
        (types.SimpleNamespace(prompt_tokens=2, completion_tokens=3, other=1), Usage(2, 3, 5)),
    ],
    ids=["openai", "openai-total", "anthropic", "camel", "camel-prompt", "non-int", "empty", "object"],
)
def test_usage_of(value, expected):
    assert Usage.of(value) == expected


def test_usage_of_none_and_identity_and_add():
    assert Usage.of(None) is None
    u = Usage(1, 2, 3)
    assert Usage.of(u) is u
    assert u + Usage(10, 20, 30) == Usage(11, 22, 33)
    assert u.to_json() == {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}


# --------------------------------------------------------------------------- as_executors


async def _gen(request):
    return "g"


async def _dec(request):
    return "d"


def test_as_executors_values():
    assert as_executors(None) == Executors()
    ex = Executors(generate_text=_gen)
    assert as_executors(ex) is ex
    mapped = as_executors({"generate_text": _gen, "decide": _dec})
    assert mapped == Executors(generate_text=_gen, decide=_dec)
    assert mapped.kinds() == ("generate_text", "decide")
    assert mapped.has("decide") and not mapped.has("stream_text")


def test_as_executors_object_with_methods():
    scripted = ScriptedExecutors({"*": ["a"]})
    ex = as_executors(scripted)
    assert ex.kinds() == ("generate_text", "stream_text", "decide")
    assert ex.generate_text.__self__ is scripted

    class OnlyDecide:
        stream_text = "not callable"

        async def decide(self, request):
            return "d"

    only = as_executors(OnlyDecide())
    assert only.kinds() == ("decide",)


def test_as_executors_factory():
    ex = as_executors(lambda: {"stream_text": _gen})
    assert ex == Executors(stream_text=_gen)
    nested = as_executors(lambda: lambda: Executors(decide=_dec))
    assert nested == Executors(decide=_dec)


def test_as_executors_bad_values():
    with pytest.raises(TypeError, match=r"unknown key\(s\) \['generate'\]"):
        as_executors({"generate": _gen})
    with pytest.raises(TypeError, match="is not an Executors"):
        as_executors(42)
    with pytest.raises(TypeError, match="is not an Executors"):
        as_executors("generate_text")
    with pytest.raises(TypeError, match="is not an Executors"):
        as_executors(lambda: 42)


class _MyExecutors:
    async def generate_text(self, request):
        return f"answer to {request.prompt}"


def test_as_executors_class_is_a_factory():
    ex = as_executors(_MyExecutors)
    call = llm.generate_text("q")
    out = asyncio.run(execute(call, req(call), ex))
    assert out.ok, out.value
    assert out.value.output == "answer to q"


def test_as_executors_rejects_non_callable_mapping_values():
    with pytest.raises(TypeError):
        as_executors({"generate_text": "not a function"})
