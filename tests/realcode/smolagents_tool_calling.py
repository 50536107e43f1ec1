"""Ports smolagents' ``ToolCallingAgent`` run loop (smolagents ``agents.py``: ``MultiStepAgent.run``
-> ``_run_stream`` with ``max_steps``, an ``AgentMemory`` of ``TaskStep``/``ActionStep`` dataclasses,
``step()`` asking the model for tool calls, ``execute_tool_call``, and the ``final_answer`` tool
ending the run), on the README's "how many seconds would it take a leopard at full speed to run
through Pont des Arts?" task with a ``web_search`` tool.

smolagents is not installed: its ``Tool`` subclasses, ``ChatMessage``, memory steps and the loop
keep their shape as plain dataclasses.  Model calls and ``Tool.forward`` are the suspensions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port

AGENT = "smolagents_tool_calling"


class MessageRole(str, Enum):  # noqa: UP042 - as the framework writes it
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL_RESPONSE = "tool-response"


@dataclass
class ChatMessageToolCallFunction:
    name: str
    arguments: Any


@dataclass
class ChatMessageToolCall:
    function: ChatMessageToolCallFunction
    id: str
    type: str = "function"


@dataclass
class ChatMessage:
    role: MessageRole
    content: str | None = None
    tool_calls: list[ChatMessageToolCall] | None = None


@dataclass
class TaskStep:
    task: str


@dataclass
class ActionStep:
    step_number: int
    model_output_message: ChatMessage | None = None
    tool_calls: list[ChatMessageToolCall] = field(default_factory=list)
    observations: str | None = None
    action_output: Any = None
    is_final_answer: bool = False


@dataclass
class AgentMemory:
    system_prompt: str
    steps: list[Any] = field(default_factory=list)


class Tool:
    name: str = ""
    description: str = ""
    inputs: dict[str, dict[str, str]] = {}  # noqa: RUF012 - smolagents' class attributes
    output_type: str = "string"

    async def __call__(self, **kwargs: Any) -> Any:
        return await self.forward(**kwargs)

    async def forward(self, **kwargs: Any) -> Any:
        raise NotImplementedError


class WebSearchTool(Tool):
    name = "web_search"
    description = "Performs a web search for a query and returns the top results."
    inputs = {"query": {"type": "string", "description": "The search query to perform."}}  # noqa: RUF012

    async def forward(self, query: str) -> str:  # type: ignore[override]
        return await tool(AGENT, "web_search", query=query)


class FinalAnswerTool(Tool):
    name = "final_answer"
    description = "Provides a final answer to the given problem."
    inputs = {"answer": {"type": "any", "description": "The final answer to the problem"}}  # noqa: RUF012
    output_type = "any"

    async def forward(self, answer: Any) -> Any:  # type: ignore[override]
        return answer  # no I/O: not a suspension


class ToolCallingAgent:
    def __init__(self, tools: list[Tool], model_id: str, max_steps: int = 20) -> None:
        self.tools = {t.name: t for t in [*tools, FinalAnswerTool()]}
        self.model_id = model_id
        self.max_steps = max_steps
        self.memory = AgentMemory("You are an expert assistant who can solve any task using tool calls.")
        self.step_number = 0

    def write_memory_to_messages(self) -> list[ChatMessage]:
        messages = [ChatMessage(MessageRole.SYSTEM, self.memory.system_prompt)]
        for step in self.memory.steps:
            if isinstance(step, TaskStep):
                messages.append(ChatMessage(MessageRole.USER, f"New task:\n{step.task}"))
            elif isinstance(step, ActionStep):
                messages.append(step.model_output_message)  # type: ignore[arg-type]
                messages.append(ChatMessage(MessageRole.TOOL_RESPONSE, f"Observation:\n{step.observations}"))
        return messages

    async def execute_tool_call(self, tool_name: str, arguments: dict[str, Any]) -> Any:
        if tool_name not in self.tools:
            raise KeyError(f"Unknown tool {tool_name}, should be one of: {', '.join(self.tools)}.")
        return await self.tools[tool_name](**arguments)

    async def step(self, memory_step: ActionStep) -> Any:
        chat_message: ChatMessage = await model(
            AGENT, model_id=self.model_id, messages=self.write_memory_to_messages(), tools=sorted(self.tools)
        )
        memory_step.model_output_message = chat_message
        memory_step.tool_calls = list(chat_message.tool_calls or [])
        observations = []
        for call in memory_step.tool_calls:
            result = await self.execute_tool_call(call.function.name, call.function.arguments)
            if call.function.name == "final_answer":
                memory_step.is_final_answer = True
                memory_step.action_output = result
            observations.append(str(result))
        memory_step.observations = "\n".join(observations)
        return memory_step.action_output

    async def run(self, task: str) -> Any:
        self.memory.steps.append(TaskStep(task))
        final_answer = None
        while final_answer is None and self.step_number < self.max_steps:
            self.step_number += 1
            action_step = ActionStep(self.step_number)
            output = await self.step(action_step)
            self.memory.steps.append(action_step)
            if action_step.is_final_answer:
                final_answer = output
        return final_answer


@port(
    "How many seconds would it take for a leopard at full speed to run through Pont des Arts?",
    example="smolagents README: ToolCallingAgent with web search (MultiStepAgent.run, ActionStep memory)",
    answer="About 2.7 seconds (155 m at 58 km/h).",
)
async def run_leopard(task: str) -> tuple[Any, ...]:
    agent = ToolCallingAgent(tools=[WebSearchTool()], model_id="Qwen/Qwen2.5-Coder-32B-Instruct", max_steps=6)
    answer = await agent.run(task)
    return (answer, agent.step_number, agent.memory.steps)


def _call(n: int, name: str, arguments: dict[str, Any]) -> ChatMessage:
    return ChatMessage(
        MessageRole.ASSISTANT,
        tool_calls=[ChatMessageToolCall(ChatMessageToolCallFunction(name, arguments), f"call_{n}")],
    )


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        query = request[1]["query"]
        if "leopard" in query:
            return "Leopards can run at up to 58 km/h (36 mph)."
        return "The Pont des Arts is 155 metres long."
    steps = (len(request[0]["messages"]) - 2) // 2
    if steps == 0:
        return _call(0, "web_search", {"query": "leopard top speed"})
    if steps == 1:
        return _call(1, "web_search", {"query": "Pont des Arts length"})
    return _call(2, "final_answer", {"answer": "About 2.7 seconds (155 m at 58 km/h)."})
