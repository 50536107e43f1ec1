"""``llm_agent(...)`` (one-shot and multi-turn) and self-managed state agents, on scripted executors."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest

import agentrt
from agentrt import MemoryStore, Runtime, SchemaError, call_tools, llm_agent
from agentrt.llm import ModelToolCall, Scripted, ScriptedExecutors, Usage
from agentrt.llm.agent import MaxTurnsExceeded
from agentrt.testing import capture_trace
from tests.llm import agents as A
from tests.llm import kinds_agents as K


def drive(agent: Any, input: Any, executors: Any = None, replies: tuple[Any, ...] = ()) -> Any:
    async def main() -> Any:
        async with Runtime(MemoryStore(), executors=executors) as rt:
            run_id = await rt.start(agent, input)
            answered = -1
            for value in replies:
                while not _asking(rt.status(run_id), answered):
                    await asyncio.sleep(0.01)
                answered = rt.status(run_id).seq
                await rt.reply(run_id, value)
            return await rt.wait(run_id, timeout=30)

    return asyncio.run(main())


def _asking(rec: Any, answered: int) -> bool:
    """The run waits on a question it has no reply for yet (a later one than the last answered)."""
    pending = rec.pending or {}
    return rec.status == "waiting" and pending.get("kind") == "ask" and rec.seq > answered


def calls(*items: tuple[str, dict[str, Any]], prefix: str = "c") -> tuple[ModelToolCall, ...]:
    return tuple(ModelToolCall(f"{prefix}{i}", name, args) for i, (name, args) in enumerate(items))


# --------------------------------------------------------------------------- llm_agent: one-shot


def test_one_shot_without_tools_is_a_single_structured_answer() -> None:
    script = ScriptedExecutors({"oneliner": [{"word": "hi", "total": 1}]})
    assert drive(K.oneliner, {"text": "go"}, script) == K.Facts("hi", 1)
    [request] = script.calls
    assert request.system == "Answer at once." and request.tools == ()
    assert request.output_schema is not None and request.output_schema["title"] == "Facts"
    assert request.messages == ({"role": "user", "content": '{"text": "go", "n": 3}'},)


def test_one_shot_resolves_tool_calls_then_answers() -> None:
    script = ScriptedExecutors(
        {
            "researcher": [
                Scripted(
                    "",
                    tool_calls=calls(("lookup", {"word": "abc"}), ("add", {"a": 1, "b": 2}), ("nope", {})),
                ),
                Scripted({"word": "ABC", "total": 3}, usage=Usage(5, 5, 10)),
            ]
        }
    )
    assert drive(K.researcher, {"text": "abc"}, script) == K.Facts("ABC", 3)
    first, second = script.calls
    assert [t["name"] for t in first.tools] == ["lookup", "add", "explode"]
    assert first.output_schema is not None  # structured answer asked for, tools offered alongside
    _user, assistant, *results = second.messages
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["lookup", "add", "nope"]
    assert [(r["tool_call_id"], r["content"]) for r in results] == [
        ("c0", "ABC"),
        ("c1", "3"),
        ("c2", "error: there is no tool 'nope'; the tools are lookup, add, explode"),
    ]


def test_one_shot_refused_answer_is_fed_back_and_retried() -> None:
    script = ScriptedExecutors({"researcher": [{"word": "x"}, {"word": "x", "total": 2}]})
    assert drive(K.researcher, {"text": "x"}, script) == K.Facts("x", 2)
    assert len(script.calls[1].attempts) == 1 and "total" in script.calls[1].attempts[0].error


def test_max_turns_ends_the_run_with_the_conversation() -> None:
    looping = [Scripted("", tool_calls=calls(("add", {"a": i, "b": 1}))) for i in range(4)]
    script = ScriptedExecutors({"researcher": looping})

    async def main() -> Any:
        async with Runtime(MemoryStore(), executors=script) as rt:
            run_id = await rt.start(K.researcher, {"text": "x"})
            with pytest.raises(MaxTurnsExceeded) as info:
                await rt.wait(run_id, timeout=30)
            return info.value, rt.status(run_id)

    error, rec = asyncio.run(main())
    assert error.max_turns == 4 and len(script.calls) == 4
    assert "max_turns=4" in str(error) and rec.error["cause"] == "max-turns"


# --------------------------------------------------------------------------- llm_agent: multi-turn


def test_multi_turn_runs_parallel_tools_until_submit() -> None:
    script = ScriptedExecutors(
        {
            "planner": [
                Scripted("", tool_calls=calls(("lookup", {"word": "q"}), ("add", {"a": 2, "b": 3}))),
                Scripted("thinking out loud"),  # plain text: reminded to submit
                Scripted("", tool_calls=calls(("submit", {"word": "Q"}), prefix="s")),  # refused: no total
                Scripted("", tool_calls=calls(("submit", {"word": "Q", "total": 5}), prefix="t")),
            ]
        }
    )
    assert drive(K.planner, {"text": "q"}, script) == K.Facts("Q", 5)
    first, second, third, fourth = script.calls
    assert [t["name"] for t in first.tools] == ["lookup", "add", "explode", "submit"]
    submit_schema = first.tools[-1]["parameters"]
    assert submit_schema["title"] == "Facts" and set(submit_schema["required"]) == {"word", "total"}
    assert "call the `submit` tool" in (first.system or "")
    assert first.metadata == {"openai": {"tool_choice": "required"}}
    assert [m.get("content") for m in second.messages[-2:]] == ["Q", "5"]
    assert "call the `submit` tool" in third.messages[-1]["content"]
    refusal = fourth.messages[-1]
    assert refusal["role"] == "tool" and refusal["tool_call_id"] == "s0"
    assert refusal["content"].startswith("error: submit refused:") and "total" in refusal["content"]


def test_parallel_tool_calls_of_one_turn_are_one_gather(tmp_path: Any) -> None:
    """The turn's calls are dispatched together: both are in flight before either finishes."""
    script = ScriptedExecutors(
        {
            "planner": [
                Scripted("", tool_calls=calls(("lookup", {"word": "a"}), ("lookup", {"word": "b"}))),
                Scripted("", tool_calls=calls(("submit", {"word": "AB", "total": 2}), prefix="s")),
            ]
        }
    )

    async def main() -> Any:
        async with Runtime(MemoryStore(), executors=script) as rt:
            run_id = await rt.start(K.planner, {"text": "ab"})
            return await rt.wait(run_id, timeout=30)

    with capture_trace() as events:
        assert asyncio.run(main()) == K.Facts("AB", 2)
    kinds = [e.kind for e in events]
    started = [i for i, k in enumerate(kinds) if k == "tool_started"]
    finished = [i for i, k in enumerate(kinds) if k == "tool_finished"]
    assert len(started) == 2 and len(finished) == 2 and max(started) < min(finished)


