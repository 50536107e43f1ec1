"""pydantic-ai agents from pydantic-ai's own documentation and examples, each made durable.

Every agent is written as in the docs (tools, deps, structured output, validators, approvals,
usage limits, delegation); only the model is a pydantic-ai test model (``FunctionModel`` scripted
turn by turn, or ``TestModel``) and the docs' I/O (a database, a weather API) is a small fake.
Every model request and tool call is logged (``tests/adapters/_calls.py``).

Sources (pydantic.dev/docs/ai, and the examples package):
roulette (Agents: "roulette wheel"), dice (Function tools: "dice game"), city (Output: structured
output), weather (examples/weather_agent.py), bank (the introduction's bank support agent),
user_retry (Function tools: ModelRetry), sql_validator (Output validators), approval (Deferred
tools: human-in-the-loop approval), limits (Usage limits), jokes (Multi-agent: agent delegation),
forecast (Unit testing with TestModel).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import attrs
from pydantic import BaseModel
from pydantic_ai import (
    Agent,
    ApprovalRequired,
    DeferredToolRequests,
    DeferredToolResults,
    ModelRetry,
    RunContext,
    ToolDenied,
)
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.usage import UsageLimits

from agentrt.adapters.pydantic_ai import durable
from tests.adapters._calls import record, tool_call

Turn = ModelResponse | Callable[[list[ModelMessage]], ModelResponse]


def scripted(name: str, *turns: Turn) -> FunctionModel:
    """A FunctionModel answering its n-th request (n = model responses in the history) with turns[n]."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = sum(isinstance(m, ModelResponse) for m in messages)
        record(f"model:{name}#{n}")
        turn = turns[min(n, len(turns) - 1)]
        return turn if isinstance(turn, ModelResponse) else turn(messages)

    return FunctionModel(respond, model_name=name)


class Logged(WrapperModel):
    """pydantic-ai's TestModel, each request logged."""

    def __init__(self, name: str, wrapped: Model) -> None:
        super().__init__(wrapped)
        self._name = name
        self._n = 0

    async def request(self, messages: Any, model_settings: Any, params: Any) -> ModelResponse:
        n = sum(isinstance(m, ModelResponse) for m in messages)
        record(f"model:{self._name}#{n}")
        return await self.wrapped.request(messages, model_settings, params)


def calls(*parts: tuple[str, dict[str, Any], str]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=cid) for name, args, cid in parts])


def text(value: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(value)])


def last_return(messages: list[ModelMessage]) -> Any:
    for message in reversed(messages):
        for part in reversed(getattr(message, "parts", [])):
            if isinstance(part, ToolReturnPart):
                return part.content
    raise AssertionError("no tool return in the history")


# --------------------------------------------------------------------------- roulette (deps, bool output)

roulette_agent = Agent(
    scripted(
        "roulette",
        calls(("roulette_wheel", {"square": 18}, "c1")),
        lambda m: calls(("final_result", {"response": last_return(m) == "winner"}, "c2")),
    ),
    deps_type=int,
    output_type=bool,
    system_prompt=(
        "Use the `roulette_wheel` function to see if the customer has won based on the number they provide."
    ),
)


@roulette_agent.tool
async def roulette_wheel(ctx: RunContext[int], square: int) -> str:
    """check if the square is a winner"""
    tool_call("roulette_wheel", square=square)
    return "winner" if square == ctx.deps else "loser"


durable_roulette = durable(roulette_agent, name="roulette")

# --------------------------------------------------------------------------- dice (two tools, text output)

dice_agent = Agent(
    scripted(
        "dice",
        calls(("roll_dice", {}, "c1")),
        calls(("get_player_name", {}, "c2")),
        lambda m: text(f"Congratulations {last_return(m)}, you guessed correctly! You're a winner!"),
    ),
    deps_type=str,
    system_prompt=(
        "You're a dice game, you should roll the die and see if the number "
        "you get back matches the user's guess. If so, tell them they're a winner. "
        "Use the player's name in the response."
    ),
)


@dice_agent.tool_plain
def roll_dice() -> str:
    """Roll a six-sided die and return the result."""
    tool_call("roll_dice")
    return "4"  # the docs' random.randint(1, 6), fixed so that every run rolls the same


@dice_agent.tool
def get_player_name(ctx: RunContext[str]) -> str:
    """Get the player's name."""
    tool_call("get_player_name")
    return ctx.deps


durable_dice = durable(dice_agent, name="dice")

# --------------------------------------------------------------------------- city (structured output, TestModel)


class CityLocation(BaseModel):
    city: str
    country: str


city_agent = Agent(
    Logged("city", TestModel(custom_output_args={"city": "London", "country": "United Kingdom"})),
    output_type=CityLocation,
)
durable_city = durable(city_agent, name="city")

