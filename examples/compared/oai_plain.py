"""The stepper agent on the OpenAI Agents SDK, as its author wrote it (docs/adapters-compared.md)."""

import asyncio
import sys

from agents import Agent, RunConfig, Runner, function_tool
from scripted import oai_provider

RUN_CONFIG = RunConfig(model_provider=oai_provider(), tracing_disabled=True)  # stand-in model


@function_tool
def step(i: int) -> int:
    """One step of the work (an API call, in a real agent)."""
    return i * 2


agent = Agent(name="stepper", model="gpt-5.2", tools=[step])


async def main(prompt: str) -> str:
    result = await Runner.run(agent, prompt, run_config=RUN_CONFIG, max_turns=100_000)
    return str(result.final_output)


if __name__ == "__main__":
    print(asyncio.run(main(sys.argv[1])))
