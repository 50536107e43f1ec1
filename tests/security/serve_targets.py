"""Agents the HTTP attack tests start (module level, so ``agentrt serve --import serve_targets`` and
``agentrt submit serve_targets:ATTR`` in another process find them).

``order`` starts the sub-run ``secret`` (id ``<order's id>.1``), which waits on a question holding
the order's prompt: the data a squatting tenant must never see.
"""

from __future__ import annotations

import attrs

from agentrt import Task, agent, ui_tools


@attrs.frozen
class Prompt:
    prompt: str = "nothing"


@attrs.frozen
class Reply:
    reply: object


async def run_secret(input: Prompt, task: Task) -> Reply:
    return Reply(await task.ui.ask({"question": input.prompt}))


secret = agent(input=Prompt, output=Reply, tools=[*ui_tools], run=run_secret, name="secret")


async def run_order(input: Prompt, task: Task) -> Reply:
    return await task.tools.secret(prompt=input.prompt)


order = agent(input=Prompt, output=Reply, tools=[secret, *ui_tools], run=run_order, name="order")