# --------------------------------------------------------------------------- weather (deps, two calls at once)


@dataclass
class WeatherDeps:
    weather_api_key: str | None = None
    geo_api_key: str | None = None


weather_agent = Agent(
    scripted(
        "weather",
        calls(
            ("get_lat_lng", {"location_description": "London"}, "c1"),
            ("get_lat_lng", {"location_description": "Wiltshire"}, "c2"),
        ),
        calls(
            ("get_weather", {"lat": 51.1, "lng": -0.1}, "c3"),
            ("get_weather", {"lat": 51.3, "lng": -1.9}, "c4"),
        ),
        lambda m: text(f"London and Wiltshire: {last_return(m)['description']}"),
    ),
    instructions="Be concise, reply with one sentence.",
    deps_type=WeatherDeps,
    retries=2,
)


@weather_agent.tool
async def get_lat_lng(ctx: RunContext[WeatherDeps], location_description: str) -> dict[str, float]:
    """Get the latitude and longitude of a location."""
    tool_call("get_lat_lng", location_description=location_description)
    return {"lat": 51.1, "lng": -0.1} if location_description == "London" else {"lat": 51.3, "lng": -1.9}


@weather_agent.tool
async def get_weather(ctx: RunContext[WeatherDeps], lat: float, lng: float) -> dict[str, Any]:
    """Get the weather at a location."""
    tool_call("get_weather", lat=lat, lng=lng)
    return {"temperature": f"{21 if lat < 51.2 else 19} °C", "description": "Mostly Sunny"}


durable_weather = durable(weather_agent, name="weather")

# --------------------------------------------------------------------------- bank (deps factory, dynamic prompt)


class DatabaseConn:
    """The docs' fake database; built in the host from the input's deps, never checkpointed."""

    async def customer_name(self, *, id: int) -> str | None:
        return "John" if id == 123 else None

    async def customer_balance(self, *, id: int, include_pending: bool) -> float:
        return 123.45 if include_pending else 100.0


@dataclass
class SupportDependencies:
    customer_id: int
    db: DatabaseConn


class SupportOutput(BaseModel):
    support_advice: str
    block_card: bool
    risk: int


support_agent = Agent(
    scripted(
        "bank",
        calls(("customer_balance", {"include_pending": True}, "c1")),
        lambda m: calls(
            (
                "final_result",
                {"support_advice": f"Your balance is ${last_return(m)}.", "block_card": False, "risk": 1},
                "c2",
            )
        ),
    ),
    deps_type=SupportDependencies,
    output_type=SupportOutput,
    instructions=(
        "You are a support agent in our bank, give the customer support and judge the risk level of their query."
    ),
)


@support_agent.instructions
async def add_customer_name(ctx: RunContext[SupportDependencies]) -> str:
    customer_name = await ctx.deps.db.customer_name(id=ctx.deps.customer_id)
    return f"The customer's name is {customer_name!r}"


@support_agent.tool
async def customer_balance(ctx: RunContext[SupportDependencies], include_pending: bool) -> float:
    """Returns the customer's current account balance."""
    tool_call("customer_balance", include_pending=include_pending)
    return await ctx.deps.db.customer_balance(id=ctx.deps.customer_id, include_pending=include_pending)


def support_deps(given: Any) -> SupportDependencies:
    return SupportDependencies(customer_id=given["customer_id"], db=DatabaseConn())


durable_bank = durable(support_agent, name="bank", deps=support_deps)

# --------------------------------------------------------------------------- user_retry (ModelRetry from a tool)

USERS = {"John Doe": 123}

user_agent = Agent(
    scripted(
        "user_retry",
        calls(("get_user_by_name", {"name": "John"}, "c1")),
        calls(("get_user_by_name", {"name": "John Doe"}, "c2")),
        lambda m: calls(("final_result", {"response": last_return(m)}, "c3")),
    ),
    output_type=int,
    system_prompt="Use the `get_user_by_name` tool to find the user's ID.",
)


@user_agent.tool(retries=2)
def get_user_by_name(ctx: RunContext[None], name: str) -> int:
    """Get a user's ID from their full name."""
    tool_call("get_user_by_name", name=name)
    user_id = USERS.get(name)
    if user_id is None:
        raise ModelRetry(f"No user found with name {name!r}, remember to provide their full name")
    return user_id


durable_user_retry = durable(user_agent, name="user_retry")

# --------------------------------------------------------------------------- sql_validator (output validator)


class Success(BaseModel):
    sql_query: str


class InvalidRequest(BaseModel):
    error_message: str


