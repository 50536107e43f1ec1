"""``ScriptedExecutors`` (deterministic answers per request site) and the budget wrappers."""

from __future__ import annotations

import asyncio

import attrs
import pytest

import agentrt
from agentrt.llm import (
    LLM,
    DecideResult,
    ExecutorRequest,
    Executors,
    GenerateResult,
    Scripted,
    ScriptedExecutors,
    ScriptExhausted,
    TokenBudgetExceeded,
    Usage,
    with_call_budget,
    with_token_budget,
)
from agentrt.llm._host import build_request, execute


@agentrt.serializable
@attrs.frozen
class Out:
    summary: str


NO_USAGE = Usage()


def rq(src="site", kind="generate_text", prompt="hello there", run_usage=NO_USAGE, **kw):
    return ExecutorRequest(
        kind=kind, src=src, run_id="run1", seq=1, idx=0, agent="ag", prompt=prompt, run_usage=run_usage, **kw
    )


def gen(executors, request):
    return asyncio.run(executors.generate_text(request))


def stream(executors, request):
    chunks: list[str] = []
    result = asyncio.run(executors.stream_text(request, chunks.append))
    return result, chunks


# --------------------------------------------------------------------------- queues


def test_fifo_per_src():
    ex = ScriptedExecutors({"a": ["a1", "a2"], "b": ["b1"]})
    assert gen(ex, rq("a")).output == "a1"
    assert gen(ex, rq("b")).output == "b1"
    assert gen(ex, rq("a")).output == "a2"
    with pytest.raises(ScriptExhausted):
        gen(ex, rq("a"))


def test_star_is_a_fallback_only():
    ex = ScriptedExecutors({"a": ["own"], "*": ["any1", "any2"]})
    assert gen(ex, rq("other")).output == "any1"
    assert gen(ex, rq("a")).output == "own"  # own queue first, even though "*" has answers
    assert gen(ex, rq("a")).output == "any2"  # then the fallback
    with pytest.raises(ScriptExhausted):
        gen(ex, rq("a"))


def test_add_and_remaining():
    ex = ScriptedExecutors()
    assert ex.remaining() == 0
    assert ex.add("x", "1", "2").add("*", "3") is ex
    assert ex.remaining() == 3 and ex.remaining("x") == 2 and ex.remaining("*") == 1
    assert ex.remaining("unknown") == 0
    gen(ex, rq("x"))
    assert ex.remaining("x") == 1 and ex.remaining() == 2


def test_calls_are_recorded_in_order():
    ex = ScriptedExecutors({"*": ["1", "2"]})
    requests = [rq("a", prompt="p1"), rq("b", prompt="p2"), rq("c", prompt="p3")]
    gen(ex, requests[0])
    asyncio.run(ex.decide(requests[1]))
    with pytest.raises(ScriptExhausted):
        gen(ex, requests[2])
    assert ex.calls == requests
    assert [c.prompt for c in ex.calls] == ["p1", "p2", "p3"]


# --------------------------------------------------------------------------- entries


def test_callable_entries_get_the_request():
    ex = ScriptedExecutors(
        {
            "echo": [
                lambda r: f"echo {r.prompt}",
                lambda r: Scripted(output=r.src.upper(), usage={"prompt_tokens": 1, "completion_tokens": 1}),
            ]
        }
    )
    assert gen(ex, rq("echo", prompt="hi")).output == "echo hi"
    second = gen(ex, rq("echo"))
    assert second.output == "ECHO" and second.usage == Usage(1, 1, 2)


def test_class_entries_are_answers_not_factories():
    ex = ScriptedExecutors({"*": [Out]})
    assert gen(ex, rq()).output is Out


def test_exception_entries_are_raised():
    boom = ValueError("scripted failure")
    ex = ScriptedExecutors({"*": [boom, Scripted(error=ConnectionError("down")), lambda r: KeyError("k")]})
    with pytest.raises(ValueError) as info:
        gen(ex, rq())
    assert info.value is boom
    with pytest.raises(ConnectionError, match="down"):
        gen(ex, rq())
    with pytest.raises(KeyError):
        gen(ex, rq())
    assert ex.remaining() == 0


