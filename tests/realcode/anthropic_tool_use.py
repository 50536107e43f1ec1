"""Ports Anthropic's tool-use loop (Anthropic docs "Tool use with Claude": the client-tools loop
that calls ``client.messages.create`` while ``response.stop_reason == "tool_use"``, with the
``get_weather`` and ``get_time`` tools of the "Sequential tools" example).

As written there: the assistant turn is appended as ``{"role": "assistant", "content":
response.content}`` (the SDK's ``TextBlock``/``ToolUseBlock`` objects), each ``tool_use`` block is
answered by a ``tool_result`` block in one user turn, and the loop ends at ``end_turn``.  The
``Message`` objects and the content blocks in the history cross every await.
"""

from __future__ import annotations

import json
from typing import Any

from anthropic.types import Message, ToolUseBlock

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port
from tests.realcode._sdk import anthropic_message, text, tool_use

AGENT = "anthropic_tool_use"

TOOLS = [
    {
        "name": "get_weather",
        "description": "Get the current weather in a given location",
        "input_schema": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "The city and state"}},
            "required": ["location"],
        },
    },
    {
        "name": "get_time",
        "description": "Get the current time in a given time zone",
        "input_schema": {
            "type": "object",
            "properties": {"timezone": {"type": "string", "description": "The IANA time zone name"}},
            "required": ["timezone"],
        },
    },
]


def process_tool_call(tool_name: str, tool_input: dict[str, Any]) -> Any:
    return tool(AGENT, tool_name, **tool_input)


@port(
    "What's the weather like right now in New York? Also what time is it there?",
    example="Anthropic docs: tool use loop (get_weather, get_time; stop_reason == 'tool_use')",
    answer="It is 68°F and sunny in New York, and the local time is 14:05.",
)
async def chat_with_claude(user_message: str) -> tuple[Any, ...]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": user_message}]
    response: Message = await model(
        AGENT, model="claude-3-5-sonnet-20241022", max_tokens=1024, tools=TOOLS, messages=messages
    )
    turns = [response]
    while response.stop_reason == "tool_use":
        tool_results = []
        for block in response.content:
            if isinstance(block, ToolUseBlock):
                result = await process_tool_call(block.name, block.input)
                tool_results.append({"type": "tool_result", "tool_use_id": block.id, "content": str(result)})
        messages.append({"role": "assistant", "content": response.content})
        messages.append({"role": "user", "content": tool_results})
        response = await model(
            AGENT, model="claude-3-5-sonnet-20241022", max_tokens=1024, tools=TOOLS, messages=messages
        )
        turns.append(response)
    final_response = next((block.text for block in response.content if hasattr(block, "text")), None)
    return (final_response, messages, turns, sum(t.usage.output_tokens for t in turns))


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        name, _arguments = request
        if name == "get_weather":
            return json.dumps({"temperature": 68, "unit": "F", "conditions": "sunny"})
        return "14:05"
    messages = request[0]["messages"]
    n = len(messages)
    if n == 1:
        return anthropic_message(
            n,
            [
                text("I'll check the weather first."),
                tool_use(n, 0, "get_weather", {"location": "New York, NY"}),
            ],
        )
    if n == 3:
        return anthropic_message(n, [tool_use(n, 0, "get_time", {"timezone": "America/New_York"})])
    return anthropic_message(n, [text("It is 68°F and sunny in New York, and the local time is 14:05.")])
