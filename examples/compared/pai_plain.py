"""The stepper agent on pydantic-ai, as its author wrote it (docs/adapters-compared.md)."""

import asyncio
import sys

from pydantic_ai import Agent
from pydantic_ai.usage import UsageLimits
from scripted import pai_model

LIMITS = UsageLimits(request_limit=None)
agent = Agent(pai_model(), name="stepper")


@agent.tool_plain
def step(i: int) -> int:
    """One step of the work (an API call, in a real agent)."""
    return i * 2


async def main(prompt: str) -> str:
    result = await agent.run(prompt, usage_limits=LIMITS)
    return result.output


if __name__ == "__main__":
    print(asyncio.run(main(sys.argv[1])))
