"""The store contract: what the runtime keeps about runs, and the errors of a store.

A store keeps, per run: one row (status, input, output or error, the pending
request, the lease), its checkpoints (``seq`` -> blob, newest ``retention``
kept; pruned in batches while a run runs, see :func:`prune_due`), the journal of
results (``seq``, ``idx`` -> encoded value or error) and the non-blocking events
(``seq``, ``n``).  All methods are synchronous and fast; the runtime calls them
from its event loop thread.  Three implementations, one state machine
(:mod:`agentrt.stores._sql`) over two engines:
:class:`~agentrt.stores.SqliteStore` (the default, safe across processes on one
machine), :class:`~agentrt.stores.MemoryStore` (SQLite in memory: tests, embedding)
and :class:`~agentrt.stores.postgres.PostgresStore` (a fleet of workers).

Leases and fencing.  A process drives a run only while it holds the run's lease
(owner + expiry).  Every acquisition by a new owner bumps the run's ``epoch``, a
fencing token: each write of a checkpoint, result, event or finish may carry the
writer's ``owner`` and ``epoch`` and then fails with :class:`LeaseLost`, in the same
transaction, when another process has claimed the run since.  A worker paused
past its lease (SIGSTOP, a long GC, a network partition) can therefore never
overwrite what its successor wrote.  Results delivered from outside a driver (a
reply, a child's outcome, a timer) carry no epoch: they are first-write-wins per
``(run, seq, idx)``, so a duplicate delivery is harmless.

Runnable runs (what :meth:`Store.claim_runnable` hands to workers): ``queued``;
``running`` with no live lease (its owner died, or the lease expired, or its
process closed); ``waiting`` with ``wake_at`` due -- a timer, or a reply, a
child's outcome or a cancel request that arrived while no process drove it
(those set ``wake_at`` to now in the transaction that records them); and ``waiting``
on a sub-run that finished while its outcome never reached the parent (the process
that finished it died between the two writes).

Per-agent limits (``claim_runnable(limits=...)``): a claim takes no run of an agent
that already has ``limits[agent]`` runs driven (a live lease) anywhere in the store.
Claims that may take such runs are serialized (SQLite's write lock; an advisory lock
per limited agent on PostgreSQL), so racing workers cannot both take the last slot.

Code a run needs (``claim_runnable(lacking=...)``).  Each checkpoint write records on the run
row what code its checkpoint needs to restore (``RunRecord.code_required``: one canonical text,
the Python minor and every ``module:qualname`` with its bytecode digest; see
:mod:`agentrt._codec._requirement`).  A worker passes the texts it has found it cannot meet, and
the claim passes over those runs, so old and new workers share one store during a rolling
deploy.  A run with no text (queued, or checkpointed before this was recorded) is claimed by any.

Blocked runs (``block_run``).  A run whose next checkpoint was refused (``CannotCrossAwait`` and
the like), or whose newest checkpoint the code loaded now cannot restore when it was asked for by
name, is ``blocked``: not finished, not claimable, its newest checkpoint and its journal kept as
they are (the results journaled at that checkpoint are delivered from the journal when it goes
on), its lease released, and ``RunRecord.blocked`` says why (``{"code", "message", "function",
"lineno", "variable"}``).  It goes on when a driver takes it again and writes (a checkpoint, a
wait, an end: each clears ``blocked``), or when ``reopen_run`` (``agentrt retry``, ``agentrt
upgrade``) makes it ``running`` again.  Claims never take it; see :mod:`agentrt._runtime.unblock`
for who does.

``rewrite_checkpoint`` is ``agentrt upgrade``'s write: a checkpoint moved to new code replaces
the newest one under its seq, and the blob it replaces is kept (``replaced_checkpoints``), so
``agentrt diff`` can compare the two; or a run restarted at an earlier safe point continues
from a new checkpoint after every existing one.

Identity and heads (``agentrt.stores._identity``).  Each store has a ``store_id``, made with it,
that the runtime seals into every blob it writes there; and each run row a signed ``head`` (its
newest checkpoint's sequence and digest, finished or not), which the store itself writes in the
transaction of every write that changes those (create, ``save_checkpoint``, ``rewrite_checkpoint``,
``reopen_run``, ``finish_run``) with its keyring.  A store without ``store_id`` (one written outside
agentrt) gets neither, and the runtime then checks neither.

The worker registry (``advertise_worker`` / ``list_workers`` / ``forget_worker``): each worker
keeps one row about itself -- what it runs, the agents it loaded, the code requirements it has
judged it carries and lacks (:class:`~agentrt.stores.registry.WorkerInfo`) -- so ``agentrt
workers`` can show a mixed fleet and the runs no live worker can resume.  It is written at a
worker's start, on change and once per lease, never per step.
"""

