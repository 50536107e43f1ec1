"""A small help-desk agent: two tools and a person's approval, the agent docs/embedding.md serves.

    uvicorn service:app          # service.py as docs/embedding.md shows it, beside this file

A ticket names an order; the agent looks the order up, asks a person whether to refund it (the
question carries a JSON schema, so the runs page shows it as a form), and refunds it when approved.
Both tools write one line per call to a ledger file (``$HELPDESK_LEDGER``, default
``helpdesk-ledger.jsonl``), standing in for a payment provider's records: after a crash you can see
that no call that completed was made again.  ``issue_refund`` takes the run's idempotency key, as a
payment API would, so the call that was in flight when the process died, made again on restart,
cannot pay twice.  ``$HELPDESK_REFUND_SECONDS`` makes the provider slow (a crash can land mid-call).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import attrs

from agentrt import Task, agent, tool, ui_tools

ORDERS = {
    "A-1001": {"order_id": "A-1001", "customer": "mira", "amount_eur": 249.0, "item": "espresso machine"},
    "A-1002": {"order_id": "A-1002", "customer": "sam", "amount_eur": 19.5, "item": "milk jug"},
}


def _ledger() -> str:
    return os.environ.get("HELPDESK_LEDGER", "helpdesk-ledger.jsonl")


def _write(line: dict[str, Any]) -> None:
    with open(_ledger(), "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def _refunded(key: str) -> dict[str, Any] | None:
    """The refund already made under ``key`` (what a payment provider remembers), or None."""
    if not os.path.exists(_ledger()):
        return None
    with open(_ledger(), encoding="utf-8") as f:
        for text in f:
            line = json.loads(text)
            if line.get("refund") and line.get("key") == key:
                return dict(line["refund"])
    return None


@tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order.

    Args:
        order_id: The order's id, e.g. A-1001.
    """
    _write({"call": "lookup_order", "order_id": order_id})
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
    _write({"call": "issue_refund", "key": idempotency_key})
    time.sleep(float(os.environ.get("HELPDESK_REFUND_SECONDS", "0")))
    done = _refunded(idempotency_key)
    if done is not None:
        return done
    refund = {"order_id": order_id, "amount_eur": amount_eur, "refund_id": f"R-{idempotency_key[-6:]}"}
    _write({"call": "issue_refund", "key": idempotency_key, "refund": refund})
    return refund


@attrs.frozen
class Ticket:
    order_id: str
    complaint: str


@attrs.frozen
class Outcome:
    order_id: str
    refunded_eur: float
    note: str


APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Refund the order"},
        "note": {"type": "string", "title": "Note to the customer"},
    },
    "required": ["approve"],
}


async def run_helpdesk(input: Ticket, task: Task) -> Outcome:
    order = await task.tools.lookup_order(order_id=input.order_id)
    await task.ui.notify(f"order {order['order_id']}: {order['item']}, {order['amount_eur']} EUR")
    answer = await task.ui.ask(
        {
            "question": f"Refund {order['amount_eur']} EUR to {order['customer']} for the "
            f"{order['item']}? They say: {input.complaint}",
            "schema": APPROVAL_SCHEMA,
        }
    )
    note = str(answer.get("note") or "") if isinstance(answer, dict) else ""
    if not (isinstance(answer, dict) and answer.get("approve")):
        return Outcome(input.order_id, 0.0, note or "not refunded")
    refund = await task.tools.issue_refund(order_id=input.order_id, amount_eur=order["amount_eur"])
    return Outcome(input.order_id, refund["amount_eur"], note or f"refund {refund['refund_id']}")


helpdesk = agent(
    input=Ticket,
    output=Outcome,
    tools=[lookup_order, issue_refund, *ui_tools],
    run=run_helpdesk,
    name="helpdesk",
)
