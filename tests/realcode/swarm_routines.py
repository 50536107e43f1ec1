"""Ports the OpenAI cookbook's "Orchestrating Agents: Routines and Handoffs" (the notebook behind
Swarm): ``Agent(BaseModel)`` with ``name``, ``model``, ``instructions`` and ``tools`` (plain Python
functions), ``function_to_schema`` built with ``inspect``, ``run_full_turn(agent, messages)`` that
loops over ``client.chat.completions.create`` until no tool calls, ``execute_tool_call`` looking
functions up in ``tools_map``, and handoffs made by a tool returning an ``Agent``
(``transfer_to_refunds``), with a ``Response(BaseModel)`` of ``agent`` and ``messages``.

As written there, with the OpenAI SDK's ``ChatCompletion``: the completions and the tools' side
effects (``look_up_item``, ``execute_refund``) are the suspensions.  The pydantic ``Agent`` holding
functions, the SDK message objects and the ``Response`` cross every await.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from openai.types.chat import ChatCompletion
from pydantic import BaseModel

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port
from tests.realcode._sdk import chat_completion

AGENT = "swarm_routines"


class Agent(BaseModel):
    name: str = "Agent"
    model: str = "gpt-4o-mini"
    instructions: str = "You are a helpful Agent"
    tools: list[Callable[..., Any]] = []


class Response(BaseModel):
    agent: Agent | None
    messages: list[Any]


def function_to_schema(func: Callable[..., Any]) -> dict[str, Any]:
    type_map = {
        str: "string",
        int: "integer",
        float: "number",
        bool: "boolean",
        list: "array",
        dict: "object",
        type(None): "null",
    }
    signature = inspect.signature(func)
    parameters = {}
    for param in signature.parameters.values():
        parameters[param.name] = {"type": type_map.get(param.annotation, "string")}
    required = [p.name for p in signature.parameters.values() if p.default == inspect._empty]
    return {
        "type": "function",
        "function": {
            "name": func.__name__,
            "description": (func.__doc__ or "").strip(),
            "parameters": {"type": "object", "properties": parameters, "required": required},
        },
    }


async def execute_refund(item_id: str, reason: str = "not provided") -> str:
    """Refund an item. Make sure you have the item_id of the form item_...
    Ask for user confirmation before processing."""
    return await tool(AGENT, "execute_refund", item_id=item_id, reason=reason)


async def look_up_item(search_query: str) -> str:
    """Use to find item ID. Search query can be a description or keywords."""
    return await tool(AGENT, "look_up_item", search_query=search_query)


def transfer_to_refunds() -> Agent:
    """Transfer to the refunds agent."""
    return refund_agent


def transfer_back_to_triage() -> Agent:
    """Call this if the user brings up a topic outside of your purview, including escalating to human."""
    return triage_agent


triage_agent = Agent(
    name="Triage Agent",
    instructions="You are a customer service bot for ACME Inc. Introduce yourself. Always be very brief.",
    tools=[transfer_to_refunds],
)
refund_agent = Agent(
    name="Refund Agent",
    instructions="You are a refund agent. Help the user with refunds.",
    tools=[execute_refund, look_up_item, transfer_back_to_triage],
)


async def execute_tool_call(tool_call: Any, tools: dict[str, Callable[..., Any]], agent_name: str) -> Any:
    name = tool_call.function.name
    args = json.loads(tool_call.function.arguments)
    result = tools[name](**args)
    return await result if inspect.isawaitable(result) else result


async def run_full_turn(agent: Agent, messages: list[Any]) -> Response:
    current_agent = agent
    num_init_messages = len(messages)
    messages = messages.copy()
    while True:
        tool_schemas = [function_to_schema(t) for t in current_agent.tools]
        tools = {t.__name__: t for t in current_agent.tools}
        response: ChatCompletion = await model(
            AGENT,
            model=current_agent.model,
            messages=[{"role": "system", "content": current_agent.instructions}, *messages],
            tools=tool_schemas or None,
        )
        message = response.choices[0].message
        messages.append(message)
        if not message.tool_calls:
            break
        for tool_call in message.tool_calls:
            result = await execute_tool_call(tool_call, tools, current_agent.name)
            if type(result) is Agent:
                current_agent = result
                result = f"Transfered to {current_agent.name}. Adopt persona immediately."
            messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": result})
    return Response(agent=current_agent, messages=messages[num_init_messages:])


@port(
    ["I want a refund for the black boot I bought", "yes, go ahead"],
    example="OpenAI cookbook: Orchestrating Agents, Routines and Handoffs (run_full_turn, Agent handoffs)",
    answer="Done: your refund for item_132612938 has been processed.",
)
async def run(user_turns: list[str]) -> tuple[Any, ...]:
    agent = triage_agent
    messages: list[Any] = []
    for user in user_turns:
        messages.append({"role": "user", "content": user})
        response = await run_full_turn(agent, messages)
        agent = response.agent  # type: ignore[assignment]
        messages.extend(response.messages)
    return (messages[-1].content, agent.name, len(messages), response)


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        name, arguments = request
        if name == "look_up_item":
            return "item_132612938"
        return f"success: refunded {arguments['item_id']}"
    req = request[0]
    system, messages = req["messages"][0]["content"], req["messages"][1:]
    n = len(messages)
    last = messages[-1]
    last_role = last["role"] if isinstance(last, dict) else last.role
    if system.startswith("You are a customer"):
        return chat_completion(n, tool_calls=[("transfer_to_refunds", {})], model="gpt-4o-mini-2024-07-18")
    if last_role == "tool" and last["content"].startswith("Transfered"):
        return chat_completion(
            n, tool_calls=[("look_up_item", {"search_query": "black boot"})], model="gpt-4o-mini-2024-07-18"
        )
    if last_role == "tool" and last["content"].startswith("item_"):
        return chat_completion(
            n, content="I found item_132612938. Shall I refund it?", model="gpt-4o-mini-2024-07-18"
        )
    if last_role == "user":
        return chat_completion(
            n,
            tool_calls=[("execute_refund", {"item_id": "item_132612938", "reason": "customer request"})],
            model="gpt-4o-mini-2024-07-18",
        )
    return chat_completion(
        n, content="Done: your refund for item_132612938 has been processed.", model="gpt-4o-mini-2024-07-18"
    )
