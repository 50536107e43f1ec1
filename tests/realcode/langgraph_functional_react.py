"""Ports LangGraph's "How to create a ReAct agent from scratch (Functional API)" how-to: a
``@task`` ``call_model``, a ``@task`` ``call_tool``, and an ``@entrypoint`` ``agent(messages)`` that
loops while the last AI message has ``tool_calls``, calling the tools concurrently
(``tool_futures = [call_tool(tc) for tc in ...]`` then ``[f.result() for f in tool_futures]``) and
merging with ``add_messages``.

LangGraph is not installed: ``task``/``entrypoint``, the ``TaskFuture`` and the message classes
(pydantic models as in ``langchain_core.messages``) are small stand-ins written in its style; the
how-to's own code -- the tools, ``call_model``, ``call_tool``, the loop -- keeps its structure.
Model calls and tool calls are the suspensions (a future's ``result()`` awaits its call).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port

AGENT = "langgraph_functional_react"


class ToolCall(BaseModel):
    name: str
    args: dict[str, Any]
    id: str


class BaseMessage(BaseModel):
    content: str = ""
    id: str | None = None
    type: str = "base"


class HumanMessage(BaseMessage):
    type: Literal["human"] = "human"


class AIMessage(BaseMessage):
    type: Literal["ai"] = "ai"
    tool_calls: list[ToolCall] = Field(default_factory=list)


class ToolMessage(BaseMessage):
    type: Literal["tool"] = "tool"
    tool_call_id: str


def add_messages(left: list[BaseMessage], right: list[BaseMessage] | BaseMessage) -> list[BaseMessage]:
    """LangGraph's reducer: append (one message or a list), replacing a message with the same id,
    ids given to new ones."""
    if isinstance(right, BaseMessage):
        right = [right]
    merged = list(left)
    index = {m.id: i for i, m in enumerate(merged)}
    for i, message in enumerate(right):
        if message.id is None:
            message = message.model_copy(update={"id": str(uuid.UUID(int=len(merged) * 1000 + i))})
        if message.id in index:
            merged[index[message.id]] = message
        else:
            index[message.id] = len(merged)
            merged.append(message)
    return merged


class TaskFuture:
    """What calling a ``@task`` returns: ``await future.result()`` runs it (once)."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn, self.args, self.done, self.value = fn, args, False, None

    async def result(self) -> Any:
        if not self.done:
            self.value, self.done = await self.fn(*self.args), True
        return self.value


def task(fn: Callable[..., Any]) -> Callable[..., TaskFuture]:
    @functools.wraps(fn)
    def submit(*args: Any) -> TaskFuture:
        return TaskFuture(fn, args)

    return submit


def entrypoint() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return lambda fn: fn


# --- the how-to's code ------------------------------------------------------------------------


def get_weather(location: str) -> Any:
    """Call to get the weather from a specific location."""
    return tool(AGENT, "get_weather", location=location)


TOOLS_BY_NAME = {"get_weather": get_weather}


@task
async def _call_model(messages: list[BaseMessage]) -> AIMessage:
    """Call model with a sequence of messages."""
    return await model(AGENT, messages=messages, tools=list(TOOLS_BY_NAME))


@task
async def _call_tool(tool_call: ToolCall) -> ToolMessage:
    observation = await TOOLS_BY_NAME[tool_call.name](**tool_call.args)
    return ToolMessage(content=observation, tool_call_id=tool_call.id)


@port(
    [HumanMessage(content="what's the weather in sf and in boston?")],
    example="LangGraph how-to: ReAct agent from scratch, Functional API (@task call_model/call_tool)",
    answer="It's sunny in San Francisco, and rainy in Boston.",
)
@entrypoint()
async def agent(messages: list[BaseMessage]) -> tuple[Any, ...]:
    llm_response = await _call_model(messages).result()
    while True:
        if not llm_response.tool_calls:
            break
        # Execute tools
        tool_result_futures = [_call_tool(tool_call) for tool_call in llm_response.tool_calls]
        tool_results = [await fut.result() for fut in tool_result_futures]
        # Append to message list
        messages = add_messages(messages, [llm_response, *tool_results])
        # Call model again
        llm_response = await _call_model(messages).result()
    # Generate final response
    messages = add_messages(messages, llm_response)
    return (llm_response.content, messages)


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        location = request[1]["location"].lower()
        return "It's sunny!" if location in ("sf", "san francisco") else "It's rainy!"
    messages = request[0]["messages"]
    if len(messages) == 1:
        return AIMessage(
            tool_calls=[
                ToolCall(name="get_weather", args={"location": "San Francisco"}, id="call_sf"),
                ToolCall(name="get_weather", args={"location": "Boston"}, id="call_bos"),
            ]
        )
    return AIMessage(content="It's sunny in San Francisco, and rainy in Boston.")
