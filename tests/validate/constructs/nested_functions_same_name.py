"""Two nested functions sharing a name: each `def` statement makes its own function
object bound by ordinary Python rules, so nothing collides; closures are
checkpointed with their code and cells."""

# construct: two nested functions sharing a name
# source: 001, 000
# status: works natively
# expect: none
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task, flag: bool) -> list[str]:
    if flag:

        def label(x: str) -> str:
            return f"first:{x}"

        first = await task.tools.fetch(which="a")
        out = [label(first["which"])]
    else:
        out = []

    def label(x: str) -> str:  # the same name, a different function
        return f"second:{x}"

    second = await task.tools.fetch(which="b")
    out.append(label(second["which"]))
    return out


def main() -> Any:
    return run(agent, task("fetch"), True)


if __name__ == "__main__":
    print(main())
