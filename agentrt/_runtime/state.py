"""The in-memory state of a run this process drives (:class:`LiveRun`).

A run is in memory only while its driver has work: from the moment a driver is
scheduled until the run finishes, parks (waits on a reply, a timer or a child
run) or is evicted.  Everything here can be rebuilt from the store: the
machine from the newest checkpoint, ``results`` from the journal.
"""

from __future__ import annotations

import asyncio
from typing import Any  # Any: a run's payload and results are the agent's values

import attrs

from agentrt._sdk.agent import Agent
from agentrt.lowlevel import Machine

__all__ = ["START", "LiveRun"]

#: The payload of a run that has not been stepped yet.
START: Any = object()


@attrs.define(eq=False)
class LiveRun:
    """A run this runtime is driving or about to drive."""

    run_id: str
    agent: Agent
    machine: Machine | None = None
    seq: int = 0
    # The request the agent suspended with (or START): any request type, checked by pending.verdict.
    payload: Any = None
    # Member index -> (ok, value or exception), as journaled; values are the agent's own: any type.
    results: dict[int, tuple[bool, Any]] = attrs.field(factory=dict)
    # Member index -> the task making that call (or, for a call the driver makes itself, a future
    # that completes with it: see Dispatcher.call).
    inflight: dict[int, asyncio.Future[None]] = attrs.field(factory=dict)
    wakeup: asyncio.Event | None = None
    model_calls: int = 0  # model calls made here whose result is not journaled yet
    usage: dict[str, int] = attrs.field(factory=dict)  # the run's journaled usage (we hold its lease)
    epoch: int = 0  # the lease epoch this driver writes under (the store fences every other one)
    cancel_requested: bool = False  # throw agentrt.Cancelled at the pending await (once)
    cancel_thrown: bool = False
    deadline: float | None = None  # past it, throw agentrt.DeadlineExceeded at the pending await
    lease_lost: BaseException | None = None  # a write of an in-flight call was fenced off
    explicit: bool = False  # asked for by name (resume, reply, start): an unrestorable checkpoint is an error
    code_required: str | None = None  # what its newest checkpoint needs, as the run row says
    # (seq, idx, ok, blob) of tool results already delivered to ``results`` whose journal entry is
    # written by the next checkpoint's transaction (one commit per step; see Dispatcher.journal)
    unjournaled: list[tuple[int, int, bool, bytes]] = attrs.field(factory=list)
    # the digest of its newest checkpoint (b"": none yet), which the next one's chain names
    checkpoint_digest: bytes = b""
