"""``task.llm`` request construction: ``generate_text`` / ``stream_text`` / ``decide`` -> ``ModelCall``."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import attrs
import pytest

import agentrt
from agentrt import Task, agent, tool
from agentrt._codec import dumps, loads
from agentrt._sdk.llm import DEFAULT_MAX_ATTEMPTS, event_type_name
from agentrt.llm import LLM, ModelCall, TextResult
from agentrt.lowlevel import Done, Machine


@agentrt.serializable
@attrs.frozen
class Out:
    summary: str
    n: int = 0


@agentrt.serializable
@dataclasses.dataclass(frozen=True)
class DataOut:
    value: int


@attrs.frozen
class NotMarked:
    x: int


class PlainClass:
    x: int = 0


@agentrt.serializable
@attrs.frozen
class Approve:
    """Approve the change."""

    reason: str


@agentrt.serializable
@attrs.frozen
class Reject:
    why: str


@agentrt.serializable
@attrs.frozen
class Renamed:
    type: ClassVar[str] = "approve_it"
    note: str = ""


@agentrt.serializable
@attrs.frozen
class ClashesWithApprove:
    type: ClassVar[str] = "Approve"


@agentrt.serializable
@attrs.frozen
class NonStrType:
    type: ClassVar[int] = 7


@attrs.frozen
class In:
    text: str


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


async def _sub_run(input: In, task: Task) -> Out:
    return Out(input.text)


sub_agent = agent(input=In, output=Out, run=_sub_run, name="helper_agent")

llm = LLM("ag")


# --------------------------------------------------------------------------- prompt / messages


@pytest.mark.parametrize("method", ["generate_text", "stream_text"])
def test_prompt_xor_messages(method):
    make = getattr(llm, method)
    with pytest.raises(TypeError, match="exactly one of prompt= or messages="):
        make()
    with pytest.raises(TypeError, match="exactly one of prompt= or messages="):
        make("hi", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(TypeError, match="exactly one of prompt= or messages="):
        make(messages=[])
    assert make("hi").prompt == "hi"
    call = make(messages=[{"role": "user", "content": "hi"}])
    assert call.prompt is None
    assert call.messages == ({"role": "user", "content": "hi"},)
    assert call.kind == method


def test_decide_prompt_xor_messages():
    with pytest.raises(TypeError, match=r"task\.llm\.decide: give exactly one"):
        llm.decide(events=[Approve])
    with pytest.raises(TypeError, match="exactly one"):
        llm.decide("x", messages=[{"role": "user", "content": "y"}], events=[Approve])


def test_prompt_must_be_str():
    with pytest.raises(TypeError, match="prompt must be a str, got int"):
        llm.generate_text(5)  # type: ignore[arg-type]


def test_messages_need_role_and_are_copied():
    with pytest.raises(TypeError, match=r"messages\[1\] has no 'role'"):
        llm.generate_text(messages=[{"role": "system", "content": "s"}, {"content": "no role"}])
    original = {"role": "user", "content": "hi"}
    call = llm.generate_text(messages=(m for m in [original]))
    original["content"] = "changed"
    assert call.messages == ({"role": "user", "content": "hi"},)
    assert isinstance(call.messages, tuple)


# --------------------------------------------------------------------------- output=


@pytest.mark.parametrize("method", ["generate_text", "stream_text"])
def test_output_must_be_serializable_record(method):
    make = getattr(llm, method)
    with pytest.raises(TypeError, match=r"@agentrt\.serializable") as info:
        make("x", output=NotMarked)
    assert "NotMarked" in str(info.value)
    assert f"task.llm.{method}(output=...)" in str(info.value)
    with pytest.raises(TypeError, match="must be an attrs class or a dataclass"):
        make("x", output=PlainClass)
    with pytest.raises(TypeError, match="must be an attrs class or a dataclass"):
        make("x", output=int)
    with pytest.raises(TypeError, match="must be an attrs class or a dataclass"):
        make("x", output=Out(summary="an instance"))  # type: ignore[arg-type]
    assert make("x", output=Out).output is Out
    assert make("x", output=DataOut).output is DataOut
    assert make("x").output is None


# --------------------------------------------------------------------------- decide


def test_decide_builds_event_call():
    call = llm.decide("pick", events=[Approve, Reject], src="gate")
    assert call.kind == "decide"
    assert call.events == (Approve, Reject)
    assert call.output is None and call.tools == ()
    assert call.src == "gate" and call.prompt == "pick"


def test_decide_needs_events():
    with pytest.raises(ValueError, match="at least one event class"):
        llm.decide("pick", events=[])


def test_decide_events_must_be_serializable_records():
    with pytest.raises(TypeError, match=r"@agentrt\.serializable") as info:
        llm.decide("pick", events=[Approve, NotMarked])
    assert "NotMarked" in str(info.value)
    with pytest.raises(TypeError, match="attrs class or a dataclass"):
        llm.decide("pick", events=[PlainClass])


def test_event_type_name():
    assert event_type_name(Approve) == "Approve"
    assert event_type_name(Renamed) == "approve_it"
    assert event_type_name(NonStrType) == "NonStrType"  # a non-str ``type`` is ignored


def test_decide_event_types_must_be_distinct():
    with pytest.raises(ValueError, match="distinct") as info:
        llm.decide("pick", events=[Approve, ClashesWithApprove])
    assert "['Approve', 'Approve']" in str(info.value)
    with pytest.raises(ValueError, match="distinct"):
        llm.decide("pick", events=[Reject, Reject])
    # a ``type`` ClassVar renames the event, so these two are distinct
    call = llm.decide("pick", events=[Renamed, Approve])
    assert call.events == (Renamed, Approve)


# --------------------------------------------------------------------------- src


def test_src_defaults_to_calling_function_qualname():
    assert llm.generate_text("x").src == "test_src_defaults_to_calling_function_qualname"

    def inner():
        return llm.stream_text("x"), llm.decide("x", events=[Approve])

    streamed, decided = inner()
    assert streamed.src == "test_src_defaults_to_calling_function_qualname.<locals>.inner"
    assert decided.src == streamed.src


def test_src_through_task_llm():
    task = Task(run_id="r1", agent="ag")
    assert task.llm.generate_text("x").src == "test_src_through_task_llm"
    assert task.llm.decide("x", events=[Approve], src="chosen").src == "chosen"


def test_src_can_be_set():
    assert llm.generate_text("x", src="summarize").src == "summarize"
    assert llm.stream_text("x", src="s2").src == "s2"
    assert llm.decide("x", events=[Approve], src="d").src == "d"


# --------------------------------------------------------------------------- tools, options


def test_tools_become_names():
    call = llm.generate_text("x", tools=[lookup, "other", sub_agent])
    assert call.tools == ("lookup", "other", "helper_agent")
    assert llm.generate_text("x").tools == ()
    with pytest.raises(TypeError, match="is not a tool"):
        llm.generate_text("x", tools=[42])


def test_options_are_carried():
    call = llm.generate_text(
        "x", system="be brief", model="small", metadata={"k": 1}, reasoning=True, max_attempts=5
    )
    assert (call.system, call.model, call.metadata, call.reasoning, call.max_attempts) == (
        "be brief",
        "small",
        {"k": 1},
        True,
        5,
    )
    default = llm.generate_text("x")
    assert default.max_attempts == DEFAULT_MAX_ATTEMPTS == 3
    assert default.metadata == {} and default.reasoning is False and default.system is None


@pytest.mark.parametrize("bad", [0, -1, "3", 1.5, None])
def test_max_attempts_validation(bad):
    with pytest.raises(ValueError, match="max_attempts must be an int >= 1"):
        llm.generate_text("x", max_attempts=bad)
    with pytest.raises(ValueError, match="max_attempts"):
        llm.decide("x", events=[Approve], max_attempts=bad)


def test_max_attempts_one_is_fine():
    assert llm.stream_text("x", max_attempts=1).max_attempts == 1


# --------------------------------------------------------------------------- value semantics


def test_model_call_is_frozen():
    call = llm.generate_text("x", src="s")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        call.src = "other"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        call.prompt = "y"  # type: ignore[misc]
    assert repr(call) == "llm.generate_text('s')"


@pytest.mark.parametrize(
    "make",
    [
        lambda: llm.generate_text(
            "x",
            output=Out,
            tools=[lookup],
            metadata={"trace": [1, 2], "tag": "t"},
            system="sys",
            model="m",
            src="a",
            max_attempts=4,
            reasoning=True,
        ),
        lambda: llm.stream_text(messages=[{"role": "user", "content": "hi"}], output=DataOut, src="b"),
        lambda: llm.decide("pick", events=[Approve, Reject, Renamed], src="c"),
    ],
    ids=["generate", "stream", "decide"],
)
def test_model_call_round_trips_through_codec(make):
    call = make()
    back = loads(dumps(call))
    assert isinstance(back, ModelCall)
    assert back == call
    assert back is not call
    assert back.output is call.output
    assert all(a is b for a, b in zip(back.events, call.events, strict=True))


def test_round_trip_detects_differences():
    # the equality used above is not trivially true
    assert loads(dumps(llm.generate_text("x", src="a"))) != llm.generate_text("y", src="a")


# --------------------------------------------------------------------------- awaiting


async def _agent_body(task: Task) -> str:
    result = await task.llm.generate_text("hello", output=Out)
    choice = await task.llm.decide("pick", events=[Approve, Reject], src="gate")
    return f"{result.output.summary}/{type(choice).__name__}"


def test_await_suspends_machine_with_the_model_call():
    machine = Machine(_agent_body, Task(run_id="r1", agent="ag"))
    first = machine.step()
    assert isinstance(first, ModelCall)
    assert machine.pending is first
    assert (first.kind, first.prompt, first.output, first.src) == (
        "generate_text",
        "hello",
        Out,
        "_agent_body",
    )

    # the suspended chain checkpoints and restores with the request pending
    restored = Machine.set(machine.get())
    machine.discard()
    assert restored.pending == first

    second = restored.step(TextResult(output=Out("sum")))
    assert isinstance(second, ModelCall)
    assert restored.pending is second
    assert (second.kind, second.src, second.events) == ("decide", "gate", (Approve, Reject))

    done = restored.step(Reject("no"))
    assert isinstance(done, Done)
    assert done.value == "sum/Reject"
    assert restored.pending is None