def test_llm_agent_as_sub_agent_of_a_coded_agent() -> None:
    script = ScriptedExecutors(
        {"planner": [Scripted("", tool_calls=calls(("submit", {"word": "sub", "total": 7})))]}
    )
    assert drive(K.boss, {"text": "x"}, script) == A.Answer("sub=7")


def test_coded_agent_as_tool_of_an_llm_agent() -> None:
    script = ScriptedExecutors(
        {
            "delegator": [
                Scripted("", tool_calls=calls(("helper", {"text": "hey", "n": 1}))),
                Scripted("", tool_calls=calls(("submit", {"word": "HEY", "total": 101}), prefix="s")),
            ]
        }
    )
    assert drive(K.delegator, {"text": "x"}, script) == K.Facts("HEY", 101)
    result = script.calls[1].messages[-1]
    assert result["role"] == "tool" and '"HEY"' in result["content"] and "101" in result["content"]


def test_llm_agent_definition_errors() -> None:
    with pytest.raises(ValueError, match="modes are"):
        llm_agent(system="s", input=A.Prompt, output=K.Facts, mode="chat")
    with pytest.raises(ValueError, match="max_turns"):
        llm_agent(system="s", input=A.Prompt, output=K.Facts, max_turns=0)

    @agentrt.tool(name="submit")
    def submit(x: int) -> int:
        return x

    with pytest.raises(ValueError, match="multi-turn mode injects"):
        llm_agent(system="s", input=A.Prompt, output=K.Facts, mode="multi-turn", tools=[submit])


def test_llm_agent_needs_generate_text_at_bind_time() -> None:
    from agentrt.llm import MissingExecutor

    async def main() -> None:
        async with Runtime(MemoryStore(), executors={"decide": ScriptedExecutors().decide}) as rt:
            await rt.start(K.boss, {"text": "x"})

    with pytest.raises(MissingExecutor, match="generate_text") as info:
        asyncio.run(main())
    assert info.value.agent == "planner"
    assert info.value.where.startswith("llm_agent 'planner' (kinds_agents.py:")  # where it is defined


# --------------------------------------------------------------------------- self-managed state


def test_self_managed_agent_runs_batches_and_keeps_state() -> None:
    out = drive(K.counter, {"text": "abc", "n": 4})
    # round 1: lookup abc, add 0+4; round 2: add 4+2, lookup r2; round 3: add 6+3, lookup r3
    assert out == A.Answer("total 9", ["ABC", "R2", "R3"])


def test_self_managed_tool_failures_come_back_as_results() -> None:
    out = drive(K.failing, {"text": "x"})
    assert out.notes == ["explode False None ValueError: boom 1", "lookup True OK None"]


