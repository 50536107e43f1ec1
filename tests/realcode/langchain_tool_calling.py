"""Ports LangChain's "How to use chat models to call tools" guide (langchain docs: ``@tool``
functions ``add`` and ``multiply``, ``llm_with_tools = llm.bind_tools(tools)``, ``ai_msg =
llm_with_tools.invoke(messages)``, ``messages.append(ai_msg)``, then for each ``ai_msg.tool_calls``
``selected_tool = {"add": add, "multiply": multiply}[tool_call["name"].lower()]`` and
``messages.append(selected_tool.invoke(tool_call))``, and a final ``invoke``).

LangChain is not installed: ``@tool`` builds a ``StructuredTool`` (a pydantic model holding the
function and an ``args_schema`` model generated from its signature, as ``langchain_core`` does),
and the messages are pydantic models in ``langchain_core.messages``'s style.  The model calls and
the tool invocations are the suspensions; the tools, the bound model and the messages cross every
await.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from tests.realcode._driver import model, script
from tests.realcode._driver import tool as tool_call_of
from tests.realcode._registry import port

AGENT = "langchain_tool_calling"


class BaseMessage(BaseModel):
    content: str = ""
    type: str


class HumanMessage(BaseMessage):
    type: str = "human"


class AIMessage(BaseMessage):
    type: str = "ai"
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    usage_metadata: dict[str, int] | None = None


class ToolMessage(BaseMessage):
    type: str = "tool"
    tool_call_id: str
    name: str


class StructuredTool(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    name: str
    description: str
    args_schema: type[BaseModel]
    func: Callable[..., Any]

    async def ainvoke(self, tool_call: dict[str, Any]) -> ToolMessage:
        args = self.args_schema.model_validate(tool_call["args"])
        content = await self.func(**args.model_dump())
        return ToolMessage(content=str(content), tool_call_id=tool_call["id"], name=self.name)


def tool(func: Callable[..., Any]) -> StructuredTool:
    fields = {name: (p.annotation, ...) for name, p in inspect.signature(func).parameters.items()}
    schema = create_model(func.__name__, **fields)  # type: ignore[call-overload]
    return StructuredTool(
        name=func.__name__, description=(func.__doc__ or "").strip(), args_schema=schema, func=func
    )


@tool
async def add(a: int, b: int) -> int:
    """Adds a and b."""
    return await tool_call_of(AGENT, "add", a=a, b=b)


@tool
async def multiply(a: int, b: int) -> int:
    """Multiplies a and b."""
    return await tool_call_of(AGENT, "multiply", a=a, b=b)


class ChatOpenAI(BaseModel):
    model: str
    tools: list[str] = Field(default_factory=list)

    def bind_tools(self, tools: list[StructuredTool]) -> ChatOpenAI:
        return self.model_copy(update={"tools": [t.name for t in tools]})

    async def ainvoke(self, messages: list[BaseMessage]) -> AIMessage:
        return await model(AGENT, model=self.model, messages=messages, tools=self.tools)


@port(
    "What is 3 * 12? Also, what is 11 + 49?",
    example="LangChain how-to: tool calling (@tool add/multiply, bind_tools, a ToolMessage per tool call)",
    answer="3 * 12 is 36, and 11 + 49 is 60.",
)
async def main(query: str) -> tuple[Any, ...]:
    llm = ChatOpenAI(model="gpt-4o-mini")
    tools = [add, multiply]
    llm_with_tools = llm.bind_tools(tools)
    messages: list[BaseMessage] = [HumanMessage(content=query)]
    ai_msg = await llm_with_tools.ainvoke(messages)
    messages.append(ai_msg)
    for tool_call in ai_msg.tool_calls:
        selected_tool = {"add": add, "multiply": multiply}[tool_call["name"].lower()]
        tool_msg = await selected_tool.ainvoke(tool_call)
        messages.append(tool_msg)
    final = await llm_with_tools.ainvoke(messages)
    return (final.content, messages, final)


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        name, arguments = request
        return arguments["a"] * arguments["b"] if name == "multiply" else arguments["a"] + arguments["b"]
    messages = request[0]["messages"]
    if len(messages) == 1:
        return AIMessage(
            tool_calls=[
                {"name": "multiply", "args": {"a": 3, "b": 12}, "id": "call_1", "type": "tool_call"},
                {"name": "add", "args": {"a": 11, "b": 49}, "id": "call_2", "type": "tool_call"},
            ],
            usage_metadata={"input_tokens": 95, "output_tokens": 50, "total_tokens": 145},
        )
    return AIMessage(content=f"3 * 12 is {messages[2].content}, and 11 + 49 is {messages[3].content}.")
