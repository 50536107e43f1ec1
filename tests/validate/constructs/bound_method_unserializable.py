"""A bound method of an object of an unmarked class (`const send = client.send`): the
method holds its object (AR106).  A signed blob (the default) carries the object through the
pickle protocol, so the run completes; an unsigned blob refuses it, and `agentrt check` still
reports it (issue 24).  Call it before the await, or look it up again after."""

# construct: externally produced function value: a bound method of a non-serializable object
# source: 001
# status: works natively
# expect: AR106
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


class Client:
    def send(self, text: str) -> str:
        return f"sent {text}"


async def agent(task: Task) -> str:
    send = Client().send  # AR106: bound to an instance of an unmarked class
    reply = await task.tools.compose(text="hi")
    return send(reply["text"])


def main() -> Any:
    return run(agent, task("compose"))


if __name__ == "__main__":
    print(main())
