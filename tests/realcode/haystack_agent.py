"""Ports Haystack's tool-calling ``Agent`` (haystack ``components/agents/agent.py``: ``Agent(
chat_generator=OpenAIChatGenerator(...), tools=[...], exit_conditions=["text"])`` whose ``run``
loops the chat generator and a ``ToolInvoker`` over a list of ``ChatMessage``s, keeping a
``State``), on the docs' "Building a tool-calling agent" example with a ``Tool`` built from a
function and its JSON-schema parameters.

Haystack is not installed: ``ChatMessage`` (a dataclass with ``ChatRole``, ``TextContent``,
``ToolCall`` and ``ToolCallResult`` parts, ``from_user``/``from_assistant``/``from_tool``),
``Tool``, ``ToolInvoker`` and the ``Agent`` loop are stand-ins in its style.  The generator's
model call and the tool invocations are the suspensions; the messages and the state cross every
await.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port

AGENT = "haystack_agent"


class ChatRole(str, Enum):  # noqa: UP042 - as the framework writes it
    USER = "user"
    SYSTEM = "system"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True)
class TextContent:
    text: str


@dataclass(frozen=True)
class ToolCall:
    tool_name: str
    arguments: dict[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class ToolCallResult:
    result: str
    origin: ToolCall
    error: bool


@dataclass
class ChatMessage:
    _role: ChatRole
    _content: list[Any]
    _meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_user(cls, text: str) -> ChatMessage:
        return cls(ChatRole.USER, [TextContent(text)])

    @classmethod
    def from_assistant(
        cls,
        text: str | None = None,
        tool_calls: list[ToolCall] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> ChatMessage:
        return cls(
            ChatRole.ASSISTANT, ([TextContent(text)] if text else []) + list(tool_calls or []), meta or {}
        )

    @classmethod
    def from_tool(cls, tool_result: str, origin: ToolCall, error: bool = False) -> ChatMessage:
        return cls(ChatRole.TOOL, [ToolCallResult(tool_result, origin, error)])

    @property
    def text(self) -> str | None:
        return next((c.text for c in self._content if isinstance(c, TextContent)), None)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [c for c in self._content if isinstance(c, ToolCall)]


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]


async def calculate(expression: str) -> dict[str, Any]:
    """The example's calculator tool (an ``eval``): a tool call."""
    return await tool(AGENT, "calculator", expression=expression)


calculator_tool = Tool(
    name="calculator",
    description="Evaluate basic math expressions.",
    parameters={
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
    function=calculate,
)


class ToolInvoker:
    def __init__(self, tools: list[Tool]) -> None:
        self._tools = {t.name: t for t in tools}

    async def run(self, messages: list[ChatMessage]) -> dict[str, list[ChatMessage]]:
        out = []
        for message in messages:
            for call in message.tool_calls:
                result = await self._tools[call.tool_name].function(**call.arguments)
                out.append(ChatMessage.from_tool(str(result), call))
        return {"tool_messages": out}


class OpenAIChatGenerator:
    def __init__(self, model: str = "gpt-4o-mini") -> None:
        self.model = model

    async def run(self, messages: list[ChatMessage], tools: list[Tool]) -> dict[str, list[ChatMessage]]:
        reply = await model(AGENT, model=self.model, messages=messages, tools=[t.name for t in tools])
        return {"replies": [reply]}


class Agent:
    def __init__(
        self,
        chat_generator: OpenAIChatGenerator,
        tools: list[Tool],
        system_prompt: str,
        exit_conditions: list[str] | None = None,
        max_agent_steps: int = 100,
    ) -> None:
        self.chat_generator = chat_generator
        self.tools = tools
        self.system_prompt = system_prompt
        self.exit_conditions = exit_conditions or ["text"]
        self.max_agent_steps = max_agent_steps
        self._tool_invoker = ToolInvoker(tools)

    async def run(self, messages: list[ChatMessage]) -> dict[str, Any]:
        state: dict[str, Any] = {
            "messages": [ChatMessage(ChatRole.SYSTEM, [TextContent(self.system_prompt)]), *messages]
        }
        counter = 0
        while counter < self.max_agent_steps:
            llm_messages = (await self.chat_generator.run(messages=state["messages"], tools=self.tools))[
                "replies"
            ]
            state["messages"] = state["messages"] + llm_messages
            if not any(m.tool_calls for m in llm_messages) and "text" in self.exit_conditions:
                break
            tool_messages = (await self._tool_invoker.run(llm_messages))["tool_messages"]
            state["messages"] = state["messages"] + tool_messages
            counter += 1
        return {"messages": state["messages"], "last_message": state["messages"][-1]}


@port(
    "What is 7 * (4 + 2)? And then add 10 to it.",
    example="Haystack docs: Agent with a calculator Tool (OpenAIChatGenerator, ToolInvoker, ChatMessage)",
    answer="7 * (4 + 2) is 42, and adding 10 gives 52.",
)
async def main(question: str) -> tuple[Any, ...]:
    agent = Agent(
        chat_generator=OpenAIChatGenerator(model="gpt-4o-mini"),
        tools=[calculator_tool],
        system_prompt="You are a helpful assistant that can use a calculator.",
    )
    result = await agent.run(messages=[ChatMessage.from_user(question)])
    return (result["last_message"].text, result["messages"])


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        expression = request[1]["expression"]
        values = {"7 * (4 + 2)": 42, "42 + 10": 52}
        return {"result": values[expression]}
    messages = request[0]["messages"]
    results = [c for m in messages for c in m._content if isinstance(c, ToolCallResult)]
    if not results:
        return ChatMessage.from_assistant(
            tool_calls=[ToolCall("calculator", {"expression": "7 * (4 + 2)"}, "call_a")]
        )
    if len(results) == 1:
        return ChatMessage.from_assistant(
            tool_calls=[ToolCall("calculator", {"expression": "42 + 10"}, "call_b")]
        )
    return ChatMessage.from_assistant(
        "7 * (4 + 2) is 42, and adding 10 gives 52.", meta={"finish_reason": "stop"}
    )
