"""Pure functions over a run's pending request: what to dispatch, when it is answered, what it waits on.

A suspended agent hands the runtime one *payload*: a single request (a tool
call, a model call, a sub-agent, ``ask``, ``sleep``) or a :class:`Gather` of
them.  Answers arrive as ``results``: member index -> ``(ok, value)``.  All
decisions over that pair live here, free of the event loop, the store and the
machine, so they are testable with plain values (``tests/runtime/test_pending.py``):

- :func:`verdict` -- is the payload answered, and with a value to send or an
  exception to throw?
- :func:`parked_on` -- what a run that must leave memory waits for.
- :func:`answered_in_store` -- the same question for a parked run, over its
  stored (JSON) pending summary.
- :func:`summarize` -- the JSON description kept with each checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal  # Any: request payloads and results are the agent's values

import attrs

from agentrt._sdk.llm import ModelCall
from agentrt._sdk.requests import REQUEST_TYPES, Ask, ChildRun, Fulfilled, Gather, Rejected, Sleep, ToolCall
from agentrt._sdk.schema import jsonable_or_repr
from agentrt.exceptions import ModelCallBudgetExceeded

__all__ = [
    "IN_PROCESS",
    "REQUESTS",
    "Results",
    "Verdict",
    "answered_in_store",
    "child_run_id",
    "describe_pending",
    "idempotency_key",
    "members",
    "parked_on",
    "summarize",
    "verdict",
    "waits_outside",
]

#: What an agent may suspend with.
REQUESTS: tuple[type, ...] = (*REQUEST_TYPES, ModelCall)
#: Members the driver runs itself (in flight in this process) rather than waiting for outside.
IN_PROCESS: tuple[type, ...] = (ToolCall, ModelCall)

#: Member index -> (ok, value or exception).
Results = Mapping[int, tuple[bool, Any]]


@attrs.frozen
class Verdict:
    """The answer to deliver: ``machine.step(value)`` when ``ok``, else ``machine.throw(value)``."""

    ok: bool
    value: Any  # the agent's own result value, or the exception it will see: any type by design


def members(payload: object) -> tuple[Any, ...]:
    """The requests of a payload: a gather's members, or the payload alone."""
    return payload.requests if isinstance(payload, Gather) else (payload,)


def waits_outside(payload: object) -> bool:
    """Whether some member is answered from outside this driver (a reply, a timer, a child run)."""
    return any(not isinstance(m, IN_PROCESS) for m in members(payload))


def idempotency_key(run_id: str, seq: int, idx: int, gather: bool) -> str:
    """The key a tool sees for the call at (seq, idx): stable across restarts (``RUN:SEQ[.IDX]``)."""
    return f"{run_id}:{seq}" + (f".{idx}" if gather else "")


def child_run_id(run_id: str, seq: int, idx: int, gather: bool) -> str:
    """The id of the sub-run started for the request at (seq, idx): stable, so a restart finds it."""
    return f"{run_id}.{seq}" + (f".{idx}" if gather else "")


def verdict(payload: object, results: Results) -> Verdict | None:
    """What to deliver for ``payload`` given the ``results`` so far, or None while it is not answered.

    A spent model-call budget ends the run whatever else arrived.  A gather
    delivers the list of values in member order; a settled gather delivers
    :class:`Fulfilled` / :class:`Rejected` for each member once all are in; an
    unsettled gather throws its first failed member as soon as it is known.
    """
    for ok, value in results.values():
        if not ok and isinstance(value, ModelCallBudgetExceeded):
            return Verdict(False, value)
    if isinstance(payload, Gather):
        n = len(payload.requests)
        if payload.settled:
            if len(results) < n:
                return None
            outcomes = [Fulfilled(v) if ok else Rejected(v) for ok, v in (results[i] for i in range(n))]
            return Verdict(True, outcomes)
        for i in range(n):
            if i in results and not results[i][0]:
                return Verdict(False, results[i][1])
        if len(results) < n:
            return None
        return Verdict(True, [results[i][1] for i in range(n)])
    if 0 not in results:
        return None
    ok, value = results[0]
    return Verdict(ok, value)


WaitingOn = Literal["child", "reply", "timer"]


def parked_on(payload: object, results: Results) -> tuple[WaitingOn, float | None]:
    """What a run that leaves memory waits on, and when a timer wakes it (``time.time()`` seconds).

    A child run outranks a question, which outranks a timer: the run is woken by
    whatever arrives, but is shown as waiting on the slowest kind of thing.
    """
    open_members = [m for i, m in enumerate(members(payload)) if i not in results]
    if any(isinstance(m, ChildRun) for m in open_members):
        return "child", None
    if any(isinstance(m, Ask) for m in open_members):
        return "reply", None
    wake_at = min((m.until for m in open_members if isinstance(m, Sleep)), default=None)
    return "timer", wake_at


def answered_in_store(pending: Mapping[str, Any] | None, oks: list[bool]) -> bool:
    """Whether a parked run whose stored pending summary is ``pending`` can go on, given the ``ok``
    flags of the results journaled for it so far (one per answered member)."""
    pending = pending or {}
    if pending.get("kind") != "gather":
        return True
    if len(oks) >= len(pending.get("requests", ())):
        return True
    return not pending.get("settled") and not all(oks)


def describe_pending(pending: Mapping[str, Any] | None) -> str:
    """A few words on a stored pending summary, for error messages."""
    pending = pending or {}
    kind = pending.get("kind")
    if kind is None:
        return "no pending request"
    if kind in ("tool", "agent"):
        return f"pending {kind} {pending.get('name')}"
    return f"pending {kind}"


def summarize(request: object) -> dict[str, Any]:
    """A JSON description of a pending request (kept with each checkpoint, shown by ``agentrt show``)."""
    if isinstance(request, ToolCall):
        return {"kind": "tool", "name": request.name, "kwargs": jsonable_or_repr(request.kwargs)}
    if isinstance(request, ChildRun):
        return {"kind": "agent", "name": request.name, "input": jsonable_or_repr(request.kwargs)}
    if isinstance(request, Ask):
        return {"kind": "ask", "prompt": jsonable_or_repr(request.prompt)}
    if isinstance(request, Sleep):
        return {"kind": "sleep", "seconds": request.seconds, "until": request.until}
    if isinstance(request, ModelCall):
        text = request.prompt if request.prompt is not None else str(request.messages[-1].get("content", ""))
        return {
            "kind": "llm",
            "method": request.kind,
            "src": request.src,
            "model": request.model,
            "prompt": text if len(text) <= 200 else text[:199] + "…",
        }
    if isinstance(request, Gather):
        return {
            "kind": "gather",
            "settled": request.settled,
            "requests": [summarize(r) for r in request.requests],
        }
    return {"kind": "unknown", "repr": repr(request)}
