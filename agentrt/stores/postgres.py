"""``PostgresStore``: the Store protocol on PostgreSQL, for a fleet of workers on many machines.

Why PostgreSQL rather than a home-made coordinator: row locks, ``FOR UPDATE SKIP
LOCKED`` and ``LISTEN/NOTIFY`` already give exactly what workers need.

- **Claiming.** :meth:`claim_runnable` picks runnable rows with ``FOR UPDATE SKIP
  LOCKED`` and leases them in the same statement (bumping each run's ``epoch``), so
  racing workers never get the same run and never wait on each other.
- **Fencing.** A write that carries ``owner``/``epoch`` first locks its run row
  (``SELECT ... FOR UPDATE``) and checks the epoch in the same transaction; a claim
  by another worker must wait for that lock, so a write either commits before the
  takeover or fails with :class:`LeaseLost` -- a worker paused past its lease
  can never write.
- **Wake-ups.** Transactions that make work runnable ``NOTIFY agentrt_work``;
  :meth:`wait_for_work` ``LISTEN``s on a dedicated connection, and the worker's
  own slow poll (and the next timer's ``wake_at``) is the fallback.
- **Leases** are renewed for all of a worker's runs in one statement.
- **Keys.** A shared store refuses to open without a blob key (see
  :func:`~agentrt.stores.base.require_blob_key`).

Tables are prefixed ``agentrt_``; the schema version lives in ``agentrt_meta`` and
migrations run under an advisory lock, so many workers may start at once.
Connection errors become :class:`StoreError` naming the server; a pooled
connection that died (server restart, ``pg_terminate_backend``) is replaced on
the next use.
"""

from __future__ import annotations

import functools
import json
import math
import re
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any, TypeVar  # Any: psycopg rows and connections; JSON columns

from agentrt.exceptions import LeaseHeld, RunExists, RunNotFound
from agentrt.keys import keyring_for_store
from agentrt.stores import _identity
from agentrt.stores._rows import json_column, load_json_or_damaged
from agentrt.stores.base import (
    FINAL,
    CheckpointInfo,
    EventRecord,
    EventRow,
    NewRun,
    ReplacedCheckpoint,
    RunRecord,
    StoreCorrupt,
    StoreError,
    StoreNotFound,
    StoreSchemaTooNew,
    StreamEvent,
    add_usage,
    claim_within_limits,
    is_answered,
    lease_lost,
    owner_is_dead,
    prune_due,
    require_blob_key,
)
from agentrt.stores.registry import (
    PRUNE_AFTER_SECONDS,
    PRUNE_BATCH,
    PRUNE_EVERY_SECONDS,
    WorkerInfo,
    bounded,
    from_json,
    to_json,
)
from agentrt.stores.sqlite import _HOST_PREFIX, _RUN_COLUMNS, SqliteStore, _dumps

try:
    import psycopg
    from psycopg_pool import ConnectionPool
except ImportError:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]  # the module is absent without the postgres extra
    ConnectionPool = None  # type: ignore[assignment,misc]  # the class is absent without the postgres extra

__all__ = ["SCHEMA_VERSION", "PostgresStore"]

F = TypeVar("F", bound=Callable[..., Any])
CHANNEL = "agentrt_work"

#: Each entry migrates the schema from version i to i + 1.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE agentrt_runs (
        run_id           TEXT PRIMARY KEY,
        agent            TEXT NOT NULL,
        status           TEXT NOT NULL,
        input            TEXT NOT NULL,
        output           TEXT,
        error            TEXT,
        error_blob       BYTEA,
        seq              INTEGER NOT NULL DEFAULT 0,
        pending          TEXT,
        waiting_on       TEXT,
        wake_at          DOUBLE PRECISION,
        parent_id        TEXT,
        parent_seq       INTEGER,
        parent_idx       INTEGER,
        created_at       DOUBLE PRECISION NOT NULL,
        updated_at       DOUBLE PRECISION NOT NULL,
        lease_owner      TEXT,
        lease_expires    DOUBLE PRECISION,
        usage            TEXT,
        epoch            BIGINT NOT NULL DEFAULT 0,
        priority         INTEGER NOT NULL DEFAULT 0,
        cancel_requested BOOLEAN NOT NULL DEFAULT FALSE
    );
    CREATE INDEX agentrt_runs_by_status ON agentrt_runs (status, created_at);
    CREATE INDEX agentrt_runs_by_parent ON agentrt_runs (parent_id);
    CREATE INDEX agentrt_runs_by_wake ON agentrt_runs (wake_at) WHERE wake_at IS NOT NULL;
    CREATE INDEX agentrt_runs_by_owner ON agentrt_runs (lease_owner) WHERE lease_owner IS NOT NULL;
    CREATE INDEX agentrt_runs_claimable ON agentrt_runs (priority DESC, created_at)
        WHERE status IN ('queued', 'running', 'waiting');
    CREATE TABLE agentrt_checkpoints (
        run_id     TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        blob       BYTEA NOT NULL,
        pending    TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE agentrt_results (
        run_id     TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        idx        INTEGER NOT NULL,
        ok         BOOLEAN NOT NULL,
        blob       BYTEA NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (run_id, seq, idx)
    );
    CREATE TABLE agentrt_events (
        run_id     TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        n          INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        level      TEXT,
        data       TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (run_id, seq, n)
    );
    """,
    # 1 -> 2: the durable event stream (one id sequence per run) and the tenant of each run
    """
    CREATE TABLE agentrt_stream (
        run_id     TEXT NOT NULL,
        id         INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        data       TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (run_id, id)
    );
    CREATE TABLE agentrt_tenants (
        run_id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL
    );
    CREATE INDEX agentrt_tenants_by_tenant ON agentrt_tenants (tenant);
    """,
    # 2 -> 3: per-run deadlines
    """
    ALTER TABLE agentrt_runs ADD COLUMN deadline DOUBLE PRECISION;
    """,
    # 3 -> 4: the code each run's newest checkpoint needs (claims of a mixed fleet), and the
    # checkpoint blobs agentrt upgrade replaced (agentrt diff compares them with the moved ones)
    """
    ALTER TABLE agentrt_runs ADD COLUMN code_required TEXT;
    CREATE TABLE agentrt_replaced_checkpoints (
        run_id     TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        n          INTEGER NOT NULL,
        blob       BYTEA NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (run_id, seq, n)
    );
    """,
    # 4 -> 5: the worker registry -- one row per worker: what it runs and the code it carries and
    # lacks (agentrt workers); everything but the columns a query needs is one JSON text
    """
    CREATE TABLE agentrt_workers (
        owner      TEXT PRIMARY KEY,
        host       TEXT NOT NULL,
        pid        INTEGER NOT NULL,
        started_at DOUBLE PRECISION NOT NULL,
        last_seen  DOUBLE PRECISION NOT NULL,
        info       TEXT NOT NULL
    );
    CREATE INDEX agentrt_workers_by_last_seen ON agentrt_workers (last_seen);
    """,
    # 5 -> 6: why a blocked run is blocked (a refused checkpoint, or code that cannot restore it)
    """
    ALTER TABLE agentrt_runs ADD COLUMN blocked TEXT;
    """,
    # 6 -> 7: each run's signed head (agentrt.stores._identity); the store's identity is written by
    # _migrate beside it, and the runs already here get their heads in the same transaction.
    # Tenant rows of no run are dropped (see the SQLite store's migration 10 -> 11)
    """
    ALTER TABLE agentrt_runs ADD COLUMN head TEXT;
    DELETE FROM agentrt_tenants t WHERE NOT EXISTS (SELECT 1 FROM agentrt_runs r WHERE r.run_id = t.run_id);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)

