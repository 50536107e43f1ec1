"""Ports the OpenAI function-calling guide's ``run_conversation`` (openai-python docs and cookbook
"How to call functions with chat models": ``get_current_weather`` with parallel tool calls).

As written there: one ``chat.completions.create`` with ``tools``; the assistant's
``ChatCompletionMessage`` is appended to ``messages`` as is; each ``tool_calls`` entry is looked up
in ``available_functions``, called with ``json.loads(arguments)`` and answered with a ``tool``
message; a second completion gives the final answer.  Only the two completions and the function
calls are suspensions; the ``ChatCompletion`` objects, the message list holding SDK messages and
the function table cross every await.
"""

from __future__ import annotations

import json
from typing import Any

from openai.types.chat import ChatCompletion

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port
from tests.realcode._sdk import chat_completion

AGENT = "openai_function_calling"


def get_current_weather(location: str, unit: str = "fahrenheit") -> Any:
    """The example's function; calling it is a tool call (a suspension) here."""
    return tool(AGENT, "get_current_weather", location=location, unit=unit)


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "string",
                        "description": "The city and state, e.g. San Francisco, CA",
                    },
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["location"],
            },
        },
    }
]


@port(
    "What's the weather like in San Francisco, Tokyo, and Paris?",
    example="OpenAI function calling guide: run_conversation (parallel get_current_weather)",
    answer="San Francisco is 72°F, Tokyo is 10°C and Paris is 22°C.",
)
async def run_conversation(question: str) -> tuple[Any, ...]:
    messages: list[Any] = [{"role": "user", "content": question}]
    response: ChatCompletion = await model(
        AGENT, model="gpt-4o", messages=messages, tools=TOOLS, tool_choice="auto"
    )
    response_message = response.choices[0].message
    tool_calls = response_message.tool_calls
    if tool_calls:
        available_functions = {"get_current_weather": get_current_weather}
        messages.append(response_message)  # extend conversation with assistant's reply
        for tool_call in tool_calls:
            function_name = tool_call.function.name
            function_to_call = available_functions[function_name]
            function_args = json.loads(tool_call.function.arguments)
            function_response = await function_to_call(
                location=function_args.get("location"), unit=function_args.get("unit")
            )
            messages.append(
                {
                    "tool_call_id": tool_call.id,
                    "role": "tool",
                    "name": function_name,
                    "content": function_response,
                }
            )
        second_response: ChatCompletion = await model(AGENT, model="gpt-4o", messages=messages)
        return (second_response.choices[0].message.content, messages, response, second_response.usage)
    return (response_message.content, messages, response, None)


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        _name, arguments = request
        location = arguments["location"].lower()
        if "tokyo" in location:
            return json.dumps({"location": "Tokyo", "temperature": "10", "unit": "celsius"})
        if "san francisco" in location:
            return json.dumps({"location": "San Francisco", "temperature": "72", "unit": "fahrenheit"})
        if "paris" in location:
            return json.dumps({"location": "Paris", "temperature": "22", "unit": "celsius"})
        return json.dumps({"location": location, "temperature": "unknown"})
    messages = request[0]["messages"]
    n = len(messages)
    if messages[-1]["role"] == "tool" if isinstance(messages[-1], dict) else False:
        return chat_completion(n, content="San Francisco is 72°F, Tokyo is 10°C and Paris is 22°C.")
    cities = ["San Francisco, CA", "Tokyo, Japan", "Paris, France"]
    units = ["fahrenheit", "celsius", "celsius"]
    return chat_completion(
        n,
        tool_calls=[
            ("get_current_weather", {"location": c, "unit": u}) for c, u in zip(cities, units, strict=True)
        ],
    )
