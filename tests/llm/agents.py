"""Agents that ask models, for the runtime and crash tests (module level: resumable by name)."""

from __future__ import annotations

import json
import os

import attrs

import agentrt
from agentrt import Task, agent, tool, ui_tools
from agentrt.llm import DecisionExhausted, StructuredOutputError, generate_with_tools


@attrs.frozen
class Prompt:
    text: str = "hello"
    n: int = 3


@attrs.frozen
class Answer:
    text: str
    notes: list[str] = attrs.field(factory=list)


@agentrt.serializable
@attrs.frozen
class Summary:
    title: str
    points: list[str]


@agentrt.serializable
@attrs.frozen
class Approve:
    """Accept the change."""

    reason: str


@agentrt.serializable
@attrs.frozen
class Reject:
    """Turn the change down."""

    why: str
    severity: int = 1


@agentrt.serializable
@attrs.frozen
class Scored:
    type = "SCORED"  # the emitted type name, not the class name
    score: int


@tool
def lookup(word: str) -> str:
    """Look a word up.

    Args:
        word: The word.
    """
    return word.upper()


async def chain_run(input: Prompt, task: Task) -> Answer:
    """``n`` model calls in a row, each one fed the answer before: the crash tests' agent."""
    text = input.text
    seen = []
    for i in range(input.n):
        result = await task.llm.generate_text(prompt=f"step {i}: {text}", src="step")
        text = result.output
        seen.append(text)
    return Answer(text, seen)


chain = agent(input=Prompt, output=Answer, run=chain_run, name="chain")


async def everything_run(input: Prompt, task: Task) -> Answer:
    notes = []
    plain = await task.llm.generate_text(prompt=input.text, system="Be brief.", model="quick", src="plain")
    notes.append(f"text {plain.output} {plain.usage.total_tokens if plain.usage else None}")
    summary = await task.llm.generate_text(prompt="summarize", output=Summary, src="summary")
    notes.append(f"summary {summary.output.title} {summary.output.points} attempts={summary.attempts}")
    streamed = await task.llm.stream_text(prompt="stream please", src="stream")
    notes.append(f"stream {streamed.output}")
    choice = await task.llm.decide(prompt="approve?", events=[Approve, Reject], src="choose")
    notes.append(f"decide {choice!r}")
    task.emit(Scored(len(notes)))
    return Answer(plain.output, notes)


everything = agent(input=Prompt, output=Answer, run=everything_run, name="everything")


async def gathered_run(input: Prompt, task: Task) -> Answer:
    results = await task.gather(
        [task.llm.generate_text(prompt=f"part {i}", src=f"part{i}") for i in range(input.n)]
        + [task.tools.lookup(word=input.text)]
    )
    return Answer(results[-1], [r.output for r in results[:-1]])


gathered = agent(input=Prompt, output=Answer, tools=[lookup], run=gathered_run, name="gathered")


async def tools_run(input: Prompt, task: Task) -> Answer:
    """The model asks for a tool; the agent runs it durably and feeds the result back."""
    messages = [{"role": "user", "content": input.text}]
    first = await task.llm.generate_text(messages=messages, tools=[lookup], src="plan")
    notes = []
    for call in first.tool_calls:
        value = await task.tools.lookup(**call.arguments)
        notes.append(value)
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [{"id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": str(call.arguments)}}]},
            {"role": "tool", "tool_call_id": call.id, "content": value},
        ]  # fmt: skip
    final = await task.llm.generate_text(messages=messages, src="final")
    return Answer(final.output, notes)


with_tools = agent(input=Prompt, output=Answer, tools=[lookup], run=tools_run, name="with_tools")


async def careful_run(input: Prompt, task: Task) -> Answer:
    """Catches the typed errors of exhausted structured output and decisions."""
    notes = []
    try:
        await task.llm.generate_text(prompt="x", output=Summary, src="summary", max_attempts=2)
    except StructuredOutputError as exc:
        notes.append(f"structured {len(exc.attempts)} {exc.src}")
    try:
        await task.llm.decide(prompt="y", events=[Approve, Reject], src="choose", max_attempts=2)
    except DecisionExhausted as exc:
        notes.append(f"decision {len(exc.attempts)} {exc.events}")
    return Answer("careful", notes)


careful = agent(input=Prompt, output=Answer, run=careful_run, name="careful")


async def looping_run(input: Prompt, task: Task) -> Answer:
    """Never stops asking: max_model_calls must end it."""
    n = 0
    try:
        while True:
            await task.llm.generate_text(prompt=f"again {n}", src="again")
            n += 1
    finally:
        task.console.info("finally ran", n=n)


looping = agent(input=Prompt, output=Answer, run=looping_run, name="looping")


def _indirect(task: Task, name: str):  # type: ignore[no-untyped-def]
    return getattr(task.llm, name)(prompt="hidden", src="hidden")


async def indirect_run(input: Prompt, task: Task) -> Answer:
    """Asks through getattr, which the bind-time scan cannot see: the await gets MissingExecutor."""
    try:
        await _indirect(task, "decide" if input.n < 0 else "stream_text")
    except agentrt.AgentrtError as exc:
        return Answer(type(exc).__name__, [str(exc)])
    return Answer("no error", [])


