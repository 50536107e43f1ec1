"""A streamed pydantic-ai agent, durable: its events on agentrt's durable event stream (issue 29).

The model is a ``FunctionModel`` with a ``stream_function``: the first request streams a tool call
(its arguments in two chunks), the second the answer in three text chunks.  Every streamed request
and tool call is logged and may SIGKILL the process (``tests/adapters/_calls.py``); with
``AGENTRT_TEST_HANDLED`` set, the agent's own ``event_stream_handler`` logs each event it is given,
deltas included, to that file (one ``pid kind`` line each).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from agentrt.adapters.pydantic_ai import durable
from tests.adapters._calls import record, tool_call

ANSWER = ("The weather ", "in Paris ", "is sunny.")


async def _stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    n = sum(isinstance(m, ModelResponse) for m in messages)
    record(f"model:weather#{n}")
    if n == 0:
        yield {0: DeltaToolCall(name="lookup", json_args='{"city": ', tool_call_id="c0")}
        yield {0: DeltaToolCall(json_args='"Paris"}')}
    else:
        for chunk in ANSWER:
            yield chunk


async def handler(ctx: RunContext[Any], events: AsyncIterable[Any]) -> None:
    path = os.environ.get("AGENTRT_TEST_HANDLED")
    async for event in events:
        if path:
            with open(path, "a") as f:
                f.write(f"{os.getpid()} {event.event_kind}\n")


weather_agent = Agent(FunctionModel(stream_function=_stream, model_name="weather"), name="weather")


@weather_agent.tool_plain
def lookup(city: str) -> str:
    """The weather in ``city``."""
    tool_call("lookup", city=city)
    return f"sunny in {city}"


durable_weather = durable(weather_agent, name="weather", event_stream_handler=handler)
#: the same agent streamed with no handler of its own: events on the durable stream only
durable_weather_quiet = durable(weather_agent, name="weather_quiet", stream=True)


# --------------------------------------------------------------------------- the OpenAI Agents SDK


def _oai_streamed() -> Any:
    """The SDK's weather agent (tests/adapters/oai_corpus.py) on a fake model that streams: each output
    item as a ``response.output_item.done`` event, then ``response.completed``."""
    from agents import ModelProvider, RunConfig
    from openai.types.responses import Response, ResponseCompletedEvent, ResponseOutputItemDoneEvent

    from agentrt.adapters.openai_agents import durable as oai_durable
    from tests.adapters import oai_corpus

    class Streaming(oai_corpus.FakeModel):
        async def stream_response(
            self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
        ) -> Any:
            response = await self.get_response(system_instructions, input, *args, **kwargs)
            for n, item in enumerate(response.output):
                yield ResponseOutputItemDoneEvent(
                    item=item, output_index=n, sequence_number=n, type="response.output_item.done"
                )
            done = Response(
                id="resp",
                created_at=0,
                model=self.name,
                object="response",
                output=response.output,
                parallel_tool_calls=False,
                tool_choice="auto",
                tools=[],
            )
            yield ResponseCompletedEvent(
                response=done, sequence_number=len(response.output), type="response.completed"
            )

    class Provider(ModelProvider):
        def get_model(self, model_name: str | None) -> Any:
            return Streaming(model_name or "default", oai_corpus.SCRIPTS[model_name or "default"])

    run_config = RunConfig(model_provider=Provider(), tracing_disabled=True)
    agent = oai_corpus.weather_agent
    return agent, run_config, oai_durable(agent, name="weather_streamed", run_config=run_config, stream=True)


oai_weather_agent, oai_run_config, durable_oai_weather = _oai_streamed()
