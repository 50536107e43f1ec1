"""OpenAI Agents SDK agents from the SDK's own documentation and examples, each made durable.

Every agent is written as in the docs (function tools, handoffs, structured output, guardrails,
agents as tools, context, approvals); the model is a fake model provider (``FakeProvider``): each
model name answers with a pure function of the conversation so far, so a run restored anywhere is
answered as it was.  Every model call and tool call is logged (``tests/adapters/_calls.py``).

Sources (openai.github.io/openai-agents-python and the repo's examples/): hello (Quickstart /
hello world), weather (Tools: function tools), triage (Handoffs: examples/agent_patterns/routing),
calendar (Agents: output types), homework (Guardrails: input guardrail), math_out (Guardrails:
output guardrail), translator (examples/agent_patterns/agents_as_tools), user_age (Context
management), escalation (Handoffs: on_handoff and input_type), approval (Human in the loop:
needs_approval), turns (Running agents: max_turns), tool_error (Tools: error handling).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import attrs
from agents import (
    Agent,
    GuardrailFunctionOutput,
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    ModelProvider,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunContextWrapper,
    Runner,
    function_tool,
    handoff,
    input_guardrail,
    output_guardrail,
)
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from pydantic import BaseModel

from agentrt.adapters.openai_agents import durable
from tests.adapters._calls import record, tool_call

Script = Callable[[list[Any]], list[Any]]


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def outputs(items: list[Any]) -> list[Any]:
    """The tool outputs in the conversation, in order."""
    return [_field(i, "output") for i in items if _field(i, "type") == "function_call_output"]


def turns(*steps: Callable[[list[Any]], list[Any]]) -> Script:
    """A script whose n-th step (n = tool outputs so far, the last step after that) answers."""
    return lambda items: steps[min(len(outputs(items)), len(steps) - 1)](items)


def say(text: str) -> list[Any]:
    content = [ResponseOutputText(text=text, type="output_text", annotations=[])]
    return [
        ResponseOutputMessage(id="msg", content=content, role="assistant", status="completed", type="message")
    ]


def call(name: str, args: dict[str, Any], call_id: str) -> Any:
    return ResponseFunctionToolCall(
        id=f"fc_{call_id}",
        call_id=call_id,
        name=name,
        arguments=json.dumps(args),
        type="function_call",
        status="completed",
    )


class FakeModel(Model):
    """A model answering with ``script(items)``: a pure function of the conversation so far."""

    def __init__(self, name: str, script: Script) -> None:
        self.name = name
        self.script = script

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        items = (
            [{"type": "message", "role": "user", "content": input}] if isinstance(input, str) else list(input)
        )
        record(f"model:{self.name}#{len(outputs(items))}")
        return ModelResponse(output=self.script(items), usage=Usage(requests=1), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


SCRIPTS: dict[str, Script] = {}


class FakeProvider(ModelProvider):
    """The fake model provider: a model name is a script of ``SCRIPTS``."""

    def get_model(self, model_name: str | None) -> Model:
        return FakeModel(model_name or "default", SCRIPTS[model_name or "default"])


RUN_CONFIG = RunConfig(model_provider=FakeProvider(), tracing_disabled=True)


def scripted(name: str, script: Script) -> str:
    SCRIPTS[name] = script
    return name


# --------------------------------------------------------------------------- hello

hello_agent = Agent(
    name="Assistant",
    instructions="You are a helpful assistant",
    model=scripted(
        "hello",
        lambda items: say("Code within the code,\nFunctions calling themselves,\nInfinite loop's dance."),
    ),
)
durable_hello = durable(hello_agent, name="hello", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- weather (function tool)


@function_tool
def get_weather(city: str) -> str:
    """Returns weather info for the specified city."""
    tool_call("get_weather", city=city)
    return f"The weather in {city} is sunny"


weather_agent = Agent(
    name="Hello world",
    instructions="You are a helpful agent.",
    model=scripted(
        "weather",
        lambda items: (
            [call("get_weather", {"city": "Tokyo"}, "w1")]
            if not outputs(items)
            else say(f"Tokyo: {outputs(items)[0]}")
        ),
    ),
    tools=[get_weather],
)
durable_weather = durable(weather_agent, name="weather", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- triage (handoffs)

spanish_agent = Agent(
    name="spanish_agent",
    instructions="You only speak Spanish.",
    model=scripted("spanish", lambda items: say("¡Hola! Estoy bien, gracias. ¿Y tú?")),
)
english_agent = Agent(
    name="english_agent",
    instructions="You only speak English",
    model=scripted("english", lambda items: say("Hello! I'm fine.")),
)
triage_agent = Agent(
    name="triage_agent",
    instructions="Handoff to the appropriate agent based on the language of the request.",
    handoffs=[spanish_agent, english_agent],
    model=scripted("triage", lambda items: [call("transfer_to_spanish_agent", {}, "h1")]),
)
durable_triage = durable(triage_agent, name="triage", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- calendar (structured output)


class CalendarEvent(BaseModel):
    name: str
    date: str
    participants: list[str]


calendar_agent = Agent(
    name="Calendar extractor",
    instructions="Extract calendar events from text",
    output_type=CalendarEvent,
    model=scripted(
        "calendar",
        lambda items: say(
            json.dumps({"name": "Science fair", "date": "Friday", "participants": ["Alice", "Bob"]})
        ),
    ),
)
durable_calendar = durable(calendar_agent, name="calendar", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- homework (input guardrail)


class MathHomeworkOutput(BaseModel):
    is_math_homework: bool
    reasoning: str


guardrail_agent = Agent(
    name="Guardrail check",
    instructions="Check if the user is asking you to do their math homework.",
    output_type=MathHomeworkOutput,
    model=FakeModel(
        "guardrail",
        lambda items: say(
            json.dumps({"is_math_homework": True, "reasoning": "it asks to solve 2x + 3 = 11"})
        ),
    ),
)


@input_guardrail
async def math_guardrail(ctx: RunContextWrapper[None], agent: Agent, input: Any) -> GuardrailFunctionOutput:
    result = await Runner.run(guardrail_agent, input, context=ctx.context)
    return GuardrailFunctionOutput(
        output_info=result.final_output, tripwire_triggered=result.final_output.is_math_homework
    )


homework_agent = Agent(
    name="Customer support agent",
    instructions="You are a customer support agent. You help customers with their questions.",
    input_guardrails=[math_guardrail],
    model=scripted("support", lambda items: say("Sure, here is the answer: x = 4")),
)
durable_homework = durable(homework_agent, name="homework", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- math_out (output guardrail)


class MessageOutput(BaseModel):
    response: str


@output_guardrail
async def math_output_guardrail(
    ctx: RunContextWrapper, agent: Agent, output: MessageOutput
) -> GuardrailFunctionOutput:
    tool_call("math_output_guardrail", response=output.response)
    return GuardrailFunctionOutput(output_info={"checked": True}, tripwire_triggered="x =" in output.response)


math_out_agent = Agent(
    name="Math output checked",
    instructions="You are a customer support agent. You help customers with their questions.",
    output_guardrails=[math_output_guardrail],
    output_type=MessageOutput,
    model=scripted("math_out", lambda items: say(json.dumps({"response": "Your order ships Monday."}))),
)
durable_math_out = durable(math_out_agent, name="math_out", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- translator (agents as tools)

spanish_translator = Agent(
    name="spanish_translator",
    instructions="You translate the user's message to Spanish",
    model=FakeModel("to_spanish", lambda items: say("Hola")),
)
french_translator = Agent(
    name="french_translator",
    instructions="You translate the user's message to French",
    model=FakeModel("to_french", lambda items: say("Bonjour")),
)
orchestrator_agent = Agent(
    name="orchestrator_agent",
    instructions="You are a translation agent. You use the tools given to you to translate.",
    tools=[
        spanish_translator.as_tool(
            tool_name="translate_to_spanish", tool_description="Translate the user's message to Spanish"
        ),
        french_translator.as_tool(
            tool_name="translate_to_french", tool_description="Translate the user's message to French"
        ),
    ],
    model=scripted(
        "orchestrator",
        turns(
            lambda items: [call("translate_to_spanish", {"input": "Hello"}, "t1")],
            lambda items: [call("translate_to_french", {"input": "Hello"}, "t2")],
            lambda items: say(" / ".join(str(o) for o in outputs(items))),
        ),
    ),
)
durable_translator = durable(orchestrator_agent, name="translator", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- user_age (context)


@dataclass
class UserInfo:
    name: str
    uid: int


@function_tool
async def fetch_user_age(wrapper: RunContextWrapper[UserInfo]) -> str:
    """Fetch the age of the user. Call this function to get user's age information."""
    tool_call("fetch_user_age", uid=wrapper.context.uid)
    return f"The user {wrapper.context.name} is 47 years old"