def test_scripted_usage_and_tool_calls():
    ex = ScriptedExecutors(
        {
            "*": [
                Scripted("x", usage={"input_tokens": 3, "output_tokens": 4}),
                Scripted("y", usage=Usage(1, 1, 5), tool_calls=({"name": "lookup", "arguments": {}},)),
                "plain",
            ]
        }
    )
    first = gen(ex, rq())
    assert isinstance(first, GenerateResult)
    assert first.usage == Usage(3, 4, 7)
    assert isinstance(first.raw, Scripted)
    second = gen(ex, rq())
    assert second.usage == Usage(1, 1, 5)
    assert second.tool_calls == ({"name": "lookup", "arguments": {}},)
    third = gen(ex, rq())
    assert third.output == "plain" and third.usage is None


def test_decide_returns_the_event():
    ex = ScriptedExecutors({"d": [{"type": "A"}, Scripted({"type": "B"}, usage={"total_tokens": 9})]})
    first = asyncio.run(ex.decide(rq("d", kind="decide")))
    assert first == DecideResult(event={"type": "A"}, usage=None, raw=Scripted({"type": "A"}))
    second = asyncio.run(ex.decide(rq("d", kind="decide")))
    assert second.event == {"type": "B"} and second.usage == Usage(0, 0, 9)


# --------------------------------------------------------------------------- streaming


@pytest.mark.parametrize("text", ["the quick  brown fox", "one", " leading and trailing ", ""])
def test_stream_default_word_chunks(text):
    ex = ScriptedExecutors({"*": [text]})
    result, chunks = stream(ex, rq(kind="stream_text"))
    assert "".join(chunks) == text
    assert result.output == text
    assert len(chunks) == (len(text.split(" ")) if text else 0)


def test_stream_word_chunks_shape():
    _, chunks = stream(ScriptedExecutors({"*": ["a b c"]}), rq(kind="stream_text"))
    assert chunks == ["a", " b", " c"]


def test_stream_explicit_chunks():
    ex = ScriptedExecutors(
        {"*": [Scripted(chunks=("ab", "cd")), Scripted(output="final", chunks=("f", "in", "al"))]}
    )
    result, chunks = stream(ex, rq(kind="stream_text"))
    assert chunks == ["ab", "cd"] and result.output == "abcd"
    result, chunks = stream(ex, rq(kind="stream_text"))
    assert chunks == ["f", "in", "al"] and result.output == "final"


def test_stream_structured_output_has_no_default_chunks():
    result, chunks = stream(ScriptedExecutors({"*": [{"summary": "s"}]}), rq(kind="stream_text"))
    assert chunks == [] and result.output == {"summary": "s"}


# --------------------------------------------------------------------------- exhaustion


def test_script_exhausted_message():
    ex = ScriptedExecutors({"other": ["x"], "empty": []})
    request = rq("summarize", kind="stream_text", prompt="Please   summarize\nthis " + "long " * 30)
    with pytest.raises(ScriptExhausted) as info:
        asyncio.run(ex.stream_text(request, lambda c: None))
    exc = info.value
    assert exc.src == "summarize" and exc.method == "stream_text"
    text = str(exc)
    assert "stream_text request 'summarize'" in text
    assert "prompt 'Please summarize this long" in text  # whitespace folded
    assert "…" in text  # long prompts are cut
    assert "run run1" in text
    assert "ScriptedExecutors({'summarize': [...]})" in text
    assert ".add('summarize', ...)" in text
    assert "sites with answers left: 'other'" in text
    assert "'empty'" not in text


def test_script_exhausted_names_messages_content_and_no_sites():
    ex = ScriptedExecutors()
    request = ExecutorRequest(
        kind="decide",
        src="gate",
        run_id="r9",
        seq=1,
        idx=0,
        agent="ag",
        messages=({"role": "user", "content": "choose now"},),
    )
    with pytest.raises(ScriptExhausted) as info:
        asyncio.run(ex.decide(request))
    text = str(info.value)
    assert "decide request 'gate', prompt 'choose now'" in text
    assert "sites with answers left: none" in text


def test_scripted_through_execute_surfaces_exhaustion():
    call = LLM("ag").generate_text("hi", src="s")
    request = build_request(call, run_id="r", seq=1, idx=0, agent="ag", tools={}, run_usage=Usage())
    out = asyncio.run(execute(call, request, Executors(generate_text=ScriptedExecutors().generate_text)))
    assert not out.ok and isinstance(out.value, ScriptExhausted)