sql_agent = Agent[None, Success | InvalidRequest](
    scripted(
        "sql",
        calls(("final_result_Success", {"sql_query": "DELETE FROM users"}, "c1")),
        calls(
            (
                "final_result_Success",
                {"sql_query": "SELECT * FROM users WHERE last_active::date = today() - 1"},
                "c2",
            )
        ),
    ),
    output_type=Success | InvalidRequest,  # type: ignore[arg-type]  # as in the docs
    system_prompt="Generate PostgreSQL flavored SQL queries based on user input.",
)


@sql_agent.output_validator
async def validate_sql(ctx: RunContext[None], output: Success | InvalidRequest) -> Success | InvalidRequest:
    if isinstance(output, InvalidRequest):
        return output
    if not output.sql_query.upper().startswith("SELECT"):
        raise ModelRetry("Please create a SELECT query")
    return output


durable_sql = durable(sql_agent, name="sql_validator")

# --------------------------------------------------------------------------- approval (deferred tools)

approval_agent = Agent(
    scripted(
        "approval",
        calls(
            ("delete_file", {"path": "__init__.py"}, "delete"),
            ("update_file", {"path": "README.md", "content": "Hello, world!"}, "update_readme"),
            ("update_file", {"path": ".env", "content": "SECRET=42"}, "update_env"),
        ),
        text("Done: README.md and .env updated, __init__.py kept."),
    ),
    output_type=[str, DeferredToolRequests],
)

PROTECTED_FILES = {".env"}


@approval_agent.tool
def update_file(ctx: RunContext, path: str, content: str) -> str:
    tool_call("update_file", path=path, content=content)
    if path in PROTECTED_FILES and not ctx.tool_call_approved:
        raise ApprovalRequired(metadata={"reason": "protected"})
    return f"File {path!r} updated: {content!r}"


@approval_agent.tool_plain(requires_approval=True)
def delete_file(path: str) -> str:
    tool_call("delete_file", path=path)
    return f"File {path!r} deleted"


durable_approval = durable(approval_agent, name="approval")
APPROVAL_REPLY = {"approvals": {"update_env": True, "delete": "Deleting files is not allowed"}}

# --------------------------------------------------------------------------- limits (usage limits exceeded)

limits_agent = Agent(
    scripted("limits", *[calls(("lookup", {"n": i}, f"c{i}")) for i in range(10)]),
    system_prompt="Look things up until you know.",
)


@limits_agent.tool_plain
def lookup(n: int) -> str:
    tool_call("lookup", n=n)
    return f"nothing at {n}"


LIMITS = UsageLimits(request_limit=3)
durable_limits = durable(limits_agent, name="limits", usage_limits=LIMITS)

# --------------------------------------------------------------------------- jokes (agent delegation in a tool)

joke_generation_agent = Agent(
    scripted("jokes", calls(("final_result", {"response": ["Why the chicken?", "Knock knock."]}, "j1"))),
    output_type=list[str],
)

joke_selection_agent = Agent(
    scripted(
        "joke_selection",
        calls(("joke_factory", {"count": 2}, "c1")),
        lambda m: text(f"Here is one: {last_return(m)[0]}"),
    ),
    system_prompt="Use the `joke_factory` to generate some jokes, then choose the best. You must return just a single joke.",
)


@joke_selection_agent.tool
async def joke_factory(ctx: RunContext[None], count: int) -> list[str]:
    tool_call("joke_factory", count=count)
    r = await joke_generation_agent.run(f"Please generate {count} jokes.", usage=ctx.usage)
    return r.output


durable_jokes = durable(joke_selection_agent, name="jokes")

# --------------------------------------------------------------------------- forecast (TestModel calls every tool)


class FakeForecastDb:
    def get_forecast(self, location: str, forecast_date: str) -> str:
        return f"Sunny in {location} on {forecast_date}"


weather_forecast_agent = Agent(
    Logged("forecast", TestModel(call_tools="all")),
    deps_type=str,
    system_prompt="Providing a weather forecast at the locations the user provides.",
)


@weather_forecast_agent.tool
def weather_forecast(ctx: RunContext[str], location: str, forecast_date: str) -> str:
    tool_call("weather_forecast", location=location, forecast_date=forecast_date)
    return FakeForecastDb().get_forecast(location, forecast_date) + f" ({ctx.deps})"


durable_forecast = durable(weather_forecast_agent, name="forecast")


# --------------------------------------------------------------------------- orders (the Done-when agent)


class RefundDecision(BaseModel):
    order_id: int
    refunded: bool
    note: str


orders_agent = Agent(
    scripted(
        "orders",
        calls(("lookup_order", {"order_id": 7}, "o1")),
        calls(("refund", {"order_id": 7, "amount": 25.0}, "o2")),
        lambda m: calls(
            ("final_result", {"order_id": 7, "refunded": True, "note": str(last_return(m))}, "o3")
        ),
    ),
    output_type=[RefundDecision, DeferredToolRequests],
    instructions="Look the order up, refund it (a person approves refunds), and report the decision.",
)


