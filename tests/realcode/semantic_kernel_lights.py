"""Ports Semantic Kernel's Python quickstart (learn.microsoft.com "Quickstart guide": a
``LightsPlugin`` class whose methods ``get_state`` and ``change_state`` carry ``@kernel_function``,
``kernel.add_plugin(LightsPlugin(), plugin_name="Lights")``, a ``ChatHistory``,
``FunctionChoiceBehavior.Auto()`` execution settings, and the chat loop calling
``chat_completion.get_chat_message_content(chat_history=history, settings=..., kernel=kernel)``,
which invokes the chosen kernel functions automatically before answering).

Semantic Kernel is not installed: ``Kernel``, ``kernel_function`` (which marks the function and
returns it, as SK's does), ``ChatHistory``, ``ChatMessageContent``, ``FunctionCallContent`` and the
auto-invocation loop are stand-ins in its style.  The chat-completion calls and the plugin's light
switch (a device call) are the suspensions; the kernel with its plugin instance and bound kernel
functions, and the history, cross every await.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port

AGENT = "semantic_kernel_lights"


class AuthorRole(str, Enum):  # noqa: UP042 - as the framework writes it
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class FunctionCallContent(BaseModel):
    id: str
    plugin_name: str
    function_name: str
    arguments: str


class FunctionResultContent(BaseModel):
    id: str
    result: str


class ChatMessageContent(BaseModel):
    role: AuthorRole
    content: str = ""
    items: list[FunctionCallContent | FunctionResultContent] = Field(default_factory=list)


class ChatHistory(BaseModel):
    messages: list[ChatMessageContent] = Field(default_factory=list)

    def add_user_message(self, content: str) -> None:
        self.messages.append(ChatMessageContent(role=AuthorRole.USER, content=content))

    def add_message(self, message: ChatMessageContent) -> None:
        self.messages.append(message)


class FunctionChoiceBehavior(BaseModel):
    type: str = "auto"
    maximum_auto_invoke_attempts: int = 5

    @classmethod
    def Auto(cls) -> FunctionChoiceBehavior:
        return cls()


class OpenAIChatPromptExecutionSettings(BaseModel):
    function_choice_behavior: FunctionChoiceBehavior | None = None


def kernel_function(
    name: str | None = None, description: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        func.__kernel_function__ = True  # type: ignore[attr-defined]
        func.__kernel_function_name__ = name or func.__name__  # type: ignore[attr-defined]
        func.__kernel_function_description__ = description  # type: ignore[attr-defined]
        return func

    return mark


class LightModel(BaseModel):
    id: int
    name: str
    is_on: bool | None = None


class LightsPlugin:
    lights = [  # noqa: RUF012 - the quickstart's class attribute (instances copy it)
        LightModel(id=1, name="Table Lamp", is_on=False),
        LightModel(id=2, name="Porch light", is_on=False),
        LightModel(id=3, name="Chandelier", is_on=True),
    ]

    def __init__(self) -> None:
        self.lights = [light.model_copy() for light in type(self).lights]

    @kernel_function(name="get_lights", description="Gets a list of lights and their current state")
    async def get_state(self) -> list[LightModel]:
        """Gets a list of lights and their current state."""
        return self.lights

    @kernel_function(name="change_state", description="Changes the state of the light")
    async def change_state(self, id: int, is_on: bool) -> LightModel | None:
        """Changes the state of the light."""
        for light in self.lights:
            if light.id == id:
                await tool(AGENT, "switch", id=id, is_on=is_on)  # the device call
                light.is_on = is_on
                return light
        return None


class Kernel:
    def __init__(self) -> None:
        self.plugins: dict[str, dict[str, Callable[..., Any]]] = {}

    def add_plugin(self, plugin: object, plugin_name: str) -> None:
        self.plugins[plugin_name] = {
            fn.__kernel_function_name__: fn
            for _, fn in inspect.getmembers(plugin, inspect.ismethod)
            if getattr(fn, "__kernel_function__", False)
        }

    async def invoke(self, plugin_name: str, function_name: str, arguments: dict[str, Any]) -> Any:
        return await self.plugins[plugin_name][function_name](**arguments)


class OpenAIChatCompletion:
    def __init__(self, ai_model_id: str) -> None:
        self.ai_model_id = ai_model_id

    async def get_chat_message_content(
        self, chat_history: ChatHistory, settings: OpenAIChatPromptExecutionSettings, kernel: Kernel
    ) -> ChatMessageContent:
        functions = sorted(f"{p}-{f}" for p, fs in kernel.plugins.items() for f in fs)
        behavior = settings.function_choice_behavior
        for _ in range(behavior.maximum_auto_invoke_attempts if behavior else 1):
            reply: ChatMessageContent = await model(
                AGENT, model=self.ai_model_id, messages=chat_history.messages, functions=functions
            )
            calls = [i for i in reply.items if isinstance(i, FunctionCallContent)]
            if not calls or behavior is None:
                return reply
            chat_history.add_message(reply)
            for call in calls:
                result = await kernel.invoke(call.plugin_name, call.function_name, json.loads(call.arguments))
                dumped = json.dumps(
                    result.model_dump() if isinstance(result, BaseModel) else [r.model_dump() for r in result]
                )
                chat_history.add_message(
                    ChatMessageContent(
                        role=AuthorRole.TOOL, items=[FunctionResultContent(id=call.id, result=dumped)]
                    )
                )
        raise RuntimeError("maximum auto-invoke attempts reached")


@port(
    ["Please turn on the lamp", "Which lights are on now?"],
    example="Semantic Kernel quickstart: LightsPlugin, @kernel_function, FunctionChoiceBehavior.Auto() loop",
    answer="The Table Lamp and the Chandelier are on.",
)
async def main(user_inputs: list[str]) -> tuple[Any, ...]:
    kernel = Kernel()
    chat_completion = OpenAIChatCompletion(ai_model_id="gpt-4o")
    kernel.add_plugin(LightsPlugin(), plugin_name="Lights")
    execution_settings = OpenAIChatPromptExecutionSettings()
    execution_settings.function_choice_behavior = FunctionChoiceBehavior.Auto()
    history = ChatHistory()
    answers = []
    for user_input in user_inputs:
        history.add_user_message(user_input)
        result = await chat_completion.get_chat_message_content(
            chat_history=history, settings=execution_settings, kernel=kernel
        )
        answers.append(result.content)
        history.add_message(result)
    lights = await kernel.invoke("Lights", "get_lights", {})
    return (answers[-1], answers, history, lights)


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        return {"ok": True}
    messages = request[0]["messages"]
    last = messages[-1]
    n = len(messages)
    if last.role == AuthorRole.USER and "lamp" in last.content:
        call = FunctionCallContent(
            id=f"c{n}", plugin_name="Lights", function_name="get_lights", arguments="{}"
        )
        return ChatMessageContent(role=AuthorRole.ASSISTANT, items=[call])
    if last.role == AuthorRole.TOOL and n == 3:
        call = FunctionCallContent(
            id=f"c{n}",
            plugin_name="Lights",
            function_name="change_state",
            arguments=json.dumps({"id": 1, "is_on": True}),
        )
        return ChatMessageContent(role=AuthorRole.ASSISTANT, items=[call])
    if last.role == AuthorRole.TOOL:
        return ChatMessageContent(role=AuthorRole.ASSISTANT, content="The Table Lamp is now on.")
    return ChatMessageContent(role=AuthorRole.ASSISTANT, content="The Table Lamp and the Chandelier are on.")
