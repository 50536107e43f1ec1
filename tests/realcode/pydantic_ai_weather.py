"""Ports pydantic-ai's weather agent (pydantic-ai examples, ``weather_agent.py``): an ``Agent`` with
``Deps`` -- a dataclass holding an ``httpx.AsyncClient`` and API keys -- whose two tools,
``get_lat_lng`` and ``get_weather``, take ``RunContext[Deps]`` and call web APIs with
``ctx.deps.client``.

As written there, but for one line: the example opens the client with ``async with AsyncClient()
as client``; leaving that block (``AsyncClient.__aexit__``, which closes httpcore's pool) asks
sniffio which async library runs it and raises ``AsyncLibraryNotFoundError`` in an agent that
agentrt drives (no event loop runs it), so the port creates the client without the block.  Then:
``Deps`` passed down,
the agent's loop (model request, tool calls, tool returns, final text) in pydantic-ai's message
style, here its own small dataclasses.  The model requests and the two HTTP GETs are the
suspensions; the client inside ``Deps`` (reopened on restore), the ``RunContext`` and the message
history cross every await.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from httpx import AsyncClient

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port

AGENT = "pydantic_ai_weather"
AgentDepsT = TypeVar("AgentDepsT")


@dataclass
class Deps:
    client: AsyncClient
    weather_api_key: str | None
    geo_api_key: str | None


@dataclass
class RunContext(Generic[AgentDepsT]):
    deps: AgentDepsT
    retry: int = 0
    run_step: int = 0


@dataclass
class ToolCallPart:
    tool_name: str
    args: dict[str, Any]
    tool_call_id: str
    part_kind: str = "tool-call"


@dataclass
class ToolReturnPart:
    tool_name: str
    content: Any
    tool_call_id: str
    part_kind: str = "tool-return"


@dataclass
class TextPart:
    content: str
    part_kind: str = "text"


@dataclass
class ModelResponse:
    parts: list[Any]
    model_name: str = "openai:gpt-4o"
    kind: str = "response"


@dataclass
class ModelRequest:
    parts: list[Any]
    kind: str = "request"


@dataclass
class AgentRunResult:
    output: str
    messages: list[Any] = field(default_factory=list)

    def all_messages(self) -> list[Any]:
        return self.messages


async def get_lat_lng(ctx: RunContext[Deps], location_description: str) -> dict[str, float]:
    """Get the latitude and longitude of a location."""
    if ctx.deps.geo_api_key is None:
        return {"lat": 51.1, "lng": -0.1}  # the example's dummy response without a key
    params = {"q": location_description, "api_key": ctx.deps.geo_api_key}
    r = await tool(
        AGENT, "GET", url=str(ctx.deps.client.base_url.join("https://geocode.maps.co/search")), params=params
    )
    if r["data"]:
        return {"lat": r["data"][0]["lat"], "lng": r["data"][0]["lon"]}
    raise ValueError("Could not find the location")


async def get_weather(ctx: RunContext[Deps], lat: float, lng: float) -> dict[str, Any]:
    """Get the weather at a location."""
    if ctx.deps.weather_api_key is None:
        return {"temperature": "21 °C", "description": "Sunny"}
    params = {"apikey": ctx.deps.weather_api_key, "location": f"{lat},{lng}", "units": "metric"}
    r = await tool(AGENT, "GET", url="https://api.tomorrow.io/v4/weather/realtime", params=params)
    values = r["data"]["values"]
    code_lookup = {1000: "Clear, Sunny", 1100: "Mostly Clear", 1101: "Partly Cloudy", 4001: "Rain"}
    return {
        "temperature": f"{values['temperatureApparent']:0.0f}°C",
        "description": code_lookup.get(values["weatherCode"], "Unknown"),
    }


TOOLS = {"get_lat_lng": get_lat_lng, "get_weather": get_weather}
INSTRUCTIONS = (
    "Be concise, reply with one sentence. Use the `get_lat_lng` tool to get the latitude and longitude..."
)


async def run_agent(prompt: str, deps: Deps) -> AgentRunResult:
    """pydantic-ai's graph in a loop: request the model, run the tool calls it makes, stop on text."""
    messages: list[Any] = [ModelRequest([TextPart(INSTRUCTIONS), TextPart(prompt)])]
    ctx = RunContext(deps)
    while True:
        ctx.run_step += 1
        response: ModelResponse = await model(AGENT, messages=messages, tools=sorted(TOOLS))
        messages.append(response)
        calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
        if not calls:
            return AgentRunResult("".join(p.content for p in response.parts), messages)
        returns = []
        for call in calls:
            returns.append(
                ToolReturnPart(
                    call.tool_name, await TOOLS[call.tool_name](ctx, **call.args), call.tool_call_id
                )
            )
        messages.append(ModelRequest(returns))


@port(
    "What is the weather like in London and in Wiltshire?",
    example="pydantic-ai examples: weather_agent.py (Deps with httpx.AsyncClient, RunContext tools)",
    answer="London is 12°C and partly cloudy; Wiltshire is 9°C with rain.",
)
async def main(question: str) -> tuple[Any, ...]:
    client = AsyncClient()  # the example's `async with AsyncClient() as client:` -- see the docstring
    deps = Deps(client=client, weather_api_key="weather-key-from-env", geo_api_key="geo-key-from-env")
    result = await run_agent(question, deps)
    return (result.output, result.all_messages(), str(deps.client.base_url), type(deps.client).__name__)


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        _method, arguments = request
        params = arguments["params"]
        if "q" in params:
            places = {"London": (51.5072, -0.1276), "Wiltshire": (51.3492, -1.9927)}
            lat, lon = places[params["q"]]
            return {"data": [{"lat": lat, "lon": lon, "display_name": params["q"]}]}
        weather = {"51.5072,-0.1276": (12.2, 1101), "51.3492,-1.9927": (9.4, 4001)}
        temp, code = weather[params["location"]]
        return {"data": {"values": {"temperatureApparent": temp, "weatherCode": code}}}
    messages = request[0]["messages"]
    step = len(messages)
    if step == 1:
        return ModelResponse(
            [
                ToolCallPart("get_lat_lng", {"location_description": "London"}, "call_1a"),
                ToolCallPart("get_lat_lng", {"location_description": "Wiltshire"}, "call_1b"),
            ]
        )
    if step == 3:
        london, wilts = (part.content for part in messages[-1].parts)
        return ModelResponse(
            [
                ToolCallPart("get_weather", {"lat": london["lat"], "lng": london["lng"]}, "call_2a"),
                ToolCallPart("get_weather", {"lat": wilts["lat"], "lng": wilts["lng"]}, "call_2b"),
            ]
        )
    london, wilts = (part.content for part in messages[-1].parts)
    return ModelResponse(
        [
            TextPart(
                f"London is {london['temperature']} and {london['description'].lower()}; "
                f"Wiltshire is {wilts['temperature']} with {wilts['description'].lower()}."
            )
        ]
    )
