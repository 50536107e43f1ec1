"""The stepper agent on pydantic-ai, made durable by DBOS (docs/adapters-compared.md)."""

import asyncio
import sys

from dbos import DBOS
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.usage import UsageLimits
from scripted import pai_model

LIMITS = UsageLimits(request_limit=None)
agent = Agent(pai_model(), name="stepper", capabilities=[DBOSDurability()])


@agent.tool_plain
@DBOS.step()
def step(i: int) -> int:
    """One step of the work (an API call, in a real agent)."""
    return i * 2


@DBOS.workflow()
async def main(prompt: str) -> str:
    result = await agent.run(prompt, usage_limits=LIMITS)
    return result.output


if __name__ == "__main__":
    DBOS(config={"name": "stepper", "system_database_url": "sqlite:///stepper.sqlite"})
    DBOS.launch()
    print(asyncio.run(main(sys.argv[1])))
