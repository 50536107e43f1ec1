"""The stepper agent on the OpenAI Agents SDK, made durable by agentrt (docs/adapters-compared.md)."""

import asyncio
import sys

from agents import Agent, RunConfig, Runner, function_tool
from scripted import oai_provider

from agentrt.adapters.openai_agents import durable

RUN_CONFIG = RunConfig(model_provider=oai_provider(), tracing_disabled=True)  # stand-in model


@function_tool
def step(i: int) -> int:
    """One step of the work (an API call, in a real agent)."""
    return i * 2


agent = Agent(name="stepper", model="gpt-5.2", tools=[step])


async def main(prompt: str) -> str:
    result = await Runner.run(agent, prompt, run_config=RUN_CONFIG, max_turns=100_000)
    return str(result.final_output)


# agentrt run oai_agentrt:durable_stepper --input '{"input": "10"}'
durable_stepper = durable(agent, run_config=RUN_CONFIG, max_turns=100_000)

if __name__ == "__main__":
    print(asyncio.run(main(sys.argv[1])))
