"""LLM-driven and self-managed state agents for the tests (module level: resumable by name)."""

from __future__ import annotations

import json
import os
import time

import attrs

from agentrt import Task, ToolCall, agent, ask, call_tools, llm_agent, output, tool, ui_tools
from tests.llm.agents import Answer, Prompt, add, explode, lookup


@attrs.frozen
class Facts:
    """What the researcher found."""

    word: str
    total: int


researcher = llm_agent(
    name="researcher",
    system="Look the word up and add the numbers, then answer.",
    input=Prompt,
    output=Facts,
    tools=[lookup, add, explode],
    mode="one-shot",
    max_turns=4,
)

planner = llm_agent(
    name="planner",
    system="Work out the facts with the tools.",
    input=Prompt,
    output=Facts,
    tools=[lookup, add, explode],
    mode="multi-turn",
    max_turns=6,
)

#: a plain one-shot agent with no tools: a single structured answer
oneliner = llm_agent(name="oneliner", system="Answer at once.", input=Prompt, output=Facts)


async def boss_run(input: Prompt, task: Task) -> Answer:
    """A coded agent with an LLM agent as its sub-agent."""
    facts = await task.tools.planner(text=input.text, n=input.n)
    return Answer(f"{facts.word}={facts.total}")


boss = agent(input=Prompt, output=Answer, tools=[planner], run=boss_run, name="boss")


async def helper_run(input: Prompt, task: Task) -> Answer:
    """A coded agent used as a tool by an LLM agent."""
    total = await task.tools.add(a=input.n, b=100)
    return Answer(input.text.upper(), [str(total)])


helper = agent(input=Prompt, output=Answer, tools=[add], run=helper_run, name="helper")

delegator = llm_agent(
    name="delegator",
    system="Use the helper agent.",
    input=Prompt,
    output=Facts,
    tools=[helper],
    mode="multi-turn",
)


# --------------------------------------------------------------------------- self-managed state


@attrs.define
class Tally:
    """The counter's state: which round it is in and what the tools returned so far."""

    round: int = 0
    total: int = 0
    words: list[str] = attrs.field(factory=list)


def tally_start(input: Prompt, state: Tally) -> object:
    """Start with one batch: look the word up and add, together."""
    state.round = 1
    return call_tools([ToolCall("lookup", {"word": input.text}), ToolCall("add", {"a": 0, "b": input.n})])


def tally_results(results: list, state: Tally) -> object:
    for result in results:
        if not result.ok:
            state.words.append(f"failed {result.name}: {result.error}")
        elif result.name == "lookup":
            state.words.append(result.value)
        elif result.name == "add":
            state.total = result.value
    if state.round < 3:
        state.round += 1
        return call_tools(
            [
                ToolCall("add", {"a": state.total, "b": state.round}),
                ToolCall("lookup", {"word": f"r{state.round}"}),
            ]
        )
    return output(Answer(f"total {state.total}", list(state.words)))


counter = agent(
    input=Prompt,
    output=Answer,
    tools=[lookup, add, explode],
    state=Tally,
    start=tally_start,
    on_tool_results=tally_results,
    name="counter",
)


@attrs.define
class Asked:
    question: str = ""
    answer: str = ""


def asker_start(input: Prompt, state: Asked) -> object:
    state.question = f"what about {input.text}?"
    return ask(state.question)


def asker_results(results: list, state: Asked) -> object:
    [reply] = results
    state.answer = str(reply.value)
    if reply.value == "again":
        return ask("once more?")
    return output({"text": state.answer, "notes": [state.question]})


asker = agent(
    input=Prompt,
    output=Answer,
    tools=ui_tools,
    state=Asked,
    start=asker_start,
    on_tool_results=asker_results,
    name="asker",
)


@attrs.define
class Strict:
    count: int = attrs.field(default=0, validator=attrs.validators.ge(0), on_setattr=attrs.setters.NO_OP)


