"""Ports Google's Agent Development Kit quickstart (google-adk docs "Quickstart": ``root_agent =
Agent(name="weather_time_agent", model="gemini-2.0-flash", instruction=..., tools=[get_weather,
get_current_time])``; and the "Agent Team" tutorial's ``Runner(agent=..., app_name=...,
session_service=InMemorySessionService())`` with ``session_service.create_session`` and the
``call_agent_async`` loop over ``runner.run_async(...)`` events until ``event.is_final_response()``),
with the tutorial's ``tool_context.state`` write of the last city asked about.

ADK is not installed: ``Agent``, ``Runner``, ``InMemorySessionService``, ``Session``, ``Event`` and
``types.Content``/``Part`` are pydantic stand-ins in its style; the runner is an async generator in
ADK, written here as a loop collecting events (an async generator whose body suspends cannot be
carried).  The Gemini calls and the tools' lookups are the suspensions; the session service, the
session state and the events cross every await.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port

AGENT = "google_adk_weather"


class FunctionCall(BaseModel):
    name: str
    args: dict[str, Any]
    id: str


class FunctionResponse(BaseModel):
    name: str
    response: dict[str, Any]
    id: str


class Part(BaseModel):
    text: str | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None


class Content(BaseModel):
    role: str
    parts: list[Part]


class Event(BaseModel):
    author: str
    content: Content
    invocation_id: str

    def get_function_calls(self) -> list[FunctionCall]:
        return [p.function_call for p in self.content.parts if p.function_call]

    def is_final_response(self) -> bool:
        return not self.get_function_calls() and not any(p.function_response for p in self.content.parts)


class Session(BaseModel):
    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)


class InMemorySessionService:
    def __init__(self) -> None:
        self.sessions: dict[tuple[str, str, str], Session] = {}

    def create_session(self, app_name: str, user_id: str, session_id: str) -> Session:
        session = self.sessions[(app_name, user_id, session_id)] = Session(
            id=session_id, app_name=app_name, user_id=user_id
        )
        return session

    def get_session(self, app_name: str, user_id: str, session_id: str) -> Session:
        return self.sessions[(app_name, user_id, session_id)]


@dataclass
class ToolContext:
    """ADK's tool context: ``state`` writes through to the session's state."""

    state: dict[str, Any]


async def get_weather(city: str, tool_context: ToolContext) -> dict[str, str]:
    """Retrieves the current weather report for a specified city."""
    tool_context.state["last_city_checked"] = city
    return await tool(AGENT, "get_weather", city=city)


async def get_current_time(city: str, tool_context: ToolContext) -> dict[str, str]:
    """Returns the current time in a specified city."""
    if city.lower() == "new york":
        tz = ZoneInfo("America/New_York")
        now: datetime.datetime = await tool(AGENT, "now", tz=str(tz))
        return {
            "status": "success",
            "report": f"The current time in {city} is {now.astimezone(tz):%Y-%m-%d %H:%M:%S %Z%z}",
        }
    return {"status": "error", "error_message": f"Sorry, I don't have timezone information for {city}."}


class Agent(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    name: str
    model: str
    description: str = ""
    instruction: str = ""
    tools: list[Callable[..., Any]] = Field(default_factory=list)


class Runner:
    def __init__(self, agent: Agent, app_name: str, session_service: InMemorySessionService) -> None:
        self.agent, self.app_name, self.session_service = agent, app_name, session_service

    async def run(self, user_id: str, session_id: str, new_message: Content) -> list[Event]:
        session = self.session_service.get_session(self.app_name, user_id, session_id)
        invocation = f"e-{len(session.events):03d}"
        session.events.append(Event(author="user", content=new_message, invocation_id=invocation))
        events = []
        tools = {t.__name__: t for t in self.agent.tools}
        while True:
            content: Content = await model(
                AGENT,
                model=self.agent.model,
                system_instruction=self.agent.instruction,
                contents=[e.content for e in session.events],
            )
            event = Event(author=self.agent.name, content=content, invocation_id=invocation)
            session.events.append(event)
            events.append(event)
            if event.is_final_response():
                return events
            responses = []
            for call in event.get_function_calls():
                result = await tools[call.name](**call.args, tool_context=ToolContext(state=session.state))
                responses.append(
                    Part(function_response=FunctionResponse(name=call.name, response=result, id=call.id))
                )
            reply = Event(
                author=self.agent.name,
                content=Content(role="user", parts=responses),
                invocation_id=invocation,
            )
            session.events.append(reply)
            events.append(reply)


root_agent = Agent(
    name="weather_time_agent",
    model="gemini-2.0-flash",
    description="Agent to answer questions about the time and weather in a city.",
    instruction="You are a helpful agent who can answer user questions about the time and weather in a city.",
    tools=[get_weather, get_current_time],
)


async def call_agent_async(query: str, runner: Runner, user_id: str, session_id: str) -> str:
    content = Content(role="user", parts=[Part(text=query)])
    final_response_text = "Agent did not produce a final response."
    for event in await runner.run(user_id=user_id, session_id=session_id, new_message=content):
        if event.is_final_response():
            if event.content and event.content.parts:
                final_response_text = event.content.parts[0].text or ""
            break
    return final_response_text


@port(
    ["What is the weather in New York?", "And what time is it there?"],
    example="Google ADK quickstart, Agent Team tutorial (weather_time_agent, Runner, InMemorySessionService)",
    answer="It is 14:05 in New York (EDT).",
)
async def main(queries: list[str]) -> tuple[Any, ...]:
    session_service = InMemorySessionService()
    session_service.create_session(
        app_name="weather_tutorial_app", user_id="user_1", session_id="session_001"
    )
    runner = Runner(agent=root_agent, app_name="weather_tutorial_app", session_service=session_service)
    answers = [await call_agent_async(q, runner, "user_1", "session_001") for q in queries]
    session = session_service.get_session("weather_tutorial_app", "user_1", "session_001")
    return (answers[-1], answers, session.state, len(session.events))


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        name, arguments = request
        if name == "now":
            return datetime.datetime(2025, 5, 6, 18, 5, 0, tzinfo=datetime.UTC)
        return {
            "status": "success",
            "report": f"The weather in {arguments['city']} is sunny with a temperature of 25 degrees "
            "Celsius.",
        }
    contents = request[0]["contents"]
    last = contents[-1].parts[0]
    n = len(contents)
    if last.text == "What is the weather in New York?":
        return Content(
            role="model",
            parts=[
                Part(function_call=FunctionCall(name="get_weather", args={"city": "New York"}, id=f"f{n}"))
            ],
        )
    if last.text == "And what time is it there?":
        return Content(
            role="model",
            parts=[
                Part(
                    function_call=FunctionCall(name="get_current_time", args={"city": "New York"}, id=f"f{n}")
                )
            ],
        )
    report = last.function_response.response["report"]  # type: ignore[union-attr]
    if "weather" in report:
        return Content(role="model", parts=[Part(text="It is sunny and 25 °C in New York.")])
    return Content(role="model", parts=[Part(text=f"It is {report.split(' ')[-2][:5]} in New York (EDT).")])