_UNFINISHED = "('queued', 'running', 'waiting')"
#: A pooled connection idle longer than this is checked (one round trip) before it is used.
_CHECK_IDLE_SECONDS = 2.0


def _redact(url: str) -> str:
    """The URL without its password (it goes into error messages)."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def _read_only_session(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    """Every connection of a read-only store refuses writes (PostgreSQL's own guard)."""
    conn.read_only = True


def _connection_lost(exc: BaseException) -> bool:
    """The server ended the connection (terminated backend, restart, network): no statement of
    the failed call was committed, so the call may be made again on a fresh connection."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = getattr(exc, "sqlstate", None)
    return state is None or state.startswith(("08", "57P"))


def _translate(method: F) -> F:
    """Turn psycopg errors into :class:`StoreError` naming the server and what to check.

    A call that failed because its pooled connection was dead (connections are checked only
    after sitting idle, see ``_check_idle``) is made once more, after the pool has checked and
    replaced its idle connections: a dropped connection (``pg_terminate_backend``, a failover)
    costs a round trip, not a failed call."""

    @functools.wraps(method)
    def wrapper(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
        try:
            try:
                return method(self, *args, **kwargs)
            except psycopg.Error as exc:
                if not _connection_lost(exc):
                    raise
                with suppress(Exception):
                    self._pool.check()
                return method(self, *args, **kwargs)
        except psycopg.Error as exc:
            raise StoreError(
                f"store {self.location}: {type(exc).__name__}: {str(exc).strip()}. "
                "Check that the server is up and reachable; runs stay resumable from their last checkpoint"
            ) from None

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps method's signature; mypy sees a new one


def _probe(url: str, location: str, timeout_seconds: float) -> None:
    """Connect once before the pool does: a wrong host, port or password is then one ``StoreError``
    naming libpq's reason, at once.  The pool alone retries until its timeout, logging each failed
    attempt (four multi-line warnings on stderr before the error, when nothing configures logging)."""
    try:
        conn = psycopg.connect(url, connect_timeout=max(1, math.ceil(timeout_seconds)))
    except psycopg.Error as exc:
        reason = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        raise StoreError(
            f"cannot connect to the PostgreSQL store {location}: {reason}; check the URL's host, port, "
            "user and password, and that the server runs and accepts connections"
        ) from None
    conn.close()


class PostgresStore:
    """The Store protocol on one PostgreSQL database (``postgresql://user:pass@host:port/db``)."""

    def __init__(
        self,
        url: str,
        *,
        retention: int | None = 100,
        pool_size: int = 4,
        connect_timeout: float = 10.0,
        require_key: bool = True,
        read_only: bool = False,
    ) -> None:
        if psycopg is None:
            raise StoreError(
                "the PostgreSQL store needs psycopg 3 and psycopg_pool: pip install 'agentrt[postgres]'"
            )
        self.url = url
        self.location = _redact(url)
        self.retention = retention
        self.read_only = read_only
        #: The keys its blobs are signed with (``agentrt.keys.keyring_for_store``); None: the project's.
        self.keyring = require_blob_key(self.location) if require_key else None
        self._listener: Any = None
        self._listen_lock = threading.Lock()
        self._returned: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
        self._pruned_at = 0.0  # when this handle last deleted long-gone worker rows
        _probe(url, self.location, connect_timeout)
        self._pool = ConnectionPool(
            url,
            # Autocommit: a read is one round trip (no BEGIN/COMMIT around it), and a write that is
            # one statement commits with it; several statements still share one ``_tx``.
            kwargs={"autocommit": True},
            min_size=1,
            max_size=max(1, pool_size),
            open=False,
            check=self._check_idle,
            reset=self._stamp,
            configure=_read_only_session if read_only else None,
            name="agentrt",
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
        except Exception as exc:
            self._pool.close()
            raise StoreError(
                f"cannot connect to the PostgreSQL store {self.location} within {connect_timeout:g} s "
                f"({type(exc).__name__}: {exc}); check the URL, that the server runs and accepts connections"
            ) from None
        try:
            if read_only:
                self._check_read_only()
            else:
                self._migrate()
            self._load_identity()
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r})"

    # ------------------------------------------------------------------ setup

    def _stamp(self, conn: Any) -> None:
        self._returned[conn] = time.monotonic()

    def _check_idle(self, conn: Any) -> None:
        """Check a pooled connection before use only when it sat idle for a while: a connection in
        steady use answered a moment ago, and checking it on every checkout cost one more round trip
        per statement.  A connection that dies between two uses fails that use (a StoreError: the
        run stays resumable) and the pool replaces it."""
        if time.monotonic() - self._returned.get(conn, 0.0) > _CHECK_IDLE_SECONDS:
            ConnectionPool.check_connection(conn)

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """One transaction on a pooled connection (committed on exit, rolled back on an error)."""
        with self._pool.connection() as conn, conn.transaction():
            yield conn

    def _q(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        with self._pool.connection() as conn:
            rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
            return rows

    def _schema_version(self, conn: Any) -> int:
        """The store's schema version (0: none yet); :class:`StoreSchemaTooNew` when a newer agentrt
        wrote it, which this one must not read or write."""
        row = conn.execute("SELECT value FROM agentrt_meta WHERE key = 'schema_version'").fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StoreSchemaTooNew(
                f"store {self.location} has schema version {version}, written by a newer agentrt; this "
                f"agentrt understands up to version {SCHEMA_VERSION}. Upgrade agentrt in this process."
            )
        return version

    @_translate
    def _migrate(self) -> None:
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('agentrt-schema'))")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS agentrt_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            version = self._schema_version(conn)
            for target in range(version, SCHEMA_VERSION):
                conn.execute(MIGRATIONS[target])
                if target == 6:
                    self._add_identity(conn, migrated=version > 0)
            if version < SCHEMA_VERSION:
                from agentrt._version import __version__

                conn.execute(
                    "INSERT INTO agentrt_meta (key, value) VALUES ('schema_version', %s), ('created_by', %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value "
                    "WHERE agentrt_meta.key = 'schema_version'",
                    (str(SCHEMA_VERSION), f"agentrt {__version__}"),
                )

    def _add_identity(self, conn: Any, *, migrated: bool) -> None:
        """The store's identity; for a store from an older agentrt also each run's signed head and the
        signed note that it holds blobs sealed for no store (see ``SqliteStore._seal_migrated``)."""
        store_id = _identity.new_store_id()
        conn.execute(
            "INSERT INTO agentrt_meta (key, value) VALUES ('store_id', %s) ON CONFLICT (key) DO NOTHING",
            (store_id,),
        )
        if not migrated:
            return
        (store_id,) = conn.execute("SELECT value FROM agentrt_meta WHERE key = 'store_id'").fetchone()
        ring = keyring_for_store(self)
        rows = conn.execute(
            "SELECT r.run_id, r.seq, r.status, c.blob FROM agentrt_runs r LEFT JOIN agentrt_checkpoints c "
            "ON c.run_id = r.run_id AND c.seq = (SELECT max(seq) FROM agentrt_checkpoints "
            "WHERE run_id = r.run_id)"
        ).fetchall()
        for run_id, seq, status, blob in rows:
            digest = _identity.blob_digest(bytes(blob)) if blob is not None else b""
            head = _identity.make_head(ring, store_id, run_id, int(seq), digest, status in FINAL)
            conn.execute("UPDATE agentrt_runs SET head = %s WHERE run_id = %s", (head, run_id))
        conn.execute(
            "INSERT INTO agentrt_meta (key, value) VALUES ('legacy_blobs', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (_identity.legacy_marker(ring, store_id),),
        )

    @_translate
    def _load_identity(self) -> None:
        """``store_id`` and whether the store takes legacy blobs (see ``SqliteStore._load_identity``)."""
        meta = dict(self._q("SELECT key, value FROM agentrt_meta WHERE key IN ('store_id', 'legacy_blobs')"))
        store_id = meta.get("store_id")
        if not isinstance(store_id, str) or not store_id:
            raise StoreCorrupt(
                f"store {self.location} has no store id in agentrt_meta (it was edited); keep the "
                "database aside for inspection and move its runs with `agentrt move` from a copy"
            )
        self.store_id: str = store_id
        self.legacy_blobs = _identity.legacy_marker_valid(
            keyring_for_store(self) if "legacy_blobs" in meta else None, store_id, meta.get("legacy_blobs")
        )

    def _head(self, run_id: str, seq: int, blob: bytes | None, finished: bool) -> str:
        digest = _identity.blob_digest(blob) if blob is not None else b""
        return _identity.make_head(keyring_for_store(self), self.store_id, run_id, seq, digest, finished)

    def _head_at(self, conn: Any, run_id: str, seq: int, finished: bool) -> str:
        row = conn.execute(
            "SELECT blob FROM agentrt_checkpoints WHERE run_id = %s AND seq = %s", (run_id, seq)
        ).fetchone()
        return self._head(run_id, seq, bytes(row[0]) if row else None, finished)

    @_translate
    def _check_read_only(self) -> None:
        """Opened read-only: the database must hold an agentrt store this agentrt reads as it is."""
        with self._tx() as conn:
            if conn.execute("SELECT to_regclass('agentrt_meta')").fetchone()[0] is None:
                raise StoreNotFound(
                    f"no such store: the database {self.location} has no agentrt tables; it was left "
                    "unchanged. Check the URL; a store is made when it is first opened for writing"
                )
            version = self._schema_version(conn)
        if version < SCHEMA_VERSION:
            raise StoreError(
                f"store {self.location} has schema version {version}, from an older agentrt (this one uses "
                f"{SCHEMA_VERSION}); a read-only command does not migrate it. Any command that writes to the "
                "store (agentrt resume, worker, serve) migrates it first"
            )

    @_translate
    def schema_version(self) -> int:
        with self._pool.connection() as conn:
            return self._schema_version(conn)

    @staticmethod
    def _notify(conn: Any) -> None:
        conn.execute(f"NOTIFY {CHANNEL}")

    # ------------------------------------------------------------------ runs

    @_translate
    def create_run(self, run: NewRun) -> RunRecord:
        now = time.time()
        with self._tx() as conn:
            row = conn.execute(
                "INSERT INTO agentrt_runs (run_id, agent, status, input, parent_id, parent_seq, parent_idx, "
                "created_at, updated_at, priority, lease_owner, lease_expires, epoch, deadline, head) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                f"ON CONFLICT (run_id) DO NOTHING RETURNING {_RUN_COLUMNS}",
                (
                    run.run_id,
                    run.agent,
                    run.status,
                    _dumps(run.input),
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
            ).fetchone()
            if row is None:
                raise RunExists(
                    f"a run with id {run.run_id!r} already exists in {self.location}; choose another run_id"
                )
            # The tenant row is written with the run, never before (see SqliteStore.create_run).
            conn.execute("DELETE FROM agentrt_tenants WHERE run_id = %s", (run.run_id,))
            if run.tenant is not None:
                conn.execute(
                    "INSERT INTO agentrt_tenants (run_id, tenant) VALUES (%s, %s)", (run.run_id, run.tenant)
                )
            if run.owner is None:
                self._notify(conn)
        return SqliteStore._record(row)

    @_translate
    def get_run(self, run_id: str) -> RunRecord | None:
        rows = self._q(f"SELECT {_RUN_COLUMNS} FROM agentrt_runs WHERE run_id = %s", (run_id,))
        return SqliteStore._record(rows[0]) if rows else None

    @_translate
    def list_runs(self, status: str | None = None, limit: int | None = None) -> list[RunRecord]:
        sql = f"SELECT {_RUN_COLUMNS} FROM agentrt_runs"
        params: tuple[Any, ...] = ()
        if status is not None:
            sql += " WHERE status = %s"
            params = (status,)
        sql += " ORDER BY created_at DESC, run_id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [SqliteStore._record(r) for r in self._q(sql, params)]

    @_translate
    def children(self, run_id: str) -> list[RunRecord]:
        rows = self._q(
            f"SELECT {_RUN_COLUMNS} FROM agentrt_runs WHERE parent_id = %s ORDER BY created_at", (run_id,)
        )
        return [SqliteStore._record(r) for r in rows]

    # ------------------------------------------------------------------ leases

    @_translate
    def acquire_lease(self, run_id: str, owner: str, ttl_seconds: float) -> RunRecord:
        with self._tx() as conn:
            row = conn.execute(
                "SELECT lease_owner, lease_expires FROM agentrt_runs WHERE run_id = %s FOR UPDATE", (run_id,)
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
            row = conn.execute(
                "UPDATE agentrt_runs SET lease_owner = %s, lease_expires = %s, "
                "epoch = CASE WHEN lease_owner IS NOT DISTINCT FROM %s THEN epoch ELSE epoch + 1 END "
                f"WHERE run_id = %s RETURNING {_RUN_COLUMNS}",
                (owner, now + ttl_seconds, owner, run_id),
            ).fetchone()
        return SqliteStore._record(row)

    def _dead_local_owners(self, conn: Any, now: float) -> list[str]:
        rows = conn.execute(
            "SELECT DISTINCT lease_owner FROM agentrt_runs WHERE lease_owner IS NOT NULL "
            f"AND starts_with(lease_owner, %s) AND lease_expires > %s AND status IN {_UNFINISHED}",
            (_HOST_PREFIX, now),
        ).fetchall()
        return [o for (o,) in rows if owner_is_dead(o)]

    @_translate
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
        now = time.time()
        limits = limits or {}
        skip_code = sorted(set(lacking or ()))
        with self._tx() as conn:
            dead = self._dead_local_owners(conn, now)
            driven = self._driven(conn, limits, dead, now) if limits else {}
            ids = claim_within_limits(
                lambda full, skip, want: self._runnable(conn, now, dead, agents, full, skip, want, skip_code),
                driven,
                limits,
                limit,
            )
            if not ids:
                return []
            rows = conn.execute(
                "UPDATE agentrt_runs SET lease_owner = %s, lease_expires = %s, epoch = epoch + 1, "
                "status = CASE WHEN status = 'queued' THEN 'running' ELSE status END "
                f"WHERE run_id = ANY(%s) RETURNING {_RUN_COLUMNS}",
                (owner, now + ttl_seconds, ids),
            ).fetchall()
        order = {run_id: i for i, run_id in enumerate(ids)}
        return sorted((SqliteStore._record(r) for r in rows), key=lambda r: order[r.run_id])

    @staticmethod
    def _runnable(
        conn: Any,
        now: float,
        dead: list[str],
        agents: list[str] | None,
        full: set[str],
        skip: list[str],
        limit: int,
        lacking: list[str],
    ) -> list[tuple[str, str]]:
        """``(run_id, agent)`` of up to ``limit`` runnable runs, best first, locked (``SKIP LOCKED``:
        racing claimers pass over each other's rows).  Runnable also: a parent parked on a sub-run
        that finished while its outcome was never journaled for the parent.  ``lacking``: code the
        claimer cannot restore (its runs are passed over)."""
        where = (
            f"status IN {_UNFINISHED} "
            "AND (lease_owner IS NULL OR lease_expires IS NULL OR lease_expires <= %s "
            "OR lease_owner = ANY(%s)) "
            "AND (status <> 'waiting' OR (wake_at IS NOT NULL AND wake_at <= %s) "
            "OR (waiting_on = 'child' AND EXISTS (SELECT 1 FROM agentrt_runs c "
            "WHERE c.parent_id = r.run_id AND c.parent_seq = r.seq "
            "AND c.status IN ('completed', 'failed', 'cancelled') AND NOT EXISTS (SELECT 1 FROM "
            "agentrt_results x WHERE x.run_id = r.run_id AND x.seq = r.seq "
            "AND x.idx = COALESCE(c.parent_idx, 0)))))"
        )
        params: list[Any] = [now, dead, now]
        if agents is not None:
            where += " AND agent = ANY(%s)"
            params.append(agents)
        if full:
            where += " AND NOT (agent = ANY(%s))"
            params.append(sorted(full))
        if skip:
            where += " AND NOT (run_id = ANY(%s))"
            params.append(skip)
        if lacking:
            where += " AND (code_required IS NULL OR NOT (code_required = ANY(%s)))"
            params.append(lacking)
        rows = conn.execute(
            f"SELECT run_id, agent FROM agentrt_runs r WHERE {where} "
            "ORDER BY priority DESC, created_at, run_id LIMIT %s FOR UPDATE SKIP LOCKED",
            (*params, int(limit)),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    @staticmethod
    def _driven(conn: Any, limits: Mapping[str, int], dead: list[str], now: float) -> dict[str, int]:
        """How many runs of each limited agent a live process drives right now.  Takes an advisory
        lock per limited agent first (released at commit): claims that may take runs of the same
        limited agent are serialized, so two workers cannot both see the last free slot."""
        for agent in sorted(limits):  # one order everywhere: no deadlock between claimers
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('agentrt-limit:' || %s))", (agent,))
        rows = conn.execute(
            f"SELECT agent, count(*) FROM agentrt_runs WHERE status IN {_UNFINISHED} "
            "AND agent = ANY(%s) AND lease_owner IS NOT NULL AND lease_expires > %s "
            "AND NOT (lease_owner = ANY(%s)) GROUP BY agent",
            (sorted(limits), now, dead),
        ).fetchall()
        return {agent: int(n) for agent, n in rows}

    @_translate
    def renew_leases(self, owner: str, run_ids: list[str], ttl_seconds: float) -> list[str]:
        if not run_ids:
            return []
        rows = []
        with self._tx() as conn:
            rows = conn.execute(
                "UPDATE agentrt_runs SET lease_expires = %s WHERE lease_owner = %s AND run_id = ANY(%s) "
                "RETURNING run_id",
                (time.time() + ttl_seconds, owner, list(run_ids)),
            ).fetchall()
        held = {r[0] for r in rows}
        return [run_id for run_id in run_ids if run_id not in held]

    @_translate
    def release_lease(self, run_id: str, owner: str) -> None:
        with self._tx() as conn:
            row = conn.execute(
                "UPDATE agentrt_runs SET lease_owner = NULL, lease_expires = NULL "
                "WHERE run_id = %s AND lease_owner = %s RETURNING status, wake_at",
                (run_id, owner),
            ).fetchone()
            if row is not None and (row[0] in ("queued", "running") or row[1] is not None):
                self._notify(conn)

    def _locked(self, conn: Any, run_id: str) -> tuple[Any, ...]:
        row: tuple[Any, ...] | None = conn.execute(
            "SELECT lease_owner, status, epoch, seq, pending, cancel_requested, usage "
            "FROM agentrt_runs WHERE run_id = %s FOR UPDATE",
            (run_id,),
        ).fetchone()
        if row is None:
            raise RunNotFound(run_id, self.location)
        return row

    def _check_owner(self, conn: Any, run_id: str, owner: str, epoch: int | None) -> tuple[Any, ...]:
        row = self._locked(conn, run_id)
        if row[0] != owner or (epoch is not None and row[2] != epoch):
            raise lease_lost(run_id, row[0], row[2], epoch)
        return row

    # ------------------------------------------------------------------ cancellation and wake-ups

    @_translate
    def request_cancel(self, run_id: str) -> list[str]:
        now = time.time()
        with self._tx() as conn:
            self._locked(conn, run_id)
            rows = conn.execute(
                "WITH RECURSIVE tree(id) AS (SELECT %s::text UNION ALL "
                "SELECT r.run_id FROM agentrt_runs r JOIN tree ON r.parent_id = tree.id) "
                "UPDATE agentrt_runs r SET cancel_requested = TRUE, updated_at = %s, "
                "lease_owner = NULL, lease_expires = NULL, "
                "wake_at = CASE WHEN r.status = 'waiting' THEN %s ELSE r.wake_at END, "
                "status = CASE WHEN r.status = 'blocked' OR (r.status = 'queued' AND NOT EXISTS "
                "(SELECT 1 FROM agentrt_checkpoints c WHERE c.run_id = r.run_id)) "
                "THEN 'cancelled' ELSE r.status END "
                "FROM tree WHERE r.run_id = tree.id AND r.status NOT IN ('completed', 'failed', 'cancelled') "
                "RETURNING r.run_id",
                (run_id, now, now),
            ).fetchall()
            self._notify(conn)
        return [r[0] for r in rows]

    @_translate
    def next_wake_at(self) -> float | None:
        rows = self._q(
            "SELECT min(wake_at) FROM agentrt_runs WHERE status = 'waiting' AND wake_at IS NOT NULL"
        )
        return rows[0][0] if rows else None

    def wait_for_work(self, timeout: float) -> bool:
        """``LISTEN agentrt_work``: True as soon as a notification arrives, False after ``timeout``.
        A lost listening connection is reopened on the next call (True then: look again)."""
        with self._listen_lock:
            try:
                if self._listener is None or self._listener.closed:
                    self._listener = psycopg.connect(self.url, autocommit=True)
                    self._listener.execute(f"LISTEN {CHANNEL}")
                    return True  # notifications before LISTEN were missed: look once
                for _ in self._listener.notifies(timeout=timeout, stop_after=1):
                    return True
                return False
            except psycopg.Error:
                if self._listener is not None:
                    with suppress(Exception):
                        self._listener.close()
                self._listener = None
                time.sleep(min(timeout, 1.0))
                return True

    # ------------------------------------------------------------------ checkpoints

    @_translate
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
        code_required: str | None = None,
    ) -> None:
        now = time.time()
        pending_json = _dumps(pending)
        # Old checkpoints and results are pruned in batches (see prune_due), here in the same statement.
        cutoff = (
            seq - self.retention if self.retention is not None and prune_due(seq, self.retention) else None
        )
        # One statement, so one round trip and its own transaction: the fenced UPDATE of the run row
        # (which takes its lock, as a claim does) feeds every other write, so none lands unless the
        # writer still holds the lease at its epoch.
        params: dict[str, Any] = {
            "run": run_id, "owner": owner, "epoch": epoch, "seq": seq, "blob": blob,
            "pending": pending_json, "now": now, "cutoff": cutoff, "code": code_required,
            "head": self._head(run_id, seq, blob, False),
            "eseq": [e[0] for e in events], "en": [e[1] for e in events], "ekind": [e[2] for e in events],
            "elevel": [e[3] for e in events], "edata": [_dumps(e[4]) or "null" for e in events],
        }  # fmt: skip
        gc = (
            ", gc1 AS (DELETE FROM agentrt_checkpoints WHERE run_id IN (SELECT run_id FROM fenced) "
            "AND seq <= %(cutoff)s), gc2 AS (DELETE FROM agentrt_results "
            "WHERE run_id IN (SELECT run_id FROM fenced) AND seq <= %(cutoff)s), "
            "gc3 AS (DELETE FROM agentrt_replaced_checkpoints "
            "WHERE run_id IN (SELECT run_id FROM fenced) AND seq <= %(cutoff)s) "
            if cutoff is not None
            else " "
        )
        events_cte = (
            ", ev AS (INSERT INTO agentrt_events (run_id, seq, n, kind, level, data, created_at) "
            "SELECT f.run_id, e.seq, e.n, e.kind, e.level, e.data, %(now)s FROM fenced f, "
            "unnest(%(eseq)s::int[], %(en)s::int[], %(ekind)s::text[], %(elevel)s::text[], "
            "%(edata)s::text[]) AS e(seq, n, kind, level, data) ON CONFLICT DO NOTHING)"
            if events
            else ""
        )
        with self._pool.connection() as conn:
            row = conn.execute(
                "WITH fenced AS (UPDATE agentrt_runs SET seq = %(seq)s, pending = %(pending)s, "
                "status = 'running', waiting_on = NULL, wake_at = NULL, updated_at = %(now)s, "
                "code_required = %(code)s, blocked = NULL, head = %(head)s "
                "WHERE run_id = %(run)s AND lease_owner = %(owner)s "
                "AND (%(epoch)s::bigint IS NULL OR epoch = %(epoch)s::bigint) RETURNING run_id), "
                "ck AS (INSERT INTO agentrt_checkpoints (run_id, seq, blob, pending, created_at) "
                "SELECT run_id, %(seq)s, %(blob)s, %(pending)s, %(now)s FROM fenced "
                "ON CONFLICT (run_id, seq) DO UPDATE SET blob = EXCLUDED.blob, pending = EXCLUDED.pending, "
                f"created_at = EXCLUDED.created_at){events_cte}{gc}SELECT count(*) FROM fenced",
                params,
            ).fetchone()
            if not row or not row[0]:
                self._refuse(conn, run_id, epoch)

    def _refuse(self, conn: Any, run_id: str, epoch: int | None) -> None:
        """Raise why a fenced one-statement write matched no run row (no lease, or no run)."""
        row = conn.execute(
            "SELECT lease_owner, epoch FROM agentrt_runs WHERE run_id = %s", (run_id,)
        ).fetchone()
        if row is None:
            raise RunNotFound(run_id, self.location)
        raise lease_lost(run_id, row[0], row[1], epoch)

    def _prune(self, conn: Any, run_id: str, seq: int) -> None:
        """Drop the checkpoints and journal entries older than the newest ``retention``."""
        if self.retention is not None and seq > self.retention:
            cutoff = seq - self.retention
            conn.execute("DELETE FROM agentrt_checkpoints WHERE run_id = %s AND seq <= %s", (run_id, cutoff))
            conn.execute("DELETE FROM agentrt_results WHERE run_id = %s AND seq <= %s", (run_id, cutoff))
            conn.execute(
                "DELETE FROM agentrt_replaced_checkpoints WHERE run_id = %s AND seq <= %s", (run_id, cutoff)
            )

    @_translate
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
        now = time.time()
        pending_json = _dumps(pending)
        with self._tx() as conn:
            self._check_owner(conn, run_id, owner, epoch)
            (newest,) = conn.execute(
                "SELECT max(seq) FROM agentrt_checkpoints WHERE run_id = %s", (run_id,)
            ).fetchone()
            (last_n,) = conn.execute(
                "SELECT max(n) FROM agentrt_events WHERE run_id = %s AND seq = %s", (run_id, seq)
            ).fetchone()
            n = 0 if last_n is None else int(last_n) + 1
            if newest is not None and seq == newest:
                conn.execute(
                    "INSERT INTO agentrt_replaced_checkpoints (run_id, seq, n, blob, created_at) "
                    "SELECT run_id, seq, %s, blob, created_at FROM agentrt_checkpoints "
                    "WHERE run_id = %s AND seq = %s",
                    (n, run_id, seq),
                )
                conn.execute(
                    "UPDATE agentrt_checkpoints SET blob = %s, pending = %s WHERE run_id = %s AND seq = %s",
                    (blob, pending_json, run_id, seq),
                )
                (status,) = conn.execute(
                    "SELECT status FROM agentrt_runs WHERE run_id = %s", (run_id,)
                ).fetchone()
                conn.execute(
                    "UPDATE agentrt_runs SET code_required = %s, head = %s WHERE run_id = %s",
                    (code_required, self._head(run_id, seq, blob, status in FINAL), run_id),
                )
            elif newest is None or seq > newest:
                for idx, ok, r_blob in journal:
                    conn.execute(
                        "INSERT INTO agentrt_results (run_id, seq, idx, ok, blob, created_at) "
                        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        (run_id, seq, idx, bool(ok), r_blob, now),
                    )
                conn.execute(
                    "INSERT INTO agentrt_checkpoints (run_id, seq, blob, pending, created_at) "
                    "VALUES (%s, %s, %s, %s, %s)",
                    (run_id, seq, blob, pending_json, now),
                )
                conn.execute(
                    "UPDATE agentrt_runs SET seq = %s, pending = %s, status = 'running', waiting_on = NULL, "
                    "wake_at = NULL, code_required = %s, updated_at = %s, blocked = NULL, output = NULL, "
                    "error = NULL, error_blob = NULL, head = %s WHERE run_id = %s",
                    (seq, pending_json, code_required, now, self._head(run_id, seq, blob, False), run_id),
                )
            else:
                raise StoreError(
                    f"store {self.location}: run {run_id!r} has checkpoints up to {newest}; an upgrade "
                    f"rewrites the newest one or adds one after it, not checkpoint {seq}"
                )
            self._insert_events(conn, run_id, [(seq, n, *event)], now)
        return n

    @_translate
    def block_run(
        self,
        run_id: str,
        owner: str,
        blocked: dict[str, Any],
        events: list[EventRow],
        *,
        epoch: int | None = None,
    ) -> bool:
        now = time.time()
        with self._tx() as conn:
            row = self._locked(conn, run_id)
            if row[1] in FINAL:
                return False
            if row[0] != owner or (epoch is not None and row[2] != epoch):
                raise lease_lost(run_id, row[0], row[2], epoch)
            self._insert_events(conn, run_id, events, now)
            conn.execute(
                "UPDATE agentrt_runs SET status = 'blocked', blocked = %s, waiting_on = NULL, "
                "wake_at = NULL, lease_owner = NULL, lease_expires = NULL, updated_at = %s WHERE run_id = %s",
                (_dumps(blocked), now, run_id),
            )
        return True

    @_translate
    def reopen_run(
        self, run_id: str, owner: str, event: tuple[str, str | None, Any], *, epoch: int | None = None
    ) -> int:
        now = time.time()
        with self._tx() as conn:
            seq = self._check_owner(conn, run_id, owner, epoch)[3]
            (last_n,) = conn.execute(
                "SELECT max(n) FROM agentrt_events WHERE run_id = %s AND seq = %s", (run_id, seq)
            ).fetchone()
            n = 0 if last_n is None else int(last_n) + 1
            # a finished run's row forgot its pending request; its checkpoint did not
            conn.execute(
                "UPDATE agentrt_runs SET status = 'running', blocked = NULL, output = NULL, error = NULL, "
                "error_blob = NULL, waiting_on = NULL, wake_at = NULL, updated_at = %s, head = %s, "
                "pending = COALESCE((SELECT c.pending FROM agentrt_checkpoints c WHERE c.run_id = %s "
                "AND c.seq = %s), pending) WHERE run_id = %s",
                (now, self._head_at(conn, run_id, seq, False), run_id, seq, run_id),
            )
            self._insert_events(conn, run_id, [(seq, n, *event)], now)
        return n

    @_translate
    def replaced_checkpoints(self, run_id: str) -> list[ReplacedCheckpoint]:
        rows = self._q(
            "SELECT seq, n, blob, created_at FROM agentrt_replaced_checkpoints WHERE run_id = %s "
            "ORDER BY seq, n",
            (run_id,),
        )
        return [ReplacedCheckpoint(s, n, bytes(b), t) for s, n, b, t in rows]

    @_translate
    def latest_checkpoint(self, run_id: str) -> tuple[int, bytes] | None:
        rows = self._q(
            "SELECT seq, blob FROM agentrt_checkpoints WHERE run_id = %s ORDER BY seq DESC LIMIT 1", (run_id,)
        )
        return (rows[0][0], bytes(rows[0][1])) if rows else None

    @_translate
    def get_checkpoint(self, run_id: str, seq: int) -> bytes | None:
        rows = self._q("SELECT blob FROM agentrt_checkpoints WHERE run_id = %s AND seq = %s", (run_id, seq))
        return bytes(rows[0][0]) if rows else None

    @_translate
    def list_checkpoints(self, run_id: str) -> list[CheckpointInfo]:
        rows = self._q(
            "SELECT seq, length(blob), created_at, pending FROM agentrt_checkpoints "
            "WHERE run_id = %s ORDER BY seq",
            (run_id,),
        )
        return [CheckpointInfo(s, n, t, load_json_or_damaged(p, "pending")) for s, n, t, p in rows]

    # ------------------------------------------------------------------ journal

    @_translate
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
        now = time.time()
        if owner is not None and not usage:
            fast = self._put_fenced(run_id, seq, idx, ok, blob, owner, epoch, now)
            if fast is not None:
                return fast
        with self._tx() as conn:
            # Lock the run row first: serializes with claims (fencing) and with set_waiting (wake-ups).
            try:
                row = (
                    self._check_owner(conn, run_id, owner, epoch)
                    if owner is not None
                    else self._locked(conn, run_id)
                )
            except RunNotFound:
                row = None
            inserted = conn.execute(
                "INSERT INTO agentrt_results (run_id, seq, idx, ok, blob, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING idx",
                (run_id, seq, idx, bool(ok), blob, now),
            ).fetchone()
            if inserted is None:
                return False
            if row is None:
                return True
            _owner, status, _epoch, run_seq, pending, _cancel, total = row
            if usage:
                conn.execute(
                    "UPDATE agentrt_runs SET usage = %s WHERE run_id = %s",
                    (_dumps(add_usage(json_column(total, "usage", run_id, self.location), usage)), run_id),
                )
            if (
                status == "waiting"
                and run_seq == seq
                and is_answered(
                    json_column(pending, "pending", run_id, self.location), self._oks(conn, run_id, seq)
                )
            ):
                conn.execute("UPDATE agentrt_runs SET wake_at = %s WHERE run_id = %s", (now, run_id))
                self._notify(conn)
        return True

    def _put_fenced(
        self,
        run_id: str,
        seq: int,
        idx: int,
        ok: bool,
        blob: bytes,
        owner: str,
        epoch: int | None,
        now: float,
    ) -> bool | None:
        """A driver's own result (no usage to add) in one statement: the run row is locked and the
        lease checked in the statement that inserts the result.  None: no such run (the caller's
        general path decides)."""
        with self._pool.connection() as conn:
            row = conn.execute(
                "WITH fenced AS (SELECT run_id, status FROM agentrt_runs WHERE run_id = %(run)s "
                "AND lease_owner = %(owner)s AND (%(epoch)s::bigint IS NULL OR epoch = %(epoch)s::bigint) "
                "FOR UPDATE), ins AS (INSERT INTO agentrt_results (run_id, seq, idx, ok, blob, created_at) "
                "SELECT run_id, %(seq)s, %(idx)s, %(ok)s, %(blob)s, %(now)s FROM fenced "
                "ON CONFLICT DO NOTHING RETURNING idx) "
                "SELECT (SELECT status FROM fenced), (SELECT count(*) FROM ins)",
                {"run": run_id, "owner": owner, "epoch": epoch, "seq": seq, "idx": idx, "ok": bool(ok),
                 "blob": blob, "now": now},
            ).fetchone()  # fmt: skip
            assert row is not None
            status, inserted = row
            if status is None:
                try:
                    self._refuse(conn, run_id, epoch)
                except RunNotFound:
                    return None
        if inserted and status == "waiting":  # parked meanwhile (rare for a driver): wake it if answered
            with self._tx() as conn:
                _owner, status, _epoch, run_seq, pending, _cancel, _usage = self._locked(conn, run_id)
                if (
                    status == "waiting"
                    and run_seq == seq
                    and is_answered(
                        json_column(pending, "pending", run_id, self.location), self._oks(conn, run_id, seq)
                    )
                ):
                    conn.execute("UPDATE agentrt_runs SET wake_at = %s WHERE run_id = %s", (now, run_id))
                    self._notify(conn)
        return bool(inserted)

    @staticmethod
    def _oks(conn: Any, run_id: str, seq: int) -> dict[int, bool]:
        rows = conn.execute(
            "SELECT idx, ok FROM agentrt_results WHERE run_id = %s AND seq = %s", (run_id, seq)
        ).fetchall()
        return {idx: bool(ok) for idx, ok in rows}

    @_translate
    def get_results(self, run_id: str, seq: int) -> dict[int, tuple[bool, bytes]]:
        rows = self._q(
            "SELECT idx, ok, blob FROM agentrt_results WHERE run_id = %s AND seq = %s", (run_id, seq)
        )
        return {idx: (bool(ok), bytes(blob)) for idx, ok, blob in rows}

    # ------------------------------------------------------------------ status

    @_translate
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
        now = time.time()
        with self._tx() as conn:
            row = self._check_owner(conn, run_id, owner, epoch)
            _owner, _status, _epoch, seq, pending, cancel, _usage = row
            pending = json_column(pending, "pending", run_id, self.location)
            if cancel or is_answered(pending, self._oks(conn, run_id, seq)):
                wake_at = now  # answered while the driver decided to park: a worker goes on with it
                self._notify(conn)
            self._prune(conn, run_id, seq)  # at rest, exactly the newest ``retention`` are kept
            self._insert_events(conn, run_id, events, now)
            conn.execute(
                "UPDATE agentrt_runs SET status = 'waiting', waiting_on = %s, wake_at = %s, updated_at = %s, "
                "blocked = NULL WHERE run_id = %s",
                (waiting_on, wake_at, now, run_id),
            )

    @_translate
    def finish_run(
        self,
        run_id: str,
        owner: str,
        status: str,
        *,
        output: Any = None,
        error: dict[str, Any] | None = None,
        error_blob: bytes | None = None,
        events: list[EventRow] = (),  # type: ignore[assignment]  # an immutable empty default; never mutated
        epoch: int | None = None,
    ) -> bool:
        assert status in FINAL
        now = time.time()
        with self._tx() as conn:
            row = self._locked(conn, run_id)
            if row[1] in FINAL:
                return False
            if row[0] != owner or (epoch is not None and row[2] != epoch):
                raise lease_lost(run_id, row[0], row[2], epoch)
            self._prune(conn, run_id, row[3])  # at rest, exactly the newest ``retention`` are kept
            self._insert_events(conn, run_id, events, now)
            conn.execute(
                "UPDATE agentrt_runs SET status = %s, output = %s, error = %s, error_blob = %s, "
                "pending = NULL, blocked = NULL, "
                "waiting_on = NULL, wake_at = NULL, updated_at = %s, head = %s WHERE run_id = %s",
                (
                    status,
                    _dumps(output),
                    _dumps(error),
                    error_blob,
                    now,
                    self._head_at(conn, run_id, row[3], True),
                    run_id,
                ),
            )
        return True

    # ------------------------------------------------------------------ events

    @staticmethod
    def _insert_events(conn: Any, run_id: str, events: list[EventRow], now: float) -> None:
        if events:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO agentrt_events (run_id, seq, n, kind, level, data, created_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    [
                        (run_id, seq, n, kind, level, _dumps(data) or "null", now)
                        for seq, n, kind, level, data in events
                    ],
                )

    @_translate
    def add_events(
        self, run_id: str, events: list[EventRow], *, owner: str | None = None, epoch: int | None = None
    ) -> None:
        with self._tx() as conn:
            if owner is not None:
                self._check_owner(conn, run_id, owner, epoch)
            self._insert_events(conn, run_id, events, time.time())

    @_translate
    def list_events(self, run_id: str, limit: int | None = None) -> list[EventRecord]:
        if limit:
            rows = self._q(
                "SELECT seq, n, kind, level, data, created_at FROM "
                "(SELECT * FROM agentrt_events WHERE run_id = %s "
                "ORDER BY seq DESC, n DESC LIMIT %s) e ORDER BY seq, n",
                (run_id, int(limit)),
            )
        else:
            rows = self._q(
                "SELECT seq, n, kind, level, data, created_at FROM agentrt_events "
                "WHERE run_id = %s ORDER BY seq, n",
                (run_id,),
            )
        return [EventRecord(s, n, k, lv, load_json_or_damaged(d, "data"), t) for s, n, k, lv, d, t in rows]

    # ------------------------------------------------------------------ the durable stream, tenants

    @_translate
    def append_stream(self, run_id: str, kind: str, data: Any) -> int:
        # One statement (one round trip): the next id is computed where the row is inserted.  Two
        # processes appending to one run at once may compute the same id: the primary key makes the
        # later one wait and insert nothing, and it tries again with the id after.
        payload, now = json.dumps(data, default=repr), time.time()
        with self._pool.connection() as conn:
            while True:
                row = conn.execute(
                    "INSERT INTO agentrt_stream (run_id, id, kind, data, created_at) "
                    "SELECT %s, COALESCE(MAX(id), 0) + 1, %s, %s, %s FROM agentrt_stream WHERE run_id = %s "
                    "ON CONFLICT (run_id, id) DO NOTHING RETURNING id",
                    (run_id, kind, payload, now, run_id),
                ).fetchone()
                if row is not None:
                    return int(row[0])

    @_translate
    def read_stream(self, run_id: str, after: int = 0, limit: int | None = None) -> list[StreamEvent]:
        sql = (
            "SELECT id, kind, data, created_at FROM agentrt_stream WHERE run_id = %s AND id > %s ORDER BY id"
        )
        params: tuple[Any, ...] = (run_id, int(after))
        if limit:
            sql += " LIMIT %s"
            params += (int(limit),)
        return [StreamEvent(i, k, load_json_or_damaged(d, "data"), t) for i, k, d, t in self._q(sql, params)]

    @_translate
    def set_tenant(self, run_id: str, tenant: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO agentrt_tenants (run_id, tenant) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (run_id, tenant),
            )

    @_translate
    def get_tenant(self, run_id: str) -> str | None:
        # a tenant row counts only beside its run (see SqliteStore.get_tenant)
        rows = self._q(
            "SELECT t.tenant FROM agentrt_tenants t JOIN agentrt_runs r ON r.run_id = t.run_id "
            "WHERE t.run_id = %s",
            (run_id,),
        )
        return rows[0][0] if rows else None

    @_translate
    def tenant_runs(self, tenant: str) -> set[str]:
        rows = self._q(
            "SELECT t.run_id FROM agentrt_tenants t JOIN agentrt_runs r ON r.run_id = t.run_id "
            "WHERE t.tenant = %s",
            (tenant,),
        )
        return {r[0] for r in rows}

    # ------------------------------------------------------------------ the worker registry

    @_translate
    def advertise_worker(self, info: WorkerInfo) -> None:
        info = bounded(info)
        now = time.time()
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO agentrt_workers (owner, host, pid, started_at, last_seen, info) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (owner) DO UPDATE SET host = EXCLUDED.host, "
                "pid = EXCLUDED.pid, started_at = EXCLUDED.started_at, last_seen = EXCLUDED.last_seen, "
                "info = EXCLUDED.info",
                (info.owner, info.host, info.pid, info.started_at, info.last_seen, to_json(info)),
            )
            if now - self._pruned_at >= PRUNE_EVERY_SECONDS:
                conn.execute(
                    "DELETE FROM agentrt_workers WHERE owner IN "
                    "(SELECT owner FROM agentrt_workers WHERE last_seen < %s LIMIT %s)",
                    (now - PRUNE_AFTER_SECONDS, PRUNE_BATCH),
                )
                self._pruned_at = now

    @_translate
    def list_workers(self) -> list[WorkerInfo]:
        rows = self._q(
            "SELECT owner, host, pid, started_at, last_seen, info FROM agentrt_workers "
            "ORDER BY started_at, owner"
        )
        return [from_json(*row) for row in rows]

    @_translate
    def forget_worker(self, owner: str) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM agentrt_workers WHERE owner = %s", (owner,))

    def close(self) -> None:
        with self._listen_lock:
            if self._listener is not None:
                with suppress(Exception):
                    self._listener.close()
                self._listener = None
        with suppress(Exception):
            self._pool.close()
