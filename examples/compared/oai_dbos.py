"""The stepper agent on the OpenAI Agents SDK, made durable by DBOS (docs/adapters-compared.md)."""

import asyncio
import sys

from agents import Agent, RunConfig, function_tool
from dbos import DBOS
from dbos_openai_agents import DBOSRunner
from scripted import oai_model  # stand-in model

RUN_CONFIG = RunConfig(tracing_disabled=True)  # stand-in model


@function_tool
@DBOS.step()
def step(i: int) -> int:
    """One step of the work (an API call, in a real agent)."""
    return i * 2


# DBOSRunner replaces the run's model provider: the stand-in model is given as a Model instance
agent = Agent(name="stepper", model=oai_model(), tools=[step])  # stand-in model


@DBOS.workflow()
async def main(prompt: str) -> str:
    result = await DBOSRunner.run(agent, prompt, run_config=RUN_CONFIG, max_turns=100_000)
    return str(result.final_output)


if __name__ == "__main__":
    DBOS(config={"name": "stepper", "system_database_url": "sqlite:///stepper.sqlite"})
    DBOS.launch()
    print(asyncio.run(main(sys.argv[1])))
