"""Agents of the replay and rollback attacks (issue 25 item 6): a tool with a side effect, counted."""

from __future__ import annotations

import attrs

from agentrt import Task, agent, tool, ui_tools

#: (run id, amount) of every charge made in this process: a repeated charge is the attack's harm
CHARGES: list[tuple[str, int]] = []


@tool
def charge(amount: int, idempotency_key: str = "") -> int:
    """Charge ``amount`` (a side effect the journal must keep from happening twice)."""
    CHARGES.append((idempotency_key.split(":")[0], amount))
    return amount


@attrs.frozen
class Order:
    amount: int
    label: str = ""


@attrs.frozen
class Receipt:
    charged: int
    label: str


async def run_pay_twice(input: Order, task: Task) -> Receipt:
    first = await task.tools.charge(amount=input.amount)
    second = await task.tools.charge(amount=input.amount + 1)
    return Receipt(first + second, input.label)


pay_twice = agent(input=Order, output=Receipt, tools=[charge], run=run_pay_twice, name="pay_twice")


async def run_approve(input: Order, task: Task) -> Receipt:
    label = input.label  # a local the checkpoint carries: staging's must never finish in production
    answer = await task.ui.ask({"question": "charge?", "amount": input.amount})
    charged = await task.tools.charge(amount=input.amount) if answer == "yes" else 0
    return Receipt(charged, label)


approve = agent(input=Order, output=Receipt, tools=[charge, *ui_tools], run=run_approve, name="approve")


async def run_charge_then_ask(input: Order, task: Task) -> Receipt:
    charged = await task.tools.charge(amount=input.amount)
    answer = await task.ui.ask({"question": "anything else?", "charged": charged})
    return Receipt(charged, str(answer))


charge_then_ask = agent(
    input=Order, output=Receipt, tools=[charge, *ui_tools], run=run_charge_then_ask, name="charge_then_ask"
)
