"""The refund agent of each framework with its real OpenAI provider, answered over HTTP by agentrt's
OpenAI-compatible stand-in (``agentrt.testing.openai_server.FakeOpenAIServer``).

The providers are the frameworks' own (pydantic-ai's ``OpenAIChatModel`` + ``OpenAIProvider``, the
Agents SDK's ``OpenAIProvider`` on Chat Completions) pointed at ``AGENTRT_TEST_OPENAI_URL``, which the
test sets before importing this module (in its own process and in every process it starts).
:func:`respond` is the stand-in's responder: a pure function of the request, so a run restored
anywhere is answered as it was.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx2
from agents import Agent as SdkAgent
from agents import RunConfig, function_tool
from agents.models.openai_provider import OpenAIProvider as SdkOpenAIProvider
from openai import AsyncOpenAI
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from agentrt.adapters import openai_agents, pydantic_ai
from agentrt.testing.openai_server import Response, reply
from tests.adapters._calls import record, tool_call

URL = os.environ.get("AGENTRT_TEST_OPENAI_URL", "http://127.0.0.1:9/v1")
KEY = "sk-agentrt-test-never-sent-elsewhere"


def http_client() -> httpx2.AsyncClient:
    """The providers' HTTP client, without keep-alive: the tests run each agent under an event loop of
    its own, and a pooled connection would outlive the loop that opened it (a ResourceWarning)."""
    return httpx2.AsyncClient(limits=httpx2.Limits(max_keepalive_connections=0))


class RefundDecision(BaseModel):
    order_id: int
    refunded: bool
    note: str


def lookup_order(order_id: int) -> dict[str, Any]:
    """Look an order up."""
    tool_call("lookup_order", order_id=order_id)
    return {"order_id": order_id, "total": 25.0, "status": "delivered damaged"}


def refund(order_id: int, amount: float) -> str:
    """Refund an order (a person approves it first)."""
    tool_call("refund", order_id=order_id, amount=amount)
    return f"refunded {amount:.2f} on order {order_id}"


INSTRUCTIONS = "Look the order up, refund it (a person approves refunds), and report the decision."

# --------------------------------------------------------------------------- pydantic-ai

pai_orders = Agent(
    OpenAIChatModel(
        "pai-refunds", provider=OpenAIProvider(base_url=URL, api_key=KEY, http_client=http_client())
    ),
    output_type=[RefundDecision, DeferredToolRequests],
    instructions=INSTRUCTIONS,
)
pai_orders.tool_plain(lookup_order)
pai_orders.tool_plain(requires_approval=True)(refund)
durable_pai_orders = pydantic_ai.durable(pai_orders, name="pai_orders")

# --------------------------------------------------------------------------- OpenAI Agents SDK

oai_orders = SdkAgent(
    name="Refunds",
    instructions=INSTRUCTIONS,
    model="oai-refunds",
    tools=[function_tool(lookup_order), function_tool(refund, needs_approval=True)],
    output_type=RefundDecision,
)
RUN_CONFIG = RunConfig(
    model_provider=SdkOpenAIProvider(
        openai_client=AsyncOpenAI(api_key=KEY, base_url=URL, http_client=http_client()), use_responses=False
    ),
    tracing_disabled=True,
)
durable_oai_orders = openai_agents.durable(oai_orders, name="oai_orders", run_config=RUN_CONFIG)

# --------------------------------------------------------------------------- the stand-in's answers


def respond(body: Any) -> tuple[int, Response]:
    """The answer to one Chat Completions request, and its number in the call log."""
    messages = body.get("messages") or []
    done = [m for m in messages if m.get("role") == "tool"]
    n = record(f"model:{body.get('model')}#{len(done)}")
    if not done:
        return n, reply(tool_calls=[{"name": "lookup_order", "arguments": {"order_id": 7}, "id": "h1"}])
    if len(done) == 1:
        return n, reply(
            tool_calls=[{"name": "refund", "arguments": {"order_id": 7, "amount": 25.0}, "id": "h2"}]
        )
    decision = {"order_id": 7, "refunded": True, "note": str(done[-1].get("content"))}
    if any(t.get("function", {}).get("name") == "final_result" for t in body.get("tools") or []):
        return n, reply(tool_calls=[{"name": "final_result", "arguments": decision, "id": "h3"}])
    return n, reply(json.dumps(decision))