# --------------------------------------------------------------------------- budgets


def test_token_budget_refuses_at_the_limit():
    scripted = ScriptedExecutors({"*": ["a", "b", "c"]})
    ex = with_token_budget(scripted, 100)
    assert isinstance(ex, Executors)
    with pytest.raises(TokenBudgetExceeded) as info:
        asyncio.run(ex.generate_text(rq("s", run_usage=Usage(60, 40, 100))))
    exc = info.value
    assert exc.cause == "max-tokens"
    assert (exc.run_id, exc.limit, exc.used, exc.src) == ("run1", 100, 100, "s")
    assert "max-tokens" in str(exc) and "100" in str(exc)
    assert scripted.remaining() == 3 and scripted.calls == []  # the request was not sent
    with pytest.raises(TokenBudgetExceeded):
        asyncio.run(ex.decide(rq("s", kind="decide", run_usage=Usage(0, 0, 150))))
    with pytest.raises(TokenBudgetExceeded):
        asyncio.run(ex.stream_text(rq("s", kind="stream_text", run_usage=Usage(0, 0, 101)), print))


def test_token_budget_passes_below_the_limit():
    scripted = ScriptedExecutors({"*": ["a", "b c", "d"]})
    ex = with_token_budget(scripted, 100)
    assert asyncio.run(ex.generate_text(rq(run_usage=Usage(0, 0, 99)))).output == "a"
    chunks: list[str] = []
    assert asyncio.run(ex.stream_text(rq(kind="stream_text"), chunks.append)).output == "b c"
    assert chunks == ["b", " c"]
    assert asyncio.run(ex.decide(rq(kind="decide"))).event == "d"
    assert scripted.remaining() == 0


def test_token_budget_counts_earlier_attempts_in_execute():
    scripted = ScriptedExecutors(
        {"*": [Scripted({"bad": 1}, usage={"prompt_tokens": 6, "completion_tokens": 4}), {"summary": "x"}]}
    )
    call = LLM("ag").generate_text("hi", output=Out, src="s")
    request = build_request(call, run_id="r", seq=1, idx=0, agent="ag", tools={}, run_usage=Usage())
    out = asyncio.run(execute(call, request, with_token_budget(scripted, 10)))
    assert not out.ok and isinstance(out.value, TokenBudgetExceeded)
    assert out.value.used == 10 and out.usage == Usage(6, 4, 10)
    assert scripted.remaining() == 1
    # with room for the retry it succeeds
    scripted2 = ScriptedExecutors(
        {"*": [Scripted({"bad": 1}, usage={"prompt_tokens": 6, "completion_tokens": 4}), {"summary": "x"}]}
    )
    ok = asyncio.run(execute(call, request, with_token_budget(scripted2, 11)))
    assert ok.ok and ok.value.output == Out("x")


def test_budget_wrappers_keep_missing_kinds_missing():
    async def only_generate(request):
        return "g"

    for wrapped in (
        with_token_budget({"generate_text": only_generate}, 5),
        with_call_budget(Executors(generate_text=only_generate), 1),
    ):
        assert wrapped.kinds() == ("generate_text",)
        assert wrapped.decide is None and wrapped.stream_text is None


def test_call_budget_per_src():
    scripted = ScriptedExecutors({"*": ["x"] * 10})
    ex = with_call_budget(scripted, 2)
    assert asyncio.run(ex.generate_text(rq("a"))).output == "x"
    assert asyncio.run(ex.decide(rq("a", kind="decide"))).event == "x"
    with pytest.raises(RuntimeError, match=r"request site 'a': call 3 > 2 \(with_call_budget\)"):
        asyncio.run(ex.generate_text(rq("a")))
    assert scripted.remaining() == 8  # the refused call was not sent
    # another site has its own count
    assert asyncio.run(ex.generate_text(rq("b"))).output == "x"
    assert asyncio.run(ex.generate_text(rq("b"))).output == "x"
    with pytest.raises(RuntimeError, match="'b'"):
        asyncio.run(ex.generate_text(rq("b")))
    # a fresh wrapper counts afresh
    assert asyncio.run(with_call_budget(scripted, 1).generate_text(rq("a"))).output == "x"
