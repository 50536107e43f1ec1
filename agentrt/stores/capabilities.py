"""What a store can do beyond the core of the :class:`~agentrt.stores.base.Store` protocol.

A store declares its extras in ``capabilities`` (a frozenset of :class:`Capability`); the runtime
reads them with :func:`capabilities` instead of probing with ``getattr``, and sees each extra's
methods through the small protocol beside it.  Re-exported by :mod:`agentrt.stores.base`.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Protocol  # Any: a checkpoint's pending request and events, as Store has them

__all__ = [
    "BatchedStream",
    "Capability",
    "Pipeline",
    "Pipelined",
    "QueuedStream",
    "SessionOwners",
    "StreamItem",
    "WatchedOwners",
    "capabilities",
]


class Capability(StrEnum):
    """What a store can do beyond the core of the :class:`Store` protocol, declared in its
    ``capabilities`` (read with :func:`capabilities`) instead of probed for with ``getattr``."""

    #: ``save_checkpoint(..., journal=...)`` journals results in the checkpoint's own transaction, so
    #: the runtime may hold a driver's result back until the checkpoint it leads to (one commit a step)
    JOURNAL_WITH_CHECKPOINT = "journal_with_checkpoint"
    #: ``queue_stream`` / ``flush_stream``: stream events ride on the store's next write transaction
    QUEUED_STREAM = "queued_stream"
    #: ``advertise_worker`` / ``list_workers`` / ``forget_worker`` keep the worker registry
    WORKER_REGISTRY = "worker_registry"
    #: ``append_streams(events)``: many runs' stream events in one transaction (the runtime sends the
    #: events of one turn of its loop together: one commit for many events, not one each)
    BATCHED_STREAM = "batched_stream"
    #: ``watched_owners()``: the lease owners a waiting worker watches, to claim a dead one's runs at once
    WATCHED_OWNERS = "watched_owners"
    #: the store holds a session for each lease owner made with ``make_owner(session=True)`` and counts
    #: one whose session ended as dead, on any machine (PostgreSQL: see ``agentrt.stores._pg_sessions``);
    #: ``end_owner_session(owner)`` when the owner's runtime closes
    OWNER_SESSIONS = "owner_sessions"
    #: ``open_pipeline()`` / ``save_checkpoint_pipelined(pipeline, ...)``: a step's checkpoint is made
    #: on the event loop, its statement sent with the other runs' of the same turn of the loop (no
    #: thread; see ``agentrt.stores._pg_pipeline``)
    PIPELINED = "pipelined"


class WatchedOwners(Protocol):
    """What a store that declares :attr:`Capability.WATCHED_OWNERS` has beside the :class:`Store` protocol."""

    def watched_owners(self) -> list[tuple[str, bool]]:
        """``(owner, gone)`` for each owner of a live lease on an unfinished run that the caller can
        judge: this machine's (the caller checks the pid) and, where the store knows, owners whose
        session ended (``gone``: dead wherever they ran)."""
        ...


class SessionOwners(Protocol):
    """What a store that declares :attr:`Capability.OWNER_SESSIONS` has beside the :class:`Store` protocol."""

    def end_owner_session(self, owner: str) -> None:
        """``owner``'s runtime closed: stop holding its session (the store handle lives on)."""
        ...


class QueuedStream(Protocol):
    """What a store that declares :attr:`Capability.QUEUED_STREAM` has beside the :class:`Store` protocol."""

    def queue_stream(self, run_id: str, kind: str, data_json: str) -> None:
        """Queue one stream event (its data already JSON text) for the store's next write transaction."""
        ...

    def flush_stream(self) -> None:
        """Write the queued stream events now (one transaction), if there are any."""
        ...


#: A stream event to write: ``(run_id, kind, data as JSON text, created_at)``.
StreamItem = tuple[str, str, str, float]


class BatchedStream(Protocol):
    """What a store that declares :attr:`Capability.BATCHED_STREAM` has beside the :class:`Store` protocol."""

    def append_streams(self, events: Sequence[StreamItem]) -> None:
        """Append the events of one or more runs in one transaction, each run's in the order given
        and numbered after its last id (as :meth:`Store.append_stream` numbers one)."""
        ...


class Pipeline(Protocol):
    """A store's pipeline of one event loop's statements (:attr:`Capability.PIPELINED`)."""

    async def aclose(self) -> None:
        """Wait for the statements in flight, then let the connection go."""
        ...

    def abandon(self) -> None:
        """Let the connection go at once, from outside its event loop (which has ended)."""
        ...


class Pipelined(Protocol):
    """What a store that declares :attr:`Capability.PIPELINED` has beside the :class:`Store` protocol."""

    def open_pipeline(self) -> Pipeline:
        """A pipeline for the calling event loop (used on that loop only, closed with ``aclose``)."""
        ...

    async def save_checkpoint_pipelined(
        self,
        pipeline: Any,
        run_id: str,
        owner: str,
        seq: int,
        blob: bytes,
        pending: Any,
        events: list[Any],
        *,
        epoch: int | None = None,
        journal: Sequence[tuple[int, int, bool, bytes]] = (),
        code_required: str | None = None,
    ) -> None:
        """``Store.save_checkpoint``, awaited on the loop (its statement sent with the loop's others)."""
        ...


def capabilities(store: object) -> frozenset[Capability]:
    """The capabilities ``store`` declares; a store that declares none (one written before they were
    declared) has none, and the runtime uses the protocol's core only."""
    declared = getattr(store, "capabilities", None)
    return declared if isinstance(declared, frozenset) else frozenset()
