"""Ports the OpenAI Agents SDK's customer-service example (openai-agents-python
``examples/customer_service/main.py``): an ``AirlineAgentContext`` pydantic model, a triage agent
that hands off to an FAQ agent and a seat-booking agent (each handing back), the
``faq_lookup_tool`` and ``update_seat`` tools that read and write the context, and the input loop
that runs ``Runner.run(current_agent, input_items, context=context)`` per user turn and continues
with ``result.to_input_list()`` and ``result.last_agent``.

The SDK is not installed: ``Agent``, ``handoff``, ``function_tool`` and ``Runner`` are small
stand-ins in its style (an agent is a dataclass; the runner asks the model, runs tools, follows
handoffs).  Model calls and tool calls are the suspensions; the agents (with their handoff
cycles), the context and the input items cross every await.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port

AGENT = "openai_agents_airline"


class AirlineAgentContext(BaseModel):
    passenger_name: str | None = None
    confirmation_number: str | None = None
    seat_number: str | None = None
    flight_number: str | None = None


@dataclass
class RunContextWrapper:
    context: AirlineAgentContext


@dataclass
class FunctionTool:
    name: str
    on_invoke: Callable[..., Any]


def function_tool(fn: Callable[..., Any]) -> FunctionTool:
    return FunctionTool(fn.__name__, fn)


@dataclass
class Handoff:
    agent_name: str
    on_handoff: Callable[..., Any] | None = None

    @property
    def tool_name(self) -> str:
        return f"transfer_to_{self.agent_name.lower().replace(' ', '_')}"


@dataclass
class Agent:
    name: str
    instructions: str
    handoff_description: str = ""
    tools: list[FunctionTool] = field(default_factory=list)
    handoffs: list[Any] = field(default_factory=list)


def handoff(agent: Agent, on_handoff: Callable[..., Any] | None = None) -> Handoff:
    return Handoff(agent.name, on_handoff)


# --- the example's tools and hooks ------------------------------------------------------------


@function_tool
async def faq_lookup_tool(context: RunContextWrapper, question: str) -> str:
    return await tool(AGENT, "faq_lookup_tool", question=question)


@function_tool
async def update_seat(context: RunContextWrapper, confirmation_number: str, new_seat: str) -> str:
    """Update the seat for a given confirmation number."""
    context.context.confirmation_number = confirmation_number
    context.context.seat_number = new_seat
    assert context.context.flight_number is not None, "Flight number is required"
    return await tool(AGENT, "update_seat", confirmation_number=confirmation_number, new_seat=new_seat)


async def on_seat_booking_handoff(context: RunContextWrapper) -> None:
    flight_number = f"FLT-{random.Random(7).randint(100, 999)}"  # the example draws one at random
    context.context.flight_number = flight_number


faq_agent = Agent(
    name="FAQ Agent",
    handoff_description="A helpful agent that can answer questions about the airline.",
    instructions="Use the faq lookup tool to answer the question. Do not rely on your own knowledge.",
    tools=[faq_lookup_tool],
)
seat_booking_agent = Agent(
    name="Seat Booking Agent",
    handoff_description="A helpful agent that can update a seat on a flight.",
    instructions="Ask for the confirmation number and the desired seat, then use the update seat tool.",
    tools=[update_seat],
)
triage_agent = Agent(
    name="Triage Agent",
    handoff_description="A triage agent that can delegate a customer's request to the appropriate agent.",
    instructions="You are a helpful triaging agent.",
    handoffs=[faq_agent, handoff(agent=seat_booking_agent, on_handoff=on_seat_booking_handoff)],
)
faq_agent.handoffs.append(triage_agent)
seat_booking_agent.handoffs.append(triage_agent)


@dataclass
class RunResult:
    final_output: str
    last_agent: Agent
    items: list[dict[str, Any]]

    def to_input_list(self) -> list[dict[str, Any]]:
        return list(self.items)


class Runner:
    @staticmethod
    async def run(agent: Agent, input: list[dict[str, Any]], context: AirlineAgentContext) -> RunResult:
        wrapper = RunContextWrapper(context)
        items = list(input)
        while True:
            handoffs = {(h if isinstance(h, Handoff) else handoff(h)).tool_name: h for h in agent.handoffs}
            output = await model(
                AGENT,
                agent=agent.name,
                instructions=agent.instructions,
                input=items,
                tools=[t.name for t in agent.tools] + sorted(handoffs),
            )
            items.append(output)
            if output["type"] == "message":
                return RunResult(output["content"], agent, items)
            if output["name"] in handoffs:
                target = handoffs[output["name"]]
                if isinstance(target, Handoff):
                    if target.on_handoff is not None:
                        await target.on_handoff(wrapper)
                    target = next(
                        a
                        for a in (faq_agent, seat_booking_agent, triage_agent)
                        if a.name == target.agent_name
                    )
                agent = target
                items.append(
                    {"type": "function_call_output", "call_id": output["call_id"], "output": agent.name}
                )
                continue
            fn = next(t for t in agent.tools if t.name == output["name"])
            result = await fn.on_invoke(wrapper, **output["arguments"])
            items.append({"type": "function_call_output", "call_id": output["call_id"], "output": result})


@port(
    ["Can I bring my dog on the plane?", "I'd like to change my seat", "ABC123, seat 23A please"],
    example="OpenAI Agents SDK examples: customer_service (triage, FAQ and seat-booking agents, handoffs)",
    answer="Your seat has been updated to 23A on FLT-265.",
)
async def main(user_turns: list[str]) -> tuple[Any, ...]:
    current_agent: Agent = triage_agent
    input_items: list[dict[str, Any]] = []
    context = AirlineAgentContext(passenger_name="Ada")
    transcript = []
    for user_input in user_turns:
        input_items.append({"content": user_input, "role": "user"})
        result = await Runner.run(current_agent, input_items, context=context)
        transcript.append(f"{result.last_agent.name}: {result.final_output}")
        input_items = result.to_input_list()
        current_agent = result.last_agent
    return (result.final_output, transcript, context, current_agent.name, len(input_items))


def _said(items: list[dict[str, Any]]) -> str:
    return next(i["content"] for i in reversed(items) if i.get("role") == "user")


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        name, arguments = request
        if name == "faq_lookup_tool":
            return (
                "You are allowed to bring one bag on the plane; pets in a carrier under the seat are allowed."
            )
        seat, confirmation = arguments["new_seat"], arguments["confirmation_number"]
        return f"Updated seat to {seat} for confirmation number {confirmation}"
    req = request[0]
    agent, items = req["agent"], req["input"]
    last, said = items[-1], _said(items)
    n = len(items)
    if agent == "Triage Agent":
        target = "transfer_to_faq_agent" if "dog" in said else "transfer_to_seat_booking_agent"
        return {"type": "function_call", "name": target, "arguments": {}, "call_id": f"c{n}"}
    if last.get("type") == "function_call_output" and last["output"] == agent:  # just handed off
        if agent == "FAQ Agent":
            arguments = {"question": said}
            return {
                "type": "function_call",
                "name": "faq_lookup_tool",
                "arguments": arguments,
                "call_id": f"c{n}",
            }
        return {
            "type": "message",
            "content": "Sure - what is your confirmation number and the seat you want?",
        }
    if last.get("type") == "function_call_output":
        if agent == "FAQ Agent":
            return {"type": "message", "content": "Yes, pets in a carrier under the seat are allowed."}
        seat = last["output"].split("seat to ")[1].split(" ")[0]
        return {"type": "message", "content": f"Your seat has been updated to {seat} on FLT-265."}
    if agent == "FAQ Agent":  # a new request: back to triage
        return {
            "type": "function_call",
            "name": "transfer_to_triage_agent",
            "arguments": {},
            "call_id": f"c{n}",
        }
    confirmation, _, seat = said.partition(", seat ")
    return {
        "type": "function_call",
        "name": "update_seat",
        "arguments": {"confirmation_number": confirmation, "new_seat": seat.split(" ")[0]},
        "call_id": f"c{n}",
    }