user_age_agent = Agent[UserInfo](
    name="Assistant",
    tools=[fetch_user_age],
    model=scripted(
        "user_age",
        lambda items: [call("fetch_user_age", {}, "u1")] if not outputs(items) else say(outputs(items)[0]),
    ),
)


def user_info(given: Any) -> UserInfo:
    return UserInfo(**given)


durable_user_age = durable(user_age_agent, name="user_age", context=user_info, run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- escalation (on_handoff, input_type)


class EscalationData(BaseModel):
    reason: str


async def on_handoff(ctx: RunContextWrapper[None], input_data: EscalationData) -> None:
    tool_call("on_handoff", reason=input_data.reason)


escalation_target = Agent(
    name="Escalation agent",
    model=scripted("escalation_target", lambda items: say("A human will call you back today.")),
)
escalating_agent = Agent(
    name="Front desk",
    handoffs=[handoff(agent=escalation_target, on_handoff=on_handoff, input_type=EscalationData)],
    model=scripted(
        "front_desk",
        lambda items: [call("transfer_to_escalation_agent", {"reason": "refund over limit"}, "e1")],
    ),
)
durable_escalation = durable(escalating_agent, name="escalation", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- approval (needs_approval)


@function_tool(needs_approval=True)
async def cancel_order(order_id: int) -> str:
    """Cancel an order."""
    tool_call("cancel_order", order_id=order_id)
    return f"Cancelled order {order_id}"


@function_tool
def lookup_order(order_id: int) -> str:
    """Look an order up."""
    tool_call("lookup_order", order_id=order_id)
    return f"Order {order_id}: 2 books, not shipped"


approval_agent = Agent(
    name="Order desk",
    instructions="Help with orders; cancelling needs a person's approval.",
    tools=[lookup_order, cancel_order],
    model=scripted(
        "orders",
        turns(
            lambda items: [call("lookup_order", {"order_id": 101}, "o1")],
            lambda items: [call("cancel_order", {"order_id": 101}, "o2")],
            lambda items: say(f"Done: {outputs(items)[-1]}"),
        ),
    ),
)
durable_approval = durable(approval_agent, name="approval", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- orders (the Done-when agent)


class RefundDecision(BaseModel):
    order_id: int
    refunded: bool
    note: str


@function_tool(needs_approval=True)
def refund(order_id: int, amount: float) -> str:
    """Refund an order (a person approves it first)."""
    tool_call("refund", order_id=order_id, amount=amount)
    return f"refunded {amount:.2f} on order {order_id}"


orders_agent = Agent(
    name="Refunds",
    instructions="Look the order up, refund it (a person approves refunds), and report the decision.",
    tools=[lookup_order, refund],
    output_type=RefundDecision,
    model=scripted(
        "refunds",
        turns(
            lambda items: [call("lookup_order", {"order_id": 7}, "r1")],
            lambda items: [call("refund", {"order_id": 7, "amount": 25.0}, "r2")],
            lambda items: say(json.dumps({"order_id": 7, "refunded": True, "note": outputs(items)[-1]})),
        ),
    ),
)
durable_orders = durable(orders_agent, name="orders", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- turns (max_turns exceeded)


@function_tool
def search(query: str) -> str:
    """Search the web."""
    tool_call("search", query=query)
    return f"no results for {query}"


looping_agent = Agent(
    name="Searcher",
    tools=[search],
    model=scripted(
        "searcher",
        lambda items: [call("search", {"query": f"q{len(outputs(items))}"}, f"s{len(outputs(items))}")],
    ),
)
durable_turns = durable(looping_agent, name="turns", run_config=RUN_CONFIG, max_turns=3)

# --------------------------------------------------------------------------- tool_error (a failing tool)


@function_tool
def divide(a: int, b: int) -> float:
    """Divide a by b."""
    tool_call("divide", a=a, b=b)
    return a / b


divider_agent = Agent(
    name="Calculator",
    tools=[divide],
    model=scripted(
        "divider",
        turns(
            lambda items: [call("divide", {"a": 1, "b": 0}, "d1")],
            lambda items: [call("divide", {"a": 6, "b": 3}, "d2")],
            lambda items: say(f"{outputs(items)[0]}; 6 / 3 = {outputs(items)[-1]}"),
        ),
    ),
)
durable_tool_error = durable(divider_agent, name="tool_error", run_config=RUN_CONFIG)


# --------------------------------------------------------------------------- the table


@attrs.frozen
class Case:
    name: str
    agent: Agent[Any]
    spec: str
    prompt: str
    context: Any = None
    reply: Any = None
    max_turns: int | None = None
    context_factory: Callable[[Any], Any] | None = None
    inner: tuple[str, ...] = ()
    #: calls the plain run makes that the durable one does not: an input guardrail runs in parallel
    #: with the first model call in the SDK (run_in_parallel=True), before it under agentrt
    plain_only: tuple[str, ...] = ()

    @property
    def input(self) -> dict[str, Any]:
        return {"input": self.prompt, "context": self.context}


_M = "tests.adapters.oai_corpus:"
CASES = [
    Case("hello", hello_agent, _M + "durable_hello", "Write a haiku about recursion in programming."),
    Case("weather", weather_agent, _M + "durable_weather", "What's the weather in Tokyo?"),
    Case("triage", triage_agent, _M + "durable_triage", "Hola, ¿cómo estás?"),
    Case(
        "calendar",
        calendar_agent,
        _M + "durable_calendar",
        "Alice and Bob are going to a science fair on Friday.",
    ),
    Case(
        "homework",
        homework_agent,
        _M + "durable_homework",
        "Hello, can you help me solve for x: 2x + 3 = 11?",
        inner=("model:guardrail#",),
        plain_only=("model:support#0",),
    ),
    Case("math_out", math_out_agent, _M + "durable_math_out", "When does my order ship?"),
    Case(
        "translator",
        orchestrator_agent,
        _M + "durable_translator",
        "Say 'Hello' in Spanish and French.",
        inner=("model:to_",),
    ),
    Case(
        "user_age",
        user_age_agent,
        _M + "durable_user_age",
        "What is the age of the user?",
        {"name": "John", "uid": 123},
        context_factory=user_info,
    ),
    Case("escalation", escalating_agent, _M + "durable_escalation", "I want my money back."),
    Case(
        "approval",
        approval_agent,
        _M + "durable_approval",
        "Cancel order 101.",
        reply={"approvals": {"o2": True}},
    ),
    Case(
        "orders",
        orders_agent,
        _M + "durable_orders",
        "Order 7 arrived damaged, refund it.",
        reply={"approvals": {"r2": True}},
    ),
    Case("turns", looping_agent, _M + "durable_turns", "Find it.", max_turns=3),
    Case("tool_error", divider_agent, _M + "durable_tool_error", "What are 1/0 and 6/3?"),
]

_ERRORS = (InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered, MaxTurnsExceeded)


async def run_plain(case: Case) -> dict[str, Any]:
    """The agent run as the SDK's docs run it (no agentrt), approvals answered with the case's reply."""
    import pydantic_core

    context = case.context_factory(case.context) if case.context_factory else case.context
    turns = {} if case.max_turns is None else {"max_turns": case.max_turns}
    try:
        result = await Runner.run(case.agent, case.prompt, context=context, run_config=RUN_CONFIG, **turns)
        while result.interruptions:
            state = result.to_state()
            for item in result.interruptions:
                if case.reply["approvals"][item.raw_item.call_id] is True:
                    state.approve(item)
                else:
                    state.reject(item)
            result = await Runner.run(case.agent, state, context=context, run_config=RUN_CONFIG, **turns)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"output": json.loads(json.dumps(pydantic_core.to_jsonable_python(result.final_output)))}
