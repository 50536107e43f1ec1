"""The issue's Done-when agent; it ports the OpenAI cookbook's "Customer service" triage loop
(a ticket classified by a structured-output completion, a lookup over HTTP, a drafted reply).

It holds, across every await and with no ``@agentrt.serializable`` anywhere: its own dataclasses
(``Ticket``, ``Draft``) and enum (``Priority``), its own pydantic models (``Triage``, ``Customer``),
SDK response objects (``ChatCompletion``), reopenable clients (an ``httpx.AsyncClient`` and an
``openai.AsyncOpenAI`` pointed at a closed localhost port; the API key comes from the environment
and no request is ever sent: the model and HTTP calls are the suspensions) and a context variable
(``REQUEST_ID``; registered twice: with a request id, which needs context variables in the
checkpoint, and without one).
"""

from __future__ import annotations

import contextvars
import enum
import json
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, Field

from tests.corpus.protocol import Machine, suspend
from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port
from tests.realcode._sdk import chat_completion

AGENT = "support_desk"
REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("support_desk_request_id", default="-")


class Priority(enum.IntEnum):
    LOW = 1
    NORMAL = 2
    URGENT = 3


class Triage(BaseModel):
    category: Literal["billing", "shipping", "technical"]
    priority: Priority
    summary: str = Field(max_length=120)


class Customer(BaseModel):
    id: str
    name: str
    plan: str
    orders: list[str] = []


@dataclass
class Ticket:
    id: str
    subject: str
    body: str
    notes: list[str] = field(default_factory=list)


@dataclass
class Draft:
    ticket: Ticket
    triage: Triage
    text: str = ""


def _request_id() -> str:
    return REQUEST_ID.get()


@port(
    "T-1042",
    None,
    name="support_desk_without_context",
    example="OpenAI cookbook: customer service triage (structured output, HTTP lookup, drafted reply)",
    answer="Hi Ada, your refund for order 7781 is on its way (billing, URGENT)",
)
@port(
    "T-1042",
    "req-7f3a",
    example="OpenAI cookbook: customer service triage, with a request id in a context variable",
    answer="Hi Ada, your refund for order 7781 is on its way (billing, URGENT)",
)
async def support_desk(ticket_id: str, request_id: str | None) -> tuple[Any, ...]:
    if request_id is not None:
        REQUEST_ID.set(request_id)
    http = httpx.AsyncClient(
        base_url="http://127.0.0.1:9/helpdesk/", timeout=5.0, headers={"User-Agent": "desk/1.0"}
    )
    llm = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", max_retries=0)
    raw = await tool(AGENT, "GET", url=str(http.base_url.join(f"tickets/{ticket_id}")))
    ticket = Ticket(**raw)
    ticket.notes.append(f"opened by {_request_id()}")
    completion: ChatCompletion = await model(
        AGENT,
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": "Triage the ticket."},
            {"role": "user", "content": ticket.body},
        ],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "Triage", "schema": Triage.model_json_schema()},
        },
    )
    triage = Triage.model_validate_json(completion.choices[0].message.content or "")
    customer = Customer.model_validate(await tool(AGENT, "GET", url=str(http.base_url.join("customers/ada"))))
    draft = Draft(ticket, triage)
    reply: ChatCompletion = await model(
        AGENT,
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": f"Write a reply for {customer.name} ({triage.priority.name})."},
            {"role": "user", "content": ticket.body},
        ],
    )
    draft.text = f"{reply.choices[0].message.content} ({triage.category}, {triage.priority.name})"
    ticket.notes.append(f"drafted by {_request_id()}")
    await tool(AGENT, "POST", url=str(http.base_url.join(f"tickets/{ticket_id}/drafts")), text=draft.text)
    return (
        draft.text,
        draft,
        customer,
        completion,
        reply.usage,
        ticket.notes,
        (type(http).__name__, str(http.base_url), http.timeout.read, http.headers["User-Agent"]),
        (type(llm).__name__, str(llm.base_url), llm.max_retries, llm.api_key == _env_key()),
        REQUEST_ID.get(),
    )


def _env_key() -> str:
    import os

    return os.environ["OPENAI_API_KEY"]


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        method, arguments = request
        url = arguments["url"]
        if method == "GET" and url.endswith("/tickets/T-1042"):
            return {"id": "T-1042", "subject": "Refund", "body": "I was charged twice for order 7781."}
        if method == "GET" and url.endswith("/customers/ada"):
            return {"id": "c_ada", "name": "Ada", "plan": "pro", "orders": ["7781"]}
        return {"status": 201}
    messages = request[0]["messages"]
    if "response_format" in request[0]:
        triage = {"category": "billing", "priority": 3, "summary": "Double charge on order 7781"}
        return chat_completion(1, content=json.dumps(triage), model="gpt-4o-mini-2024-07-18")
    name = messages[0]["content"].split("for ")[1].split(" (")[0]
    return chat_completion(
        3, content=f"Hi {name}, your refund for order 7781 is on its way", model="gpt-4o-mini-2024-07-18"
    )


async def _probe() -> str:
    REQUEST_ID.set("probe")
    await suspend("probe")
    return REQUEST_ID.get()


def context_probe() -> bool:
    """Whether a context variable set in a run survives ``Machine.set(m.get())`` (each step under
    a context of its own, so the caller's context cannot make it pass)."""
    m = Machine(_probe)
    contextvars.Context().run(m.step)
    blob = m.get()
    done = contextvars.Context().run(lambda: Machine.set(blob).step(None))
    return done.value == "probe"
