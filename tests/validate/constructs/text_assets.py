"""Importing text assets through the bundler's loader whitelist: Python reads package data
with `importlib.resources` (or a path) in synchronous code; only the resulting string
crosses the await."""

# construct: importing text assets (bundler loader whitelist)
# source: 000
# status: does not apply in Python
# expect: none
# runtime: completes

from importlib import resources
from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


def load_template() -> str:
    return resources.files("tests.validate.constructs").joinpath("__init__.py").read_text()


async def agent(task: Task) -> int:
    template = load_template()  # a str: fine across the await
    await task.tools.render(size=len(template))
    return len(template)


def main() -> Any:
    return run(agent, task("render"))


if __name__ == "__main__":
    print(main())