from __future__ import annotations

import os
import shlex
import socket
import time
import uuid
from collections.abc import Collection, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable  # Any: input and output are user values

import attrs

if TYPE_CHECKING:
    from agentrt.keys import Keyring

# The store errors live with every other error; re-exported here, where store code looks for them.
from agentrt.exceptions import LeaseLost as LeaseLost
from agentrt.exceptions import StoreCorrupt as StoreCorrupt
from agentrt.exceptions import StoreError as StoreError
from agentrt.exceptions import StoreLocked as StoreLocked
from agentrt.exceptions import StoreNotFound as StoreNotFound
from agentrt.exceptions import StoreSchemaTooNew as StoreSchemaTooNew
from agentrt.stores._limits import check_limits as check_limits
from agentrt.stores._limits import claim_within_limits as claim_within_limits
from agentrt.stores._limits import take_within_limits as take_within_limits
from agentrt.stores.capabilities import BatchedStream as BatchedStream
from agentrt.stores.capabilities import Capability as Capability
from agentrt.stores.capabilities import QueuedStream as QueuedStream
from agentrt.stores.capabilities import SessionOwners as SessionOwners
from agentrt.stores.capabilities import StreamItem as StreamItem
from agentrt.stores.capabilities import WatchedOwners as WatchedOwners
from agentrt.stores.capabilities import capabilities as capabilities
from agentrt.stores.registry import WorkerInfo

__all__ = [
    "FINAL",
    "SESSION_MARK",
    "STATUSES",
    "BatchedStream",
    "Capability",
    "CheckpointInfo",
    "EventRecord",
    "LeaseLost",
    "NewRun",
    "QueuedStream",
    "ReplacedCheckpoint",
    "RunRecord",
    "RunStatus",
    "SessionOwners",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreNotFound",
    "StoreSchemaTooNew",
    "StreamEvent",
    "StreamItem",
    "WatchedOwners",
    "WorkerInfo",
    "add_usage",
    "capabilities",
    "check_limits",
    "claim_within_limits",
    "has_session",
    "is_answered",
    "lease_lost",
    "make_owner",
    "owner_is_dead",
    "prune_due",
    "require_blob_key",
    "take_within_limits",
]


class RunStatus(StrEnum):
    """A run's status.  Each member is equal to the text a run row, ``RunRecord.status`` and the JSON
    views hold (``RunStatus.WAITING == "waiting"``), so stored rows and documents do not change."""

    QUEUED = "queued"
    RUNNING = "running"
    WAITING = "waiting"
    BLOCKED = "blocked"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


#: Every status as plain text (command-line choices, the HTTP API's documents).
STATUSES = tuple(status.value for status in RunStatus)
#: The statuses a run never leaves by itself (``reopen_run`` is the way back).
FINAL = (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)
#: The statuses of a run a worker may still drive (claims look only among these).
UNFINISHED = (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.WAITING)


def lease_lost(run_id: str, held_by: str | None, epoch: int, mine: int | None) -> LeaseLost:
    """The :class:`LeaseLost` a fenced write raises (one wording for every store)."""
    who = f"by {held_by}" if held_by else "by no process (its lease was released)"
    at = f" (lease epoch {epoch}, this writer holds epoch {mine})" if mine is not None else ""
    return LeaseLost(
        f"run {run_id!r} is now driven {who}{at}; this process stops driving it and its write was refused"
    )