def strict_start(input: Prompt, state: Strict) -> object:
    state.count = {"bad": -1, "wrong": "many"}.get(input.text, 1)  # type: ignore[assignment]
    return call_tools([ToolCall("add", {"a": 1, "b": 1})])


def strict_results(results: list, state: Strict) -> object:
    return output(Answer(str(state.count)))


strict = agent(
    input=Prompt,
    output=Answer,
    tools=[add],
    state=Strict,
    start=strict_start,
    on_tool_results=strict_results,
    name="strict",
)


async def uses_counter_run(input: Prompt, task: Task) -> Answer:
    """A coded agent with a self-managed agent as its sub-agent."""
    inner = await task.tools.counter(text=input.text, n=input.n)
    return Answer(f"inner: {inner.text}", inner.notes)


uses_counter = agent(input=Prompt, output=Answer, tools=[counter], run=uses_counter_run, name="uses_counter")


@attrs.define
class Seen:
    seen: list[str] = attrs.field(factory=list)


def failing_start(input: Prompt, state: Seen) -> object:
    return call_tools([ToolCall("explode", {"x": "1"}), ToolCall("lookup", {"word": "ok"})])


def failing_results(results: list, state: Seen) -> object:
    return output(Answer("", [f"{r.name} {r.ok} {r.value} {r.error}" for r in results]))


failing = agent(
    input=Prompt,
    output=Answer,
    tools=[explode, lookup],
    state=Seen,
    start=failing_start,
    on_tool_results=failing_results,
    name="failing",
)


@attrs.define
class NoDefault:
    x: int


@tool
def slow_add(a: int, b: int, idempotency_key: str = "") -> int:
    """Add, slowly: logs a start and an end record (``AGENTRT_TEST_TOOL_CALLS``) around
    ``AGENTRT_TEST_TOOL_DELAY`` seconds, so a test can kill a process while it runs.

    Args:
        a: The first.
        b: The second.
    """
    _record({"event": "start", "tool": "slow_add", "key": idempotency_key, "pid": os.getpid()})
    time.sleep(float(os.environ.get("AGENTRT_TEST_TOOL_DELAY", "0") or 0))
    _record({"event": "end", "tool": "slow_add", "key": idempotency_key, "pid": os.getpid()})
    return a + b


def _record(entry: dict[str, object]) -> None:
    path = os.environ.get("AGENTRT_TEST_TOOL_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def slow_start(input: Prompt, state: Tally) -> object:
    state.round = 1
    return call_tools([ToolCall("slow_add", {"a": 0, "b": 1}), ToolCall("lookup", {"word": input.text})])


def slow_results(results: list, state: Tally) -> object:
    state.total = results[0].value
    state.words.append(results[1].value)
    if state.round < input_rounds(state):
        state.round += 1
        return call_tools(
            [
                ToolCall("slow_add", {"a": state.total, "b": state.round}),
                ToolCall("lookup", {"word": f"r{state.round}"}),
            ]
        )
    return output(Answer(f"total {state.total}", list(state.words)))


def input_rounds(state: Tally) -> int:
    return 3


slow_counter = agent(
    input=Prompt,
    output=Answer,
    tools=[slow_add, lookup],
    state=Tally,
    start=slow_start,
    on_tool_results=slow_results,
    name="slow_counter",
)


@attrs.frozen
class Frozen:
    """A frozen state: each step hands the next state back with ``state=``."""

    steps: tuple[int, ...] = ()


def frozen_start(input: Prompt, state: Frozen) -> object:
    return call_tools([ToolCall("add", {"a": 0, "b": 1})], state=Frozen((0,)))


def frozen_results(results: list, state: Frozen) -> object:
    value = results[0].value
    if len(state.steps) < 3:
        return call_tools([ToolCall("add", {"a": value, "b": 1})], state=Frozen((*state.steps, value)))
    return output(Answer(str(value), [str(s) for s in state.steps]))


frozen = agent(
    input=Prompt,
    output=Answer,
    tools=[add],
    state=Frozen,
    start=frozen_start,
    on_tool_results=frozen_results,
    name="frozen",
)
