"""Agents for ``test_needs``: each reaches its ``task.llm`` requests a different way."""

from __future__ import annotations

import json

import attrs

from agentrt import Task, agent
from agentrt._sdk.schema import jsonable_or_repr
from tests.llm import needs_helpers
from tests.llm.needs_helpers import Go, Stop, choose


@attrs.frozen
class In:
    text: str


@attrs.frozen
class Out:
    text: str


async def plain_run(input: In, task: Task) -> Out:
    data = {"t": needs_helpers.no_model(input.text), "in": jsonable_or_repr(input)}
    return Out(json.dumps(data, sort_keys=True))


async def direct_run(input: In, task: Task) -> Out:
    a = await task.llm.generate_text(input.text)  # MARK: direct-generate
    b = await task.llm.stream_text(input.text)  # MARK: direct-stream
    c = await task.llm.decide(input.text, events=[Go, Stop])  # MARK: direct-decide
    return Out(f"{a.output}{b.output}{c}")


async def closure_run(input: In, task: Task) -> Out:
    async def inner(text: str) -> str:
        return (await task.llm.generate_text(text)).output  # MARK: closure-generate

    make = lambda: task.llm.stream_text(input.text)  # noqa: E731  # MARK: lambda-stream
    streamed = await make()
    return Out(await inner(input.text) + streamed.output)


async def _ask_model(task: Task, text: str) -> str:
    return (await task.llm.generate_text(text, src="ask")).output  # MARK: same-module-generate


async def same_module_run(input: In, task: Task) -> Out:
    return Out(await _ask_model(task, input.text))


async def from_import_run(input: In, task: Task) -> Out:
    return Out(repr(await choose(task)))


async def module_attr_run(input: In, task: Task) -> Out:
    return Out(await needs_helpers.stream_summary(task, input.text))


async def generate_only_run(input: In, task: Task) -> Out:
    result = await task.llm.generate_text(f"echo {input.text}")  # MARK: gen-only
    return Out(result.output)


async def parent_run(input: In, task: Task) -> Out:
    out = await task.tools.child(text=input.text)
    return Out(out.text)


plain = agent(input=In, output=Out, run=plain_run, name="plain")
direct = agent(input=In, output=Out, run=direct_run, name="direct")
closure = agent(input=In, output=Out, run=closure_run, name="closure")
same_module = agent(input=In, output=Out, run=same_module_run, name="same_module")
from_import = agent(input=In, output=Out, run=from_import_run, name="from_import")
module_attr = agent(input=In, output=Out, run=module_attr_run, name="module_attr")
child = agent(input=In, output=Out, run=generate_only_run, name="child")
parent = agent(input=In, output=Out, run=parent_run, tools=[child], name="parent")
grandparent = agent(input=In, output=Out, run=parent_run, tools={"child": parent}, name="grandparent")
