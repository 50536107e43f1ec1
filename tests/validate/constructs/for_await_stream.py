"""`for await` over a genuinely streaming source (a socket, an HTTP body) whose loop body
awaits: the stream's position lives in a foreign object no checkpoint can hold (AR108).
Read the stream inside a tool and return a list."""

# construct: `for await ... of` over a streaming source
# source: 001, 000
# status: reported
# expect: AR102, AR108
# runtime: not run (needs a network peer)

import asyncio
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task, host: str) -> int:
    reader, writer = await asyncio.open_connection(host, 80)  # AR102
    writer.close()
    count = 0
    async for line in reader:  # AR108: the loop body awaits below
        await task.tools.store(line=line.decode())
        count += 1
    return count


def main() -> Any:
    return run(agent, task("store"), "localhost", event_loop=True)


if __name__ == "__main__":
    print(main())