def test_self_managed_frozen_state_is_replaced_with_state_arg() -> None:
    assert drive(K.frozen, {"text": "x"}) == A.Answer("3", ["0", "1", "2"])


def test_self_managed_ask_waits_for_replies() -> None:
    out = drive(K.asker, {"text": "tea"}, replies=("again", "yes"))
    assert out == A.Answer("yes", ["what about tea?"])


@pytest.mark.parametrize("text", ["bad", "wrong"])
def test_state_is_validated_when_saved(text: str) -> None:
    """A value its validator refuses, or of the wrong type: caught when the state is saved."""

    async def main() -> Any:
        async with Runtime(MemoryStore()) as rt:
            run_id = await rt.start(K.strict, {"text": text})
            with pytest.raises(SchemaError) as info:
                await rt.wait(run_id, timeout=30)
            return info.value

    error = asyncio.run(main())
    assert "after strict_start()" in str(error) and "count" in str(error) and "'strict'" in str(error)
    assert drive(K.strict, {"text": "fine"}) == A.Answer("1")


def test_state_is_validated_when_read_back() -> None:
    from agentrt._sdk.stateful import StateError, _restore

    spec = K.strict.run.args[0]
    assert _restore(spec, {"count": 2}) == K.Strict(2)
    with pytest.raises(StateError, match="no longer fits Strict"):
        _restore(spec, {"count": -3})


def test_self_managed_as_sub_agent() -> None:
    out = drive(K.uses_counter, {"text": "abc", "n": 4})
    assert out == A.Answer("inner: total 9", ["ABC", "R2", "R3"])


def test_self_managed_definition_errors() -> None:
    @attrs.define
    class NoDefault:
        x: int

    with pytest.raises(TypeError, match="module level"):
        agentrt.agent(
            input=A.Prompt, output=A.Answer, state=NoDefault, start=K.tally_start,
            on_tool_results=K.tally_results,
        )  # fmt: skip
    with pytest.raises(TypeError, match="give every field a default"):
        agentrt.agent(
            input=A.Prompt, output=A.Answer, state=K.NoDefault, start=K.tally_start,
            on_tool_results=K.tally_results,
        )  # fmt: skip
    with pytest.raises(TypeError, match="module level"):
        agentrt.agent(
            input=A.Prompt, output=A.Answer, state=K.Tally, start=lambda i, s: None,
            on_tool_results=K.tally_results,
        )  # fmt: skip
    with pytest.raises(TypeError, match="not both"):
        agentrt.agent(input=A.Prompt, output=A.Answer, run=A.chain_run, state=K.Tally)
    with pytest.raises(TypeError, match="needs run="):
        agentrt.agent(input=A.Prompt, output=A.Answer)
    with pytest.raises(TypeError, match="not a ToolCall"):
        call_tools([{"name": "add"}])  # type: ignore[list-item]


def test_max_model_calls_bounds_an_llm_agent() -> None:
    from agentrt.llm import ModelCallBudgetExceeded

    looping = [Scripted("", tool_calls=calls(("lookup", {"word": str(i)}))) for i in range(5)]
    script = ScriptedExecutors({"planner": looping})

    async def main() -> Any:
        async with Runtime(MemoryStore(), executors=script, max_model_calls=3) as rt:
            run_id = await rt.start(K.planner, {"text": "x"})
            with pytest.raises(ModelCallBudgetExceeded):
                await rt.wait(run_id, timeout=30)
            return rt.status(run_id)

    rec = asyncio.run(main())
    assert rec.error["cause"] == "max-model-calls" and len(script.calls) == 3


def test_traces_show_each_turn_and_each_tool_of_both_kinds() -> None:
    from agentrt.testing import capture_trace

    script = ScriptedExecutors(
        {
            "planner": [
                Scripted("", tool_calls=calls(("lookup", {"word": "a"}), ("add", {"a": 1, "b": 1}))),
                Scripted("", tool_calls=calls(("submit", {"word": "A", "total": 2}), prefix="s")),
            ]
        }
    )
    with capture_trace() as events:
        assert drive(K.planner, {"text": "a"}, script) == K.Facts("A", 2)
        assert drive(K.counter, {"text": "abc", "n": 4}).text == "total 9"
    by_run: dict[str, list[Any]] = {}
    for event in events:
        by_run.setdefault(event.run_id, []).append(event)
    planner_run, counter_run = by_run.values()
    kinds = [e.kind for e in planner_run]
    assert kinds.count("model_request") == 2 and kinds.count("tool_started") == 2
    assert kinds[-1] == "completed"
    srcs = {e.data.get("src") for e in planner_run if e.kind == "model_request"}
    assert srcs == {"planner"}
    tools = [e.data.get("tool") or e.data.get("name") for e in counter_run if e.kind == "tool_started"]
    assert sorted(tools) == ["add", "add", "add", "lookup", "lookup", "lookup"]