@attrs.frozen
class NewRun:
    """A run to record.  ``status`` is ``running`` (the creator drives it) or ``queued`` (for a worker).

    With ``owner`` the run is created already leased to it (``ttl_seconds``) at
    epoch 1, so no worker can claim it between its creation and its first step.
    """

    run_id: str
    agent: str
    input: Any  # JSON data
    parent_id: str | None = None
    parent_seq: int | None = None
    parent_idx: int | None = None
    status: str = "running"
    priority: int = 0
    owner: str | None = None
    ttl_seconds: float = 0.0
    #: When the run is cancelled (``time.time()`` seconds); None: never.
    deadline: float | None = None
    #: The tenant the run belongs to (the HTTP API's tenant hook), written in the same transaction as
    #: the run, which also drops any older tenant row for its id; None: the run belongs to no tenant.
    tenant: str | None = None


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
    #: The fencing token: bumped each time a new owner acquires or claims the run.
    epoch: int = 0
    #: Higher runs are claimed first by workers.
    priority: int = 0
    #: ``agentrt cancel`` asked for it; the driver raises ``agentrt.Cancelled`` at the pending await.
    cancel_requested: bool = False
    #: Past this time (``time.time()`` seconds) the run is cancelled (``agentrt.DeadlineExceeded``).
    deadline: float | None = None
    #: What code the newest checkpoint needs to restore (see the module docstring); None: unknown.
    code_required: str | None = None
    #: Why the run is ``blocked`` (``code``, ``message``, ``function``, ``lineno``, ``variable``); else None.
    blocked: dict[str, Any] | None = None
    #: ``(column, why)`` when a column of the stored row could not be decoded (bad JSON, wrong type):
    #: that field holds its default and the views report the run as damaged instead of failing.
    damaged: tuple[str, str] | None = None
    #: The run's signed head (newest checkpoint, finished or not; see ``agentrt.stores._identity``),
    #: as stored; the runtime verifies it before it drives the run.  None: the row holds none.
    head: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINAL

    @property
    def interrupted(self) -> bool:
        """``running`` but no live process drives it (owner dead, lease expired or released):
        a worker will pick it up from its last checkpoint."""
        return self.status == "running" and not self.lease_live()

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
class ReplacedCheckpoint:
    """A checkpoint blob that ``agentrt upgrade`` replaced by its move to new code (kept for ``diff``):
    checkpoint ``seq`` as it was before the upgrade recorded by the event ``(seq, n)``."""

    seq: int
    n: int
    blob: bytes
    created_at: float


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

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What the store can do beyond this protocol's core (see :class:`Capability`)."""
        ...

    def create_run(self, run: NewRun) -> RunRecord: ...
    def get_run(self, run_id: str) -> RunRecord | None: ...
    def list_runs(self, status: str | None = None, limit: int | None = None) -> list[RunRecord]: ...
    def children(self, run_id: str) -> list[RunRecord]: ...

    def acquire_lease(self, run_id: str, owner: str, ttl_seconds: float) -> RunRecord:
        """Take the run's lease (``LeaseHeld`` if another live process holds it).  The returned
        record's ``epoch`` is the fencing token for this owner's writes; it is bumped unless
        ``owner`` already held the lease."""
        ...

    def claim_runnable(
        self,
        owner: str,
        ttl_seconds: float,
        limit: int,
        *,
        agents: list[str] | None = None,
        limits: Mapping[str, int] | None = None,
        lacking: Collection[str] | None = None,
    ) -> list[RunRecord]:
        """Atomically lease up to ``limit`` runnable runs (see the module docstring) to ``owner``,
        highest priority first, then oldest; each claim bumps the run's epoch (and a ``queued``
        run becomes ``running``).  Two claimers
        never get the same run.  ``agents``: only runs of these agent specs.  ``limits``: agent
        spec -> how many of its runs may be driven at once across every process of the store.
        ``lacking``: ``code_required`` texts the claimer cannot meet; runs needing one are passed over."""
        ...

    def renew_leases(self, owner: str, run_ids: list[str], ttl_seconds: float) -> list[str]:
        """Extend ``owner``'s leases on ``run_ids`` in one statement; returns the ids it no longer holds."""
        ...

    def release_lease(self, run_id: str, owner: str) -> None: ...

    def request_cancel(self, run_id: str) -> list[str]:
        """Ask the run and its unfinished descendants to stop; returns their ids.  A ``queued`` run
        (never started) becomes ``cancelled`` at once; the others lose their lease (their driver's
        next write is fenced off) and become runnable, so a worker throws ``Cancelled`` into them."""
        ...

    def next_wake_at(self) -> float | None:
        """The earliest ``wake_at`` among waiting runs (when a worker must look again)."""
        ...

    def wait_for_work(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds until the store may hold new runnable work (True), or not."""
        ...

    def save_checkpoint(
        self,
        run_id: str,
        owner: str,
        seq: int,
        blob: bytes,
        pending: Any,
        events: list[EventRow],
        *,
        epoch: int | None = None,
        journal: Sequence[tuple[int, int, bool, bytes]] = (),
        code_required: str | None = None,
    ) -> None:
        """Store checkpoint ``seq`` (fenced) and make it the run's newest; ``code_required`` is what
        restoring it needs (the run row keeps the newest checkpoint's; None: unknown).  ``journal``
        holds ``(seq, idx, ok, blob)`` results journaled in the same transaction (a
        :class:`StoreError` if one is there already); the runtime passes one only to a store that
        declares :attr:`Capability.JOURNAL_WITH_CHECKPOINT`."""
        ...

    def rewrite_checkpoint(
        self,
        run_id: str,
        owner: str,
        seq: int,
        blob: bytes,
        pending: Any,
        event: tuple[str, str | None, Any],
        *,
        journal: Sequence[tuple[int, bool, bytes]] = (),
        code_required: str | None = None,
        epoch: int | None = None,
    ) -> int:
        """``agentrt upgrade``'s write, in one fenced transaction; returns the ``n`` of ``event``
        (``(kind, level, data)``, recorded at ``seq`` after the events already there).

        When ``seq`` is the run's newest checkpoint (a move to new code), ``blob`` replaces it and the
        replaced blob is kept (:meth:`replaced_checkpoints`); the run's status, pending request and
        wake-up are left as they are.  When ``seq`` is newer than every checkpoint (a restart at an
        earlier safe point, or ``agentrt retry``), it is a new checkpoint: ``journal`` (``(idx, ok, blob)``)
        is journaled at ``seq`` and the run becomes ``running`` at ``seq`` with ``pending`` (a blocked or
        failed run too: its finding, error and output are cleared), so a worker continues it once
        ``owner`` releases it.  Any other ``seq`` is a :class:`StoreError`."""
        ...

    def block_run(
        self,
        run_id: str,
        owner: str,
        blocked: dict[str, Any],
        events: list[EventRow],
        *,
        epoch: int | None = None,
    ) -> bool:
        """Make the run ``blocked`` with ``blocked`` as its finding (fenced), release its lease and keep
        its checkpoints, journal, ``seq`` and pending request as they are.  False: it had finished."""
        ...

    def reopen_run(
        self, run_id: str, owner: str, event: tuple[str, str | None, Any], *, epoch: int | None = None
    ) -> int:
        """Make a ``blocked`` or finished run ``running`` again at its newest checkpoint (fenced: ``owner``
        holds its lease, and keeps it): its finding, error, output and wake-up are cleared.  ``event``
        (``(kind, level, data)``) is recorded at its ``seq``; returns its ``n``.  ``agentrt retry`` of a run
        with no checkpoint and ``agentrt upgrade`` of a blocked run use it."""
        ...

    def replaced_checkpoints(self, run_id: str) -> list[ReplacedCheckpoint]:
        """The blobs ``rewrite_checkpoint`` replaced, oldest first (pruned with their checkpoint)."""
        ...

    def latest_checkpoint(self, run_id: str) -> tuple[int, bytes] | None: ...
    def get_checkpoint(self, run_id: str, seq: int) -> bytes | None: ...
    def list_checkpoints(self, run_id: str) -> list[CheckpointInfo]: ...

    def put_result(
        self,
        run_id: str,
        seq: int,
        idx: int,
        ok: bool,
        blob: bytes,
        usage: dict[str, int] | None = None,
        *,
        owner: str | None = None,
        epoch: int | None = None,
    ) -> bool:
        """Journal one result; False if (run, seq, idx) already has one.  ``usage`` (a model call's cost)
        is added to the run's usage in the same transaction, only when the result is new.  With
        ``owner``/``epoch`` (a driver's own tool or model result) the write is fenced; without (a
        reply, a child's outcome, a timer) a waiting run whose request is now answered is woken."""
        ...

    def get_results(self, run_id: str, seq: int) -> dict[int, tuple[bool, bytes]]: ...

    def set_waiting(
        self,
        run_id: str,
        owner: str,
        waiting_on: str,
        wake_at: float | None,
        events: list[EventRow],
        *,
        epoch: int | None = None,
    ) -> None:
        """Park the run.  If its request was answered (or a cancel requested) meanwhile, ``wake_at``
        becomes now, so a worker takes it up again."""
        ...

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
        epoch: int | None = None,
    ) -> bool: ...
    def add_events(
        self, run_id: str, events: list[EventRow], *, owner: str | None = None, epoch: int | None = None
    ) -> None: ...
    def list_events(self, run_id: str, limit: int | None = None) -> list[EventRecord]: ...

    def append_stream(self, run_id: str, kind: str, data: Any) -> int:
        """Append one event to the run's durable stream; returns its id (the run's previous id + 1)."""
        ...

    def read_stream(self, run_id: str, after: int = 0, limit: int | None = None) -> list[StreamEvent]:
        """The run's stream events with ``id > after``, oldest first."""
        ...

    def set_tenant(self, run_id: str, tenant: str) -> None:
        """Record which tenant a run belongs to (the HTTP API scopes runs per tenant); a run's first
        tenant stays (a second call for the same run changes nothing)."""
        ...

    def get_tenant(self, run_id: str) -> str | None: ...
    def tenant_runs(self, tenant: str) -> set[str]: ...

    def advertise_worker(self, info: WorkerInfo) -> None:
        """Record (insert or replace) the registry row of the worker ``info.owner``, within the
        registry's bounds (:func:`~agentrt.stores.registry.bounded`).  Now and then (at most every
        few minutes per store handle) it also deletes a small batch of rows not seen for hours."""
        ...

    def list_workers(self) -> list[WorkerInfo]:
        """Every registry row still kept, live or not (``WorkerInfo.live``), oldest start first."""
        ...

    def forget_worker(self, owner: str) -> None:
        """Delete the registry row of ``owner`` (a worker that stops cleanly); none: nothing happens."""
        ...

    def close(self) -> None: ...


_HOST = socket.gethostname()


def add_usage(total: dict[str, int] | None, delta: dict[str, int]) -> dict[str, int]:
    """``total + delta`` key by key (model usage counters)."""
    out = dict(total or {})
    for key, value in delta.items():
        out[key] = out.get(key, 0) + int(value)
    return out


def prune_due(seq: int, retention: int | None) -> bool:
    """Whether saving checkpoint ``seq`` also prunes the run's old checkpoints and journal entries.

    Pruning is batched: once every ``retention // 4`` checkpoints (every one when ``retention < 8``),
    so a running run holds at most a quarter more than the newest ``retention``; a run that waits or
    finishes is pruned to exactly ``retention`` then.  A DELETE at every step was the largest single
    cost of a step on SQLite after its two commits."""
    if retention is None or seq <= retention:
        return False
    return (seq - retention) % max(1, retention // 4) == 0


def is_answered(pending: Any, results: dict[int, bool]) -> bool:
    """Whether a parked request (``pending``, as the runtime summarizes it) can go on, given the
    journaled results at its seq (``idx -> ok``): one result, or for a gather all of them, or a
    failure when the gather is not ``settled``."""
    if not results:
        return False
    pending = pending if isinstance(pending, dict) else {}
    if pending.get("kind") != "gather":
        return True
    if len(results) >= len(pending.get("requests", ())):
        return True
    return not pending.get("settled") and not all(results.values())


BLOB_KEY_ENV = "AGENTRT_BLOB_KEY"
BLOB_KEY_FILE_ENV = "AGENTRT_BLOB_KEY_FILE"


def require_blob_key(location: str) -> Keyring:
    """The keyring of a shared store, which refuses to open without one (checkpoints travel between
    machines there, so no process may make up a key of its own on first use).

    The key comes from ``AGENTRT_BLOB_KEY`` or the key file named by ``AGENTRT_BLOB_KEY_FILE``
    (see :func:`agentrt.keys.require_key`).
    """
    from agentrt.keys import env_keyring, require_key

    path = os.environ.get(BLOB_KEY_FILE_ENV)
    if path and env_keyring() is None:
        try:
            with open(path, "rb") as f:
                empty = not f.read().strip()
        except OSError as exc:
            raise StoreError(
                f"store {location}: cannot read the blob key file {path!r} ({exc.strerror}); "
                f"fix {BLOB_KEY_FILE_ENV} or make a key file with `agentrt keygen --file PATH`"
            ) from None
        if empty:
            raise StoreError(
                f"store {location}: the blob key file {path!r} is empty; put a key in it with "
                f"`agentrt keygen --file {shlex.quote(path)}`"
            )
    return require_key(location, path or None)


#: The end of a lease owner id whose liveness is a database session (``make_owner(session=True)``).
SESSION_MARK = "~s"


def make_owner(*, session: bool = False) -> str:
    """A lease owner id: ``host/pid/random`` (the pid lets this machine detect a dead owner);
    ``session``: ending :data:`SESSION_MARK`, for a store that declares
    :attr:`Capability.OWNER_SESSIONS` (it holds a session for the owner: other machines see it die)."""
    return f"{_HOST}/{os.getpid()}/{uuid.uuid4().hex[:8]}{SESSION_MARK if session else ''}"


def has_session(owner: str) -> bool:
    """Whether ``owner`` was made with ``make_owner(session=True)``."""
    return owner.endswith(SESSION_MARK)


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
