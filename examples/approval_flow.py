"""A refund that needs a person's approval above a threshold (``task.ui.ask``).

    agentrt run examples/approval_flow.py:refund --input '{"order_id": "A-1001", "reason": "arrived broken"}'
    # -> waiting for a reply; the process exits and the run costs one row in the store
    agentrt resume RUN_ID --reply '{"approve": true, "note": "photos attached"}'

The run waits out of memory between the question and the reply, in another process if need
be.  ``issue_refund`` takes the run's idempotency key, as a payment API would, so a retry
after a crash cannot pay twice.
"""

from __future__ import annotations

from typing import Any

import attrs

from agentrt import Task, agent, progress, tool, ui_tools

ORDERS = {
    "A-1001": {"order_id": "A-1001", "customer": "mira", "amount_eur": 249.0, "item": "espresso machine"},
    "A-1002": {"order_id": "A-1002", "customer": "sam", "amount_eur": 19.5, "item": "milk jug"},
}
REFUNDS: dict[str, dict[str, Any]] = {}  # idempotency key -> refund (a payment provider's memory)


@tool
def orders_get(order_id: str) -> dict[str, Any]:
    """Look up an order.

    Args:
        order_id: The order's id, e.g. A-1001.
    """
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return dict(ORDERS[order_id])


@tool
def issue_refund(order_id: str, amount_eur: float, idempotency_key: str = "") -> dict[str, Any]:
    """Refund an order (idempotent: the same key never pays twice).

    Args:
        order_id: The order to refund.
        amount_eur: How much to refund.
    """
    if idempotency_key not in REFUNDS:
        REFUNDS[idempotency_key] = {
            "refund_id": f"R-{len(REFUNDS) + 1:04d}",
            "order_id": order_id,
            "amount_eur": amount_eur,
        }
    return REFUNDS[idempotency_key]


@attrs.frozen
class RefundRequest:
    order_id: str
    reason: str
    auto_approve_below_eur: float = 50.0


@attrs.frozen
class RefundOutcome:
    order_id: str
    refunded: bool
    refund_id: str | None
    decided_by: str
    note: str = ""


async def run(input: RefundRequest, task: Task) -> RefundOutcome:
    order = await task.tools.orders_get(order_id=input.order_id)
    decided_by, note = "policy", f"below {input.auto_approve_below_eur:g} EUR"
    if order["amount_eur"] >= input.auto_approve_below_eur:
        await task.ui.notify(progress(f"Refund of {order['amount_eur']:g} EUR needs approval"))
        reply = await task.ui.ask(
            {
                "question": f"Refund {order['amount_eur']:g} EUR to {order['customer']} "
                f"for the {order['item']}?",
                "reason": input.reason,
                "reply_with": {"approve": "true|false", "note": "optional"},
            }
        )
        approved = bool(reply.get("approve")) if isinstance(reply, dict) else bool(reply)
        decided_by, note = "person", reply.get("note", "") if isinstance(reply, dict) else ""
        if not approved:
            return RefundOutcome(order["order_id"], False, None, decided_by, note)
    refund = await task.tools.issue_refund(order_id=order["order_id"], amount_eur=order["amount_eur"])
    return RefundOutcome(order["order_id"], True, refund["refund_id"], decided_by, note)


refund = agent(
    input=RefundRequest,
    output=RefundOutcome,
    tools=[orders_get, issue_refund, *ui_tools],
    run=run,
    name="refund",
    description="Refunds an order, asking a person to approve large amounts.",
)
