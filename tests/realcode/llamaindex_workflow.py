"""Ports LlamaIndex's "Workflow for a Function Calling Agent" (LlamaIndex docs, workflows
examples: ``FuncationCallingAgent(Workflow)`` with ``InputEvent``, ``ToolCallEvent``,
``FunctionOutputEvent`` and ``StopEvent``; steps ``prepare_chat_history``, ``handle_llm_input`` and
``handle_tool_calls`` decorated with ``@step`` and dispatched by the event type they take; the
chat history kept in a ``ChatMemoryBuffer`` and the ``sources`` list on the workflow).

llama-index is not installed: ``Workflow``, ``@step``, the events (pydantic models) and
``ChatMessage`` are small stand-ins in its style; the dispatcher routes each returned event to the
step annotated with its type.  The LLM call (``achat_with_tools``) and the tool calls are the
suspensions; the workflow, its memory and the pending events cross every await.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from enum import Enum
from typing import Any, get_type_hints

from pydantic import BaseModel, Field

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port

AGENT = "llamaindex_workflow"


class MessageRole(str, Enum):  # noqa: UP042 - as the framework writes it
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class ChatMessage(BaseModel):
    role: MessageRole
    content: str | None = None
    additional_kwargs: dict[str, Any] = Field(default_factory=dict)


class ToolSelection(BaseModel):
    tool_id: str
    tool_name: str
    tool_kwargs: dict[str, Any]


class ToolOutput(BaseModel):
    content: str
    tool_name: str
    raw_input: dict[str, Any]


class Event(BaseModel):
    pass


class StartEvent(Event):
    input: str


class InputEvent(Event):
    input: list[ChatMessage]


class ToolCallEvent(Event):
    tool_calls: list[ToolSelection]


class FunctionOutputEvent(Event):
    output: ToolOutput


class StopEvent(Event):
    result: dict[str, Any]


class ChatMemoryBuffer(BaseModel):
    chat_history: list[ChatMessage] = Field(default_factory=list)

    def put(self, message: ChatMessage) -> None:
        self.chat_history.append(message)

    def get(self) -> list[ChatMessage]:
        return list(self.chat_history)


def step(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn._is_step = True  # type: ignore[attr-defined]
    return fn


class Workflow:
    """Runs the step that takes each event's type until a ``StopEvent``."""

    def __init__(self, timeout: float | None = None) -> None:
        self.timeout = timeout

    def _steps(self) -> dict[type, str]:
        routes = {}
        for name, member in inspect.getmembers(type(self), inspect.isfunction):
            if getattr(member, "_is_step", False):
                hints = get_type_hints(member)
                routes[hints["ev"]] = name
        return routes

    async def run(self, **kwargs: Any) -> Any:
        routes = self._steps()
        queue: list[Event] = [StartEvent(**kwargs)]
        while queue:
            ev = queue.pop(0)
            if isinstance(ev, StopEvent):
                return ev.result
            produced = await getattr(self, routes[type(ev)])(ev)
            queue.extend(produced if isinstance(produced, list) else [produced])
        raise RuntimeError("workflow ended without a StopEvent")


TOOLS = {"add": "Add two integers", "multiply": "Multiply two integers"}


class FunctionCallingAgent(Workflow):
    def __init__(self, *args: Any, tools: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tools = tools
        self.memory = ChatMemoryBuffer()
        self.sources: list[ToolOutput] = []

    @step
    async def prepare_chat_history(self, ev: StartEvent) -> InputEvent:
        self.sources = []  # clear sources
        user_msg = ChatMessage(role=MessageRole.USER, content=ev.input)
        self.memory.put(user_msg)
        return InputEvent(input=self.memory.get())

    @step
    async def handle_llm_input(self, ev: InputEvent) -> ToolCallEvent | StopEvent:
        response: ChatMessage = await model(AGENT, messages=ev.input, tools=sorted(self.tools))
        self.memory.put(response)
        tool_calls = [ToolSelection(**c) for c in response.additional_kwargs.get("tool_calls", [])]
        if not tool_calls:
            return StopEvent(result={"response": response.content, "sources": [*self.sources]})
        return ToolCallEvent(tool_calls=tool_calls)

    @step
    async def handle_tool_calls(self, ev: ToolCallEvent) -> InputEvent:
        tool_msgs = []
        for tool_call in ev.tool_calls:
            if tool_call.tool_name not in self.tools:
                tool_msgs.append(
                    ChatMessage(role=MessageRole.TOOL, content=f"Tool {tool_call.tool_name} does not exist")
                )
                continue
            content = await tool(AGENT, tool_call.tool_name, **tool_call.tool_kwargs)
            tool_output = ToolOutput(
                content=content, tool_name=tool_call.tool_name, raw_input=tool_call.tool_kwargs
            )
            self.sources.append(tool_output)
            tool_msgs.append(
                ChatMessage(
                    role=MessageRole.TOOL,
                    content=tool_output.content,
                    additional_kwargs={"tool_call_id": tool_call.tool_id},
                )
            )
        for msg in tool_msgs:
            self.memory.put(msg)
        return InputEvent(input=self.memory.get())


@port(
    "What is (2123 + 2321) * 312?",
    example="LlamaIndex docs: Workflow for a Function Calling Agent (events, @step dispatch, memory)",
    answer="(2123 + 2321) * 312 = 1386528",
)
async def main(question: str) -> tuple[Any, ...]:
    agent = FunctionCallingAgent(tools=TOOLS, timeout=120)
    ret = await agent.run(input=question)
    return (ret["response"], ret["sources"], agent.memory)


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        name, kw = request
        return str(kw["a"] + kw["b"] if name == "add" else kw["a"] * kw["b"])
    messages = request[0]["messages"]
    if len(messages) == 1:
        call = {"tool_id": "t1", "tool_name": "add", "tool_kwargs": {"a": 2123, "b": 2321}}
        return ChatMessage(role=MessageRole.ASSISTANT, additional_kwargs={"tool_calls": [call]})
    if len(messages) == 3:
        total = int(messages[-1].content)
        call = {"tool_id": "t2", "tool_name": "multiply", "tool_kwargs": {"a": total, "b": 312}}
        return ChatMessage(role=MessageRole.ASSISTANT, additional_kwargs={"tool_calls": [call]})
    return ChatMessage(role=MessageRole.ASSISTANT, content=f"(2123 + 2321) * 312 = {messages[-1].content}")