indirect = agent(input=Prompt, output=Answer, run=indirect_run, name="indirect")


async def parent_run(input: Prompt, task: Task) -> Answer:
    child = await task.tools.chain(text=input.text, n=1)
    return Answer(child.text, ["child"])


parent = agent(input=Prompt, output=Answer, tools=[chain], run=parent_run, name="parent")


async def settled_loop_run(input: Prompt, task: Task) -> Answer:
    """Keeps asking in pairs and ignores failures: the budget must still end the run."""
    rounds = 0
    while True:
        await task.gather_settled(
            [task.llm.generate_text(prompt="a", src="s1"), task.llm.generate_text(prompt="b", src="s2")]
        )
        rounds += 1


settled_loop = agent(input=Prompt, output=Answer, run=settled_loop_run, name="settled_loop")


async def ask_then_model_run(input: Prompt, task: Task) -> Answer:
    reply = await task.ui.ask("go on?")
    result = await task.llm.generate_text(prompt=f"reply was {reply}", src="after")
    return Answer(result.output)


ask_then_model = agent(
    input=Prompt, output=Answer, tools=ui_tools, run=ask_then_model_run, name="ask_then_model"
)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    _log_tool("add", a + b)
    return a + b


@tool
def explode(x: str) -> str:
    """Always fails.

    Args:
        x: Anything.
    """
    raise ValueError(f"boom {x}")


def _log_tool(name: str, value: object) -> None:
    path = os.environ.get("AGENTRT_TEST_TOOL_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": name, "value": value, "pid": os.getpid()}) + "\n")


async def looper_run(input: Prompt, task: Task) -> Answer:
    """The model-calls-tools loop of agentrt.llm, awaited like any helper."""
    result = await generate_with_tools(
        task, input.text, tools=[lookup, add, explode], system="Use the tools.", max_steps=input.n, src="loop"
    )
    return Answer(result.output, [str(result.usage.total_tokens if result.usage else None)])


looper = agent(input=Prompt, output=Answer, tools=[lookup, add, explode], run=looper_run, name="looper")


@tool
async def cancels_itself() -> str:
    """Awaits work that gets cancelled, and lets the CancelledError out."""
    import asyncio

    inner = asyncio.ensure_future(asyncio.sleep(10))
    asyncio.get_running_loop().call_soon(inner.cancel)
    await inner
    return "unreachable"


async def tool_cancel_run(input: Prompt, task: Task) -> Answer:
    try:
        await task.tools.cancels_itself()
    except RuntimeError as exc:
        return Answer("caught", [str(exc)])
    return Answer("no error")


tool_cancel = agent(
    input=Prompt, output=Answer, tools=[cancels_itself], run=tool_cancel_run, name="tool_cancel"
)


async def unknown_tool_run(input: Prompt, task: Task) -> Answer:
    try:
        await task.llm.generate_text(prompt="x", tools=["no_such_tool"], src="offer")
    except LookupError as exc:
        return Answer("refused", [str(exc)])
    return Answer("asked")


unknown_tool = agent(input=Prompt, output=Answer, run=unknown_tool_run, name="unknown_tool")


async def streamer_run(input: Prompt, task: Task) -> Answer:
    result = await task.llm.stream_text(prompt=input.text, src="streamed")
    return Answer(result.output)


streamer = agent(input=Prompt, output=Answer, run=streamer_run, name="streamer")


async def finish_reporter_run(input: Prompt, task: Task) -> Answer:
    result = await task.llm.generate_text(prompt=input.text, src="reported")
    return Answer(result.output, [result.output, str(result.finish_reason)])


finish_reporter = agent(input=Prompt, output=Answer, run=finish_reporter_run, name="finish_reporter")


async def refusal_catcher_run(input: Prompt, task: Task) -> Answer:
    from agentrt.llm import ModelRefused

    try:
        await task.llm.generate_text(prompt=input.text, output=Summary, src="refused")
    except ModelRefused as exc:
        return Answer("", [f"refused: {exc.text}"])
    return Answer("", ["answered"])


refusal_catcher = agent(input=Prompt, output=Answer, run=refusal_catcher_run, name="refusal_catcher")


async def decider_run(input: Prompt, task: Task) -> Answer:
    choice = await task.llm.decide(prompt=input.text, events=[Approve, Reject], src="pick")
    return Answer("", [repr(choice)])


decider = agent(input=Prompt, output=Answer, run=decider_run, name="decider")


async def answer_catcher_run(input: Prompt, task: Task) -> Answer:
    """A structured request with no tools offered; a refused, cut or filtered answer is caught."""
    from agentrt.llm import ModelAnswerError

    try:
        got = await task.llm.generate_text(prompt=input.text, output=Summary, src="structured")
    except ModelAnswerError as exc:
        return Answer("", [type(exc).__name__])
    return Answer(got.output.title, [f"attempts={got.attempts}"])


answer_catcher = agent(input=Prompt, output=Answer, run=answer_catcher_run, name="answer_catcher")
