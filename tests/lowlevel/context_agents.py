"""Agents that set context variables (a real module, so fresh processes can import them)."""

from __future__ import annotations

import contextvars
import decimal
import threading
from typing import Any

import structlog

from agentrt.lowlevel import suspend

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
ATTEMPTS: contextvars.ContextVar[list[int]] = contextvars.ContextVar("attempts")
HOLDER: contextvars.ContextVar[Any] = contextvars.ContextVar("holder", default=None)
SET_BY_HOST: contextvars.ContextVar[str] = contextvars.ContextVar("set_by_host", default="unset")


class Settings:
    """A context variable held as a class attribute: ``module:Settings.tenant``."""

    tenant: contextvars.ContextVar[str] = contextvars.ContextVar("tenant", default="nobody")


async def sets_then_awaits(request_id: str) -> tuple[Any, ...]:
    REQUEST_ID.set(request_id)
    ATTEMPTS.set([1])
    Settings.tenant.set("acme")
    answer = await suspend(("ask", request_id))
    ATTEMPTS.get().append(2)
    return REQUEST_ID.get(), ATTEMPTS.get(), Settings.tenant.get(), SET_BY_HOST.get(), answer


async def binds_log_context(user: str) -> tuple[Any, ...]:
    structlog.contextvars.bind_contextvars(user=user, step=1, **{"request-id": "r-1"})
    await suspend("logged")
    structlog.contextvars.bind_contextvars(step=2)
    return tuple(sorted(structlog.contextvars.get_contextvars().items()))


async def decimal_precision() -> str:
    decimal.getcontext().prec = 5
    await suspend("precision set")
    return str(decimal.Decimal(1) / decimal.Decimal(7))


async def holds_token() -> str | None:
    token = REQUEST_ID.set("temporary")
    await suspend("holding a token")
    REQUEST_ID.reset(token)
    return REQUEST_ID.get()


async def resets_before_the_await() -> str | None:
    token = REQUEST_ID.set("temporary")
    REQUEST_ID.reset(token)
    await suspend("token reset")
    return REQUEST_ID.get()


async def holds_a_lock_in_a_variable() -> None:
    HOLDER.set({"lock": threading.Lock()})
    await suspend("holding a lock")


async def sets_a_local_variable() -> str:
    local_var: contextvars.ContextVar[str] = contextvars.ContextVar("made_inside")
    local_var.set("x")
    await suspend("unnamed variable")
    return local_var.get()


async def reads_and_sets(value: str) -> tuple[Any, ...]:
    before = REQUEST_ID.get()
    REQUEST_ID.set(value)
    await suspend(("set", value))
    return before, REQUEST_ID.get()


TRACE_ID = 0x0AF7651916CD43DD8448EB211C80319C
SPAN_ID = 0xB7AD6B7169203331


def _attach_trace() -> None:
    """Make a span current, with baggage (OpenTelemetry is imported here, not by the module)."""
    from opentelemetry import baggage, trace
    from opentelemetry import context as otel_context
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    parent = NonRecordingSpan(SpanContext(TRACE_ID, SPAN_ID, is_remote=False, trace_flags=TraceFlags(1)))
    otel_context.attach(trace.set_span_in_context(parent, baggage.set_baggage("tenant", "acme")))


def _read_trace() -> list[Any]:
    """The current span's ids, the baggage, and the parent of a span started now."""
    from opentelemetry import baggage, trace
    from opentelemetry.sdk.trace import TracerProvider

    current = trace.get_current_span().get_span_context()
    with TracerProvider().get_tracer(__name__).start_as_current_span("after the restore") as span:
        parent = span.parent.span_id if span.parent is not None else None  # type: ignore[attr-defined]
    return [current.trace_id, current.span_id, baggage.get_baggage("tenant"), parent]


async def joins_a_trace() -> list[Any]:
    _attach_trace()
    await suspend("traced")
    return _read_trace()
