"""The agents the docs' snippets assume a user has ("my_agent", an agent's ``run``), for
tests/test_docs.py: importable, so their runs checkpoint and restore like a user's."""

from __future__ import annotations

from typing import Any

import attrs

from agentrt import Task, agent, tool


@attrs.frozen
class Question:
    question: str


@attrs.frozen
class Answer:
    answer: str


@tool(inline=True)
def lookup(question: str) -> str:
    """Look the question up."""
    return f"looked up {question!r}"


async def answer(input: Question, task: Task) -> Answer:
    found = await task.tools.lookup(question=input.question)
    return Answer(found)


#: deploy.md's "my_agent": one tool call, then the answer.
my_agent = agent(input=Question, output=Answer, tools=[lookup], run=answer, name="my_agent")


async def ask_model(input: Question, task: Task) -> Answer:
    text = await task.llm.generate_text(prompt=input.question, model="quick")
    return Answer(text.output)


#: llm.md's "Answering" block is tried with it: one model call.
model_agent = agent(input=Question, output=Answer, run=ask_model, name="model_agent")


async def run(input: Question, task: Task) -> Answer:
    """upgrade.md's ``run``, after the edit: what it called ``greeting`` it calls ``salutation``."""
    salutation = f"Hello, {input.question}"
    reply = await task.ui.ask(salutation)
    return Answer(f"{salutation}: {reply}")


@attrs.frozen
class Input:
    topic: str = "the change"


@attrs.frozen
class Output:
    done: bool = True


#: The page's own functions an agent below calls (set by the test while the page is loaded).
PAGE: dict[str, Any] = {}


async def page_run(input: Input, task: Task) -> Output:
    """An agent whose ``run`` is llm.md's: awaited inside a real run, as the page's agent would be."""
    await PAGE["run"](input, task)
    return Output()


llm_page_agent = agent(input=Input, output=Output, run=page_run, name="llm_page_agent")
