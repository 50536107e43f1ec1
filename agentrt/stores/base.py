"""The store contract: what the runtime keeps about runs, and the errors of a store.

A store keeps, per run: one row (status, input, output or error, the pending
request, the lease), its checkpoints (``seq`` -> blob, newest ``retention``
kept), the journal of results (``seq``, ``idx`` -> encoded value or error) and
the non-blocking events (``seq``, ``n``).  All methods are synchronous and fast;
the runtime calls them from its event loop thread.  Two implementations:
:class:`~agentrt.stores.MemoryStore` (tests, embedding) and
:class:`~agentrt.stores.SqliteStore` (the default, safe across processes).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from typing import Any, Protocol, runtime_checkable

import attrs

from agentrt.exceptions import AgentrtError

__all__ = [
    "CheckpointInfo",
    "EventRecord",
    "LeaseLost",
    "NewRun",
    "RunRecord",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreSchemaTooNew",
    "StreamEvent",
    "add_usage",
    "make_owner",
    "owner_is_dead",
]

STATUSES = ("running", "waiting", "completed", "failed")
FINAL = ("completed", "failed")


class StoreError(AgentrtError):
    """The store cannot be used (locked, corrupt, from a newer agentrt, unreachable)."""


class StoreLocked(StoreError):
    """Another process holds the store's write lock for longer than the busy timeout."""


class StoreCorrupt(StoreError):
    """The store file is not a valid agentrt store."""


class StoreSchemaTooNew(StoreError):
    """The store was written by a newer agentrt (its schema version is higher than ours)."""


class LeaseLost(AgentrtError):
    """This process no longer holds the lease of a run it was driving (another process took it over)."""


@attrs.frozen
class NewRun:
    run_id: str
    agent: str
    input: Any  # JSON data
    parent_id: str | None = None
    parent_seq: int | None = None
    parent_idx: int | None = None


@attrs.frozen
class RunRecord:
    """One run as the store keeps it (the row; checkpoints, results and events are separate)."""

    run_id: str
    agent: str
    status: str
    input: Any
    output: Any = None
    error: dict[str, Any] | None = None
    error_blob: bytes | None = None
    seq: int = 0
    pending: Any = None
    waiting_on: str | None = None
    wake_at: float | None = None
    parent_id: str | None = None
    parent_seq: int | None = None
    parent_idx: int | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    lease_owner: str | None = None
    lease_expires: float | None = None
    #: Model usage summed over the run's journaled model results:
    #: ``model_calls``, ``input_tokens``, ``output_tokens``, ``total_tokens``.
    usage: dict[str, int] = attrs.field(factory=dict)

    @property
    def finished(self) -> bool:
        return self.status in FINAL

    def lease_live(self, now: float | None = None) -> bool:
        """Whether another process may be driving this run right now."""
        if self.lease_owner is None or self.lease_expires is None:
            return False
        if self.lease_expires <= (time.time() if now is None else now):
            return False
        return not owner_is_dead(self.lease_owner)


@attrs.frozen
class CheckpointInfo:
    seq: int
    size_bytes: int
    created_at: float
    pending: Any


@attrs.frozen
class EventRecord:
    seq: int
    n: int
    kind: str
    level: str | None
    data: Any
    created_at: float


@attrs.frozen
class StreamEvent:
    """One entry of a run's durable event stream: ``id`` counts 1, 2, 3... per run, across processes.

    The stream is what ``Runtime.events`` / ``Runtime.subscribe`` and the HTTP API's
    server-sent events read; ``kind`` is the runtime's event kind (``tool_started``, ``completed``).
    """

    id: int
    kind: str
    data: Any
    created_at: float


#: ``(seq, n, kind, level, data)`` as the runtime hands events to a store.
EventRow = tuple[int, int, str, str | None, Any]


@runtime_checkable
class Store(Protocol):
    """What the runtime needs from a store (see the module docstring)."""

    location: str
    retention: int | None

    def create_run(self, run: NewRun) -> RunRecord: ...
    def get_run(self, run_id: str) -> RunRecord | None: ...
    def list_runs(self, status: str | None = None, limit: int | None = None) -> list[RunRecord]: ...
    def children(self, run_id: str) -> list[RunRecord]: ...

    def acquire_lease(self, run_id: str, owner: str, ttl_seconds: float) -> RunRecord: ...
    def renew_leases(self, owner: str, run_ids: list[str], ttl_seconds: float) -> list[str]: ...
    def release_lease(self, run_id: str, owner: str) -> None: ...

    def save_checkpoint(
        self, run_id: str, owner: str, seq: int, blob: bytes, pending: Any, events: list[EventRow]
    ) -> None: ...
    def latest_checkpoint(self, run_id: str) -> tuple[int, bytes] | None: ...
    def get_checkpoint(self, run_id: str, seq: int) -> bytes | None: ...
    def list_checkpoints(self, run_id: str) -> list[CheckpointInfo]: ...

    def put_result(
        self, run_id: str, seq: int, idx: int, ok: bool, blob: bytes, usage: dict[str, int] | None = None
    ) -> bool:
        """Journal one result; False if (run, seq, idx) already has one.  ``usage`` (a model call's cost)
        is added to the run's usage in the same transaction, only when the result is new."""
        ...

    def get_results(self, run_id: str, seq: int) -> dict[int, tuple[bool, bytes]]: ...

    def set_waiting(
        self, run_id: str, owner: str, waiting_on: str, wake_at: float | None, events: list[EventRow]
    ) -> None: ...
    def finish_run(
        self,
        run_id: str,
        owner: str,
        status: str,
        *,
        output: Any = None,
        error: dict[str, Any] | None = None,
        error_blob: bytes | None = None,
        events: list[EventRow] = ...,
    ) -> bool: ...
    def add_events(self, run_id: str, events: list[EventRow]) -> None: ...
    def list_events(self, run_id: str, limit: int | None = None) -> list[EventRecord]: ...

    def append_stream(self, run_id: str, kind: str, data: Any) -> int:
        """Append one event to the run's durable stream; returns its id (the run's previous id + 1)."""
        ...

    def read_stream(self, run_id: str, after: int = 0, limit: int | None = None) -> list[StreamEvent]:
        """The run's stream events with ``id > after``, oldest first."""
        ...

    def set_tenant(self, run_id: str, tenant: str) -> None:
        """Record which tenant a run belongs to (the HTTP API scopes runs per tenant)."""
        ...

    def get_tenant(self, run_id: str) -> str | None: ...
    def tenant_runs(self, tenant: str) -> set[str]: ...
    def close(self) -> None: ...


_HOST = socket.gethostname()


def add_usage(total: dict[str, int] | None, delta: dict[str, int]) -> dict[str, int]:
    """``total + delta`` key by key (model usage counters)."""
    out = dict(total or {})
    for key, value in delta.items():
        out[key] = out.get(key, 0) + int(value)
    return out


def make_owner() -> str:
    """A lease owner id: ``host/pid/random`` (the pid lets this machine detect a dead owner)."""
    return f"{_HOST}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:  # a zombie (killed, not yet reaped) is dead for our purpose
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def owner_is_dead(owner: str) -> bool:
    """True when ``owner`` is a process on this machine that no longer runs."""
    parts = owner.split("/")
    if len(parts) != 3 or parts[0] != _HOST:
        return False
    try:
        pid = int(parts[1])
    except ValueError:
        return False
    if pid == os.getpid():
        return False
    return not _pid_alive(pid)
