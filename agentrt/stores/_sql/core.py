"""``SqlCore``: the first half of the run state machine over SQL (:mod:`agentrt.stores._sql.store`
the rest): the engine's hooks, the store's identity, runs, leases, claims and cancellation.

The whole state machine -- create, claim (with per-agent limits), lease and fence, checkpoint,
rewrite, journal, park, block, reopen, finish, retention, events, the durable stream, tenants,
the worker registry and the store's identity -- is written once, in these two modules;
:class:`~agentrt.stores.SqliteStore` and :class:`~agentrt.stores.postgres.PostgresStore` add
only what is their engine's: connecting, the schema and its migrations, transactions, wake-ups,
error translation, a faster path for a step where the engine has one (SQLite's queued stream
events, PostgreSQL's one-statement checkpoint and result), and a :class:`Dialect`
(:mod:`agentrt.stores._sql.dialect`) that spells each statement for them.

Hooks an engine provides: ``_tx()`` (a write transaction, ``with``-ed, yielding a connection;
every statement a fenced write makes runs in it, after the run row is locked), ``_q()`` (a read),
``_statement()`` (a connection for a one-statement write), ``_notify(conn)`` (work may be
runnable: said inside the transaction that made it so),
``_driver_errors`` with ``_store_error()`` and ``_may_retry()`` (how :func:`translated` turns a
driver's error into a :class:`StoreError`), and ``_serialize_claims()`` (what makes claims of
limited agents take turns beyond the engine's own write lock).
"""

from __future__ import annotations

import functools
import os
import socket
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar  # Any: driver rows and connections; JSON

from agentrt.exceptions import LeaseHeld, RunExists, RunNotFound
from agentrt.keys import keyring_for_store
from agentrt.stores import _identity
from agentrt.stores._rows import RUN_COLUMNS, dumps, run_record
from agentrt.stores._sql.dialect import Dialect
from agentrt.stores._sql.packing import unpack
from agentrt.stores.base import (
    FINAL,
    SESSION_MARK,
    UNFINISHED,
    Capability,
    NewRun,
    RunRecord,
    RunStatus,
    StoreCorrupt,
    StoreError,
    claim_within_limits,
    has_session,
    lease_lost,
    owner_is_dead,
)

if TYPE_CHECKING:
    from agentrt.keys import Keyring

__all__ = ["HOST_PREFIX", "SqlCore", "translated"]

F = TypeVar("F", bound=Callable[..., Any])

#: A lease owner of this machine starts so (``make_owner``): its pid can be checked here.
HOST_PREFIX = socket.gethostname() + "/"
_UNFINISHED = "(" + ", ".join(f"'{s}'" for s in UNFINISHED) + ")"
_FINAL = "(" + ", ".join(f"'{s}'" for s in FINAL) + ")"
#: The distinct owners of this machine (``?``: the prefix's length, :data:`HOST_PREFIX`) or with a
#: session (``?``: ``'%~s'``) holding a live lease (``?``: now) on an unfinished run.
_WATCHED_OWNERS = (
    "SELECT DISTINCT lease_owner FROM runs WHERE lease_owner IS NOT NULL "
    "AND (substr(lease_owner, 1, ?) = ? OR lease_owner LIKE ?) "
    f"AND lease_expires > ? AND status IN {_UNFINISHED}"
)
#: The run row's columns a fenced write reads, locked (:meth:`SqlCore._locked`), in this order.
_LOCKED = "lease_owner, status, epoch, seq, pending, cancel_requested, usage"


def _judged(owners: list[str]) -> list[str]:
    """The owners of ``owners`` to judge by their sessions: those with one, not of this process
    (alive, whatever became of its session: it takes its lock again)."""
    mine = f"{HOST_PREFIX}{os.getpid()}/"
    return [o for o in owners if has_session(o) and not o.startswith(mine)]