@orders_agent.tool_plain
def lookup_order(order_id: int) -> dict[str, Any]:
    """Look an order up."""
    tool_call("lookup_order", order_id=order_id)
    return {"order_id": order_id, "total": 25.0, "status": "delivered damaged"}


@orders_agent.tool_plain(requires_approval=True)
def refund(order_id: int, amount: float) -> str:
    """Refund an order (a person approves it first)."""
    tool_call("refund", order_id=order_id, amount=amount)
    return f"refunded {amount:.2f} on order {order_id}"


durable_orders = durable(orders_agent, name="orders")


# --------------------------------------------------------------------------- the table


@attrs.frozen
class Case:
    """One corpus agent: its durable form, the input, the reply to its approval, how to run it plainly."""

    name: str
    agent: Agent[Any, Any]
    spec: str
    prompt: str
    deps: Any = None
    reply: Any = None
    usage_limits: UsageLimits | None = None
    deps_factory: Callable[[Any], Any] | None = None
    #: calls made inside another call's step (a delegate agent's model inside a tool): killed
    #: there, the whole step is made again
    inner: tuple[str, ...] = ()

    @property
    def input(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "deps": self.deps}


CASES = [
    Case(
        "roulette",
        roulette_agent,
        "tests.adapters.pai_corpus:durable_roulette",
        "Put my money on square eighteen",
        18,
    ),
    Case("dice", dice_agent, "tests.adapters.pai_corpus:durable_dice", "My guess is 4", "Anne"),
    Case(
        "city", city_agent, "tests.adapters.pai_corpus:durable_city", "Where were the olympics held in 2012?"
    ),
    Case(
        "weather",
        weather_agent,
        "tests.adapters.pai_corpus:durable_weather",
        "What is the weather like in London and in Wiltshire?",
        {},
    ),
    Case(
        "bank",
        support_agent,
        "tests.adapters.pai_corpus:durable_bank",
        "What is my balance?",
        {"customer_id": 123},
        deps_factory=support_deps,
    ),
    Case("user_retry", user_agent, "tests.adapters.pai_corpus:durable_user_retry", "What is John's ID?"),
    Case(
        "sql_validator",
        sql_agent,
        "tests.adapters.pai_corpus:durable_sql",
        "show me users who were last active yesterday",
    ),
    Case(
        "approval",
        approval_agent,
        "tests.adapters.pai_corpus:durable_approval",
        "Delete `__init__.py`, write `Hello, world!` to `README.md`, and clear `.env`",
        reply=APPROVAL_REPLY,
    ),
    Case(
        "orders",
        orders_agent,
        "tests.adapters.pai_corpus:durable_orders",
        "Order 7 arrived damaged, refund it.",
        reply={"approvals": {"o2": True}},
    ),
    Case("limits", limits_agent, "tests.adapters.pai_corpus:durable_limits", "Find it", usage_limits=LIMITS),
    Case(
        "jokes",
        joke_selection_agent,
        "tests.adapters.pai_corpus:durable_jokes",
        "Tell me a joke.",
        inner=("model:jokes#",),
    ),
    Case(
        "forecast",
        weather_forecast_agent,
        "tests.adapters.pai_corpus:durable_forecast",
        "What will the weather be like in London on 2032-01-01?",
        "from the test db",
    ),
]


async def run_plain(case: Case) -> dict[str, Any]:
    """The agent run as pydantic-ai's docs run it (no agentrt): its output (or error) as JSON.

    An approval is answered with the case's reply, as the docs' loop does: run, get
    ``DeferredToolRequests``, run again with ``deferred_tool_results`` and the messages.  Tool calls
    of one model response run one at a time, in the order the model gave them (pydantic-ai's
    ``parallel_execution_mode('sequential')``, as under the adapter), so that the calls of the
    reference come in one order: run in parallel, they come in any.
    """
    import pydantic_core
    from pydantic_ai.tool_manager import ToolManager

    with ToolManager.parallel_execution_mode("sequential"):
        return await _run_plain(case, pydantic_core.to_jsonable_python)


async def _run_plain(case: Case, to_json: Callable[[Any], Any]) -> dict[str, Any]:
    deps = case.deps_factory(case.deps) if case.deps_factory else case.deps
    try:
        result = await case.agent.run(case.prompt, deps=deps, usage_limits=case.usage_limits)
        while isinstance(result.output, DeferredToolRequests):
            approvals = {
                cid: ToolDenied(v) if isinstance(v, str) else v for cid, v in case.reply["approvals"].items()
            }
            result = await case.agent.run(
                message_history=result.all_messages(),
                deferred_tool_results=DeferredToolResults(approvals=approvals),
                deps=deps,
                usage_limits=case.usage_limits,
            )
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"output": json.loads(json.dumps(to_json(result.output)))}
