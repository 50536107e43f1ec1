"""The stepper agent on pydantic-ai, made durable by Temporal (docs/adapters-compared.md)."""

import asyncio
import sys

from pydantic_ai import Agent
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin, PydanticAIWorkflow, TemporalDurability
from pydantic_ai.usage import UsageLimits
from scripted import pai_model
from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

LIMITS = UsageLimits(request_limit=None)
agent = Agent(pai_model(), name="stepper", capabilities=[TemporalDurability()])


@agent.tool_plain
def step(i: int) -> int:
    """One step of the work (an API call, in a real agent)."""
    return i * 2


@workflow.defn
class Stepper(PydanticAIWorkflow):
    __pydantic_ai_agents__ = (agent,)

    @workflow.run
    async def main(self, prompt: str) -> str:
        result = await agent.run(prompt, usage_limits=LIMITS)
        return result.output


async def run(prompt: str, address: str = "localhost:7233") -> str:
    client = await Client.connect(address, plugins=[PydanticAIPlugin()])
    async with Worker(client, task_queue="stepper", workflows=[Stepper]):
        return await client.execute_workflow(Stepper.main, prompt, id="stepper", task_queue="stepper")


if __name__ == "__main__":
    print(asyncio.run(run(sys.argv[1])))