def translated(method: F) -> F:
    """Turn the driver's errors raised by ``method`` into :class:`StoreError` (``_store_error``);
    a call the engine says may be made again (``_may_retry``: a dropped connection) is made once more."""

    @functools.wraps(method)
    def wrapper(self: SqlCore, *args: Any, **kwargs: Any) -> Any:
        try:
            try:
                return method(self, *args, **kwargs)
            except self._driver_errors as exc:
                if not self._may_retry(exc):
                    raise
                return method(self, *args, **kwargs)
        except self._driver_errors as exc:
            raise self._store_error(exc) from None

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps method's signature; mypy sees a new one


class SqlCore:
    """The engine's hooks, identity, runs, leases, claims and cancellation (see the module docstring)."""

    dialect: ClassVar[Dialect]
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.WORKER_REGISTRY, Capability.BATCHED_STREAM, Capability.WATCHED_OWNERS}
    )
    #: the driver's error classes (``sqlite3.Error``, ``psycopg.Error``)
    _driver_errors: ClassVar[tuple[type[BaseException], ...]]
    #: the driver's error for a row a key refuses (``sqlite3.IntegrityError``, ``psycopg.IntegrityError``)
    _conflict_errors: ClassVar[tuple[type[BaseException], ...]]

    location: str
    retention: int | None
    read_only: bool
    keyring: Keyring | None
    #: the store's identity (``agentrt show --store S --json`` prints it), sealed into every blob
    store_id: str
    #: the store was migrated from an agentrt without store identities: blobs sealed for no store are
    #: taken (signed marker; see ``agentrt.stores._identity``)
    legacy_blobs: bool
    #: the store as messages name it (a quoted path, a URL without its password)
    _label: str
    _pruned_at: float = 0.0  # when this handle last deleted long-gone worker rows

    # ------------------------------------------------------------------ the engine's hooks

    def _tx(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _statement(self) -> AbstractContextManager[Any]:
        """A connection for a write that is one statement (it commits by itself where the engine
        can: one round trip); by default a transaction."""
        return self._tx()

    def _notify(self, conn: Any) -> None:
        raise NotImplementedError

    def _store_error(self, exc: BaseException) -> StoreError:
        raise NotImplementedError

    def _may_retry(self, exc: BaseException) -> bool:
        return False

    def _hold_owner(self, owner: str) -> None:
        """Called before a lease is written for ``owner``: a store with owner sessions
        (:attr:`Capability.OWNER_SESSIONS`) makes sure it holds the owner's session first."""

    def _gone_owners(self, conn: Any, owners: list[str]) -> set[str]:
        """The owners of ``owners`` (made with a session) whose session ended: dead wherever they ran
        (read on ``conn``, or on a connection of the engine's when it is None)."""
        return set()

    def _serialize_claims(self, conn: Any, agents: list[str]) -> None:
        """Make claims that may take runs of ``agents`` (limited) take turns; the engine's write lock
        may already do so."""

    #: the statement ``text`` in the engine's spelling (``dialect.sql``, bound once per engine class)
    _sql: Callable[[str], str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "dialect" in cls.__dict__:
            cls._sql = staticmethod(cls.dialect.sql)

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._q(self.dialect.sql(sql), params)

    # ------------------------------------------------------------------ identity and heads

    def _load_identity(self) -> None:
        """``store_id`` (the identity blobs are sealed for) and whether it takes legacy blobs."""
        meta = dict(self._read("SELECT key, value FROM meta WHERE key IN ('store_id', 'legacy_blobs')"))
        store_id = meta.get("store_id")
        if not isinstance(store_id, str) or not store_id:
            raise StoreCorrupt(
                f"store {self._label} has no store id in its {self.dialect.table('meta')} table (it was "
                f"edited); keep the {self.dialect.container} aside for inspection and move its runs with "
                "`agentrt move` from a copy"
            )
        self.store_id = store_id
        self.legacy_blobs = _identity.legacy_marker_valid(
            keyring_for_store(self) if "legacy_blobs" in meta else None, store_id, meta.get("legacy_blobs")
        )

    def _seal_migrated(self, conn: Any, ring: Keyring) -> None:
        """Migration to store identities: each run already here gets its signed head, and the store a
        signed note that it holds blobs sealed for no store (which it then keeps accepting)."""
        (store_id,) = conn.execute(self._sql("SELECT value FROM meta WHERE key = 'store_id'")).fetchone()
        rows = conn.execute(
            self._sql(
                "SELECT r.run_id, r.seq, r.status, c.blob FROM runs r LEFT JOIN checkpoints c "
                "ON c.run_id = r.run_id "
                "AND c.seq = (SELECT max(seq) FROM checkpoints WHERE run_id = r.run_id)"
            )
        ).fetchall()
        for run_id, seq, status, blob in rows:
            digest = _identity.blob_digest(unpack(blob)) if blob is not None else b""
            head = _identity.make_head(ring, store_id, run_id, int(seq), digest, status in FINAL)
            conn.execute(self._sql("UPDATE runs SET head = ? WHERE run_id = ?"), (head, run_id))
        conn.execute(
            self._sql(
                "INSERT INTO meta (key, value) VALUES ('legacy_blobs', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            ),
            (_identity.legacy_marker(ring, store_id),),
        )

    def _head(self, run_id: str, seq: int, blob: bytes | None, finished: bool) -> str:
        """The signed head of ``run_id`` with newest checkpoint ``seq`` (``blob``; None: none)."""
        digest = _identity.blob_digest(blob) if blob is not None else b""
        return _identity.make_head(keyring_for_store(self), self.store_id, run_id, seq, digest, finished)

    def _head_at(self, conn: Any, run_id: str, seq: int, finished: bool) -> str:
        row = conn.execute(
            self._sql("SELECT blob FROM checkpoints WHERE run_id = ? AND seq = ?"), (run_id, seq)
        ).fetchone()
        return self._head(run_id, seq, unpack(row[0]) if row else None, finished)

    # ------------------------------------------------------------------ runs

    @translated
    def create_run(self, run: NewRun) -> RunRecord:
        if run.owner is not None:
            self._hold_owner(run.owner)
        now = time.time()
        with self._tx() as conn:
            rows = conn.execute(
                self._sql(
                    "INSERT INTO runs (run_id, agent, status, input, parent_id, parent_seq, parent_idx, "
                    "created_at, updated_at, priority, lease_owner, lease_expires, epoch, deadline, head) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    f"ON CONFLICT (run_id) DO NOTHING RETURNING {RUN_COLUMNS}"
                ),
                (
                    run.run_id,
                    run.agent,
                    str(run.status),
                    dumps(run.input),
                    run.parent_id,
                    run.parent_seq,
                    run.parent_idx,
                    now,
                    now,
                    run.priority,
                    run.owner,
                    now + run.ttl_seconds if run.owner else None,
                    1 if run.owner else 0,
                    run.deadline,
                    self._head(run.run_id, 0, None, False),
                ),
            ).fetchall()
            if not rows:
                raise RunExists(
                    f"a run with id {run.run_id!r} already exists in {self.location}; choose another run_id"
                )
            # The tenant row is written with the run, never before: an older row for this id (written
            # by a version that recorded tenants before validating) must not claim the new run.
            conn.execute(self._sql("DELETE FROM tenants WHERE run_id = ?"), (run.run_id,))
            if run.tenant is not None:
                conn.execute(
                    self._sql("INSERT INTO tenants (run_id, tenant) VALUES (?, ?)"), (run.run_id, run.tenant)
                )
            if run.owner is None:
                self._notify(conn)
        return run_record(rows[0])

    @translated
    def get_run(self, run_id: str) -> RunRecord | None:
        rows = self._read(f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,))
        return run_record(rows[0]) if rows else None

    @translated
    def list_runs(self, status: str | None = None, limit: int | None = None) -> list[RunRecord]:
        sql = f"SELECT {RUN_COLUMNS} FROM runs"
        params: tuple[Any, ...] = ()
        if status is not None:
            sql += " WHERE status = ?"
            params = (str(status),)
        sql += " ORDER BY created_at DESC, run_id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [run_record(r) for r in self._read(sql, params)]

    @translated
    def children(self, run_id: str) -> list[RunRecord]:
        rows = self._read(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE parent_id = ? ORDER BY created_at", (run_id,)
        )
        return [run_record(r) for r in rows]

    # ------------------------------------------------------------------ leases

    @translated
    def acquire_lease(self, run_id: str, owner: str, ttl_seconds: float) -> RunRecord:
        self._hold_owner(owner)
        with self._tx() as conn:
            row = conn.execute(
                self._sql("SELECT lease_owner, lease_expires FROM runs WHERE run_id = ? FOR UPDATE"),
                (run_id,),
            ).fetchone()
            if row is None:
                raise RunNotFound(run_id, self.location)
            held_by, expires = row
            now = time.time()
            if (
                held_by not in (None, owner)
                and expires is not None
                and expires > now
                and not owner_is_dead(held_by)
            ):
                raise LeaseHeld(run_id, held_by, expires - now)
            rows = conn.execute(
                self._sql(
                    "UPDATE runs SET lease_owner = ?, lease_expires = ?, "
                    "epoch = CASE WHEN lease_owner = ? THEN epoch ELSE epoch + 1 END "
                    f"WHERE run_id = ? RETURNING {RUN_COLUMNS}"
                ),
                (owner, now + ttl_seconds, owner, run_id),
            ).fetchall()
        return run_record(rows[0])

    @translated
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
        if limit <= 0 or agents == []:
            return []
        self._hold_owner(owner)
        now = time.time()
        limits = limits or {}
        skip_code = sorted(set(lacking or ()))
        with self._tx() as conn:  # claims are serialized (a write lock, or row locks and SKIP LOCKED)
            dead = self._dead_owners(conn, now)
            driven = self._driven(conn, sorted(limits), dead, now) if limits else {}
            ids = claim_within_limits(
                lambda full, skip, want: self._runnable(conn, now, dead, agents, full, skip, want, skip_code),
                driven,
                limits,
                limit,
            )
            if not ids:
                return []
            chosen, params = self.dialect.one_of("run_id", ids)
            rows = conn.execute(
                self._sql(
                    "UPDATE runs SET lease_owner = ?, lease_expires = ?, epoch = epoch + 1, "
                    "status = CASE WHEN status = 'queued' THEN 'running' ELSE status END "
                    f"WHERE {chosen} RETURNING {RUN_COLUMNS}"
                ),
                (owner, now + ttl_seconds, *params),
            ).fetchall()
        order = {run_id: i for i, run_id in enumerate(ids)}
        return sorted((run_record(r) for r in rows), key=lambda r: order[r.run_id])

    def _dead_owners(self, conn: Any, now: float) -> list[str]:
        """Owners of live-looking leases that are dead: processes of this machine which no longer
        run, and owners whose session ended (a store with owner sessions)."""
        rows = conn.execute(self._sql(_WATCHED_OWNERS), self._watched_params(now)).fetchall()
        owners = [o for (o,) in rows]
        gone = self._gone_owners(conn, _judged(owners))
        return [o for o in owners if o in gone or owner_is_dead(o)]

    @staticmethod
    def _watched_params(now: float) -> tuple[Any, ...]:
        return (len(HOST_PREFIX), HOST_PREFIX, "%" + SESSION_MARK, now)

    @translated
    def watched_owners(self) -> list[tuple[str, bool]]:
        """``(owner, gone)`` of the owners of live leases on unfinished runs that are of this machine
        (``host/pid/nonce``: the caller checks the pid) or have a session (``gone``: it ended).  A
        waiting worker reads them often (:mod:`agentrt._runtime.worker`), so a killed owner's runs are
        claimed within a fraction of a second.  One read on the lease owner index (and, with owner
        sessions held, one of ``pg_locks``)."""
        owners = [o for (o,) in self._read(_WATCHED_OWNERS, self._watched_params(time.time()))]
        gone = self._gone_owners(None, _judged(owners))
        return [(o, o in gone) for o in owners]

    def _runnable(
        self,
        conn: Any,
        now: float,
        dead: list[str],
        agents: list[str] | None,
        full: set[str],
        skip: list[str],
        limit: int,
        lacking: list[str],
    ) -> list[tuple[str, str]]:
        """``(run_id, agent)`` of up to ``limit`` runnable runs, best first (see agentrt.stores.base),
        locked where the engine locks rows (``SKIP LOCKED``: racing claimers pass over each other's).

        Runnable also: a parent parked on a sub-run that finished while its outcome was never
        journaled for the parent (a worker died between the two writes).  ``lacking``: code the
        claimer cannot restore (its runs are passed over).
        """
        one_of = self.dialect.one_of
        sql = (
            f"SELECT run_id, agent FROM runs r WHERE status IN {_UNFINISHED} "
            "AND (lease_owner IS NULL OR lease_expires IS NULL OR lease_expires <= ?"
        )
        params: list[Any] = [now]
        if dead:
            cond, values = one_of("lease_owner", dead)
            sql += f" OR {cond}"
            params += values
        sql += (
            ") AND (status <> 'waiting' OR (wake_at IS NOT NULL AND wake_at <= ?) "
            "OR (waiting_on = 'child' AND EXISTS (SELECT 1 FROM runs c WHERE c.parent_id = r.run_id "
            f"AND c.parent_seq = r.seq AND c.status IN {_FINAL} "
            "AND NOT EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.run_id AND x.seq = r.seq "
            "AND x.idx = COALESCE(c.parent_idx, 0)))))"
        )
        params.append(now)
        for column, values_, negate in (
            ("agent", agents, False),
            ("agent", sorted(full), True),
            ("run_id", skip, True),
        ):
            if values_ is None or (negate and not values_):
                continue
            cond, values = one_of(column, values_)
            sql += f" AND NOT ({cond})" if negate else f" AND {cond}"
            params += values
        if lacking:
            cond, values = one_of("code_required", lacking)
            sql += f" AND (code_required IS NULL OR NOT ({cond}))"
            params += values
        sql += " ORDER BY priority DESC, created_at, run_id LIMIT ? FOR UPDATE SKIP LOCKED"
        params.append(int(limit))
        return [(r[0], r[1]) for r in conn.execute(self._sql(sql), params).fetchall()]

    def _driven(self, conn: Any, agents: list[str], dead: list[str], now: float) -> dict[str, int]:
        """How many runs of each of ``agents`` (limited) a live process drives (a live lease) right now."""
        self._serialize_claims(conn, agents)
        cond, params = self.dialect.one_of("agent", agents)
        sql = (
            f"SELECT agent, count(*) FROM runs WHERE status IN {_UNFINISHED} AND {cond} "
            "AND lease_owner IS NOT NULL AND lease_expires > ?"
        )
        params.append(now)
        if dead:
            cond, values = self.dialect.one_of("lease_owner", dead)
            sql += f" AND NOT ({cond})"
            params += values
        rows = conn.execute(self._sql(sql + " GROUP BY agent"), params).fetchall()
        return {agent: int(n) for agent, n in rows}

    @translated
    def renew_leases(self, owner: str, run_ids: list[str], ttl_seconds: float) -> list[str]:
        if not run_ids:
            return []
        self._hold_owner(owner)
        expires = time.time() + ttl_seconds
        chosen, params = self.dialect.one_of("run_id", run_ids)
        # The rows are locked in the order of their run ids (by code point), as a pipelined batch of
        # checkpoints locks them (agentrt.stores._pg_pipeline): two transactions that lock the same
        # runs in one order cannot deadlock.
        with self._tx() as conn:
            rows = conn.execute(
                self._sql(
                    "UPDATE runs SET lease_expires = ? WHERE run_id IN (SELECT run_id FROM runs "
                    f"WHERE lease_owner = ? AND {chosen} ORDER BY run_id{self.dialect.code_point_order} "
                    "FOR UPDATE) RETURNING run_id"
                ),
                (expires, owner, *params),
            ).fetchall()
        held = {r[0] for r in rows}
        return [run_id for run_id in run_ids if run_id not in held]

    @translated
    def release_lease(self, run_id: str, owner: str) -> None:
        with self._tx() as conn:
            rows = conn.execute(
                self._sql(
                    "UPDATE runs SET lease_owner = NULL, lease_expires = NULL "
                    "WHERE run_id = ? AND lease_owner = ? RETURNING status, wake_at"
                ),
                (run_id, owner),
            ).fetchall()
            if rows and (rows[0][0] in (RunStatus.QUEUED, RunStatus.RUNNING) or rows[0][1] is not None):
                self._notify(conn)

    def _locked(self, conn: Any, run_id: str) -> tuple[Any, ...]:
        """The run row's :data:`_LOCKED` columns, the row locked until the transaction ends."""
        row: tuple[Any, ...] | None = conn.execute(
            self._sql(f"SELECT {_LOCKED} FROM runs WHERE run_id = ? FOR UPDATE"), (run_id,)
        ).fetchone()
        if row is None:
            raise RunNotFound(run_id, self.location)
        return row

    def _check_owner(self, conn: Any, run_id: str, owner: str, epoch: int | None) -> tuple[Any, ...]:
        """The locked row (:meth:`_locked`) when ``owner`` holds the run's lease at ``epoch``; else
        :class:`LeaseLost`, a fenced write refused in its own transaction."""
        row = self._locked(conn, run_id)
        if row[0] != owner or (epoch is not None and row[2] != epoch):
            raise lease_lost(run_id, row[0], row[2], epoch)
        return row

    def _check_owner_or_finished(
        self, conn: Any, run_id: str, owner: str, epoch: int | None
    ) -> tuple[Any, ...] | None:
        """Like :meth:`_check_owner`, but None when the run has finished (nothing is left to write)."""
        row = self._locked(conn, run_id)
        if row[1] in FINAL:
            return None
        if row[0] != owner or (epoch is not None and row[2] != epoch):
            raise lease_lost(run_id, row[0], row[2], epoch)
        return row

    # ------------------------------------------------------------------ cancellation and wake-ups

    @translated
    def request_cancel(self, run_id: str) -> list[str]:
        now = time.time()
        with self._tx() as conn:
            self._locked(conn, run_id)
            rows = conn.execute(
                self._sql(
                    "WITH RECURSIVE tree(id) AS (SELECT CAST(? AS TEXT) UNION ALL "
                    "SELECT c.run_id FROM runs c JOIN tree ON c.parent_id = tree.id) "
                    "UPDATE runs SET cancel_requested = TRUE, updated_at = ?, "
                    "lease_owner = NULL, lease_expires = NULL, "
                    "wake_at = CASE WHEN status = 'waiting' THEN ? ELSE wake_at END, "
                    "status = CASE WHEN status = 'blocked' OR (status = 'queued' AND NOT EXISTS "
                    "(SELECT 1 FROM checkpoints k WHERE k.run_id = runs.run_id)) "
                    "THEN 'cancelled' ELSE status END "
                    f"WHERE run_id IN (SELECT id FROM tree) AND status NOT IN {_FINAL} RETURNING run_id"
                ),
                (run_id, now, now),
            ).fetchall()
            self._notify(conn)
        return [r[0] for r in rows]

    @translated
    def next_wake_at(self) -> float | None:
        rows = self._read("SELECT min(wake_at) FROM runs WHERE status = 'waiting' AND wake_at IS NOT NULL")
        return rows[0][0] if rows else None
