"""``PostgresStore``: the Store protocol on PostgreSQL, for a fleet of workers on many machines.

The state machine is :class:`~agentrt.stores._sql.store.SqlStore`'s; this module is PostgreSQL's
part: the pool, the schema and its migrations, ``LISTEN/NOTIFY``, advisory locks for limited
claims, and two one-statement writes a driver makes at every step (a checkpoint, a result).

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

import asyncio
import math
import os
import re
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any  # Any: psycopg rows and connections; JSON columns

from agentrt.exceptions import RunNotFound
from agentrt.keys import keyring_for_store
from agentrt.stores import _identity
from agentrt.stores._pg_checkpoint import checkpoint_statement
from agentrt.stores._pg_pipeline import StatementPipeline
from agentrt.stores._pg_sessions import GONE_SQL, OwnerSessions, gone_params
from agentrt.stores._sql.core import translated
from agentrt.stores._sql.dialect import Dialect
from agentrt.stores._sql.packing import pack
from agentrt.stores._sql.store import SqlStore
from agentrt.stores.base import (
    Capability,
    EventRow,
    StoreError,
    StoreNotFound,
    StoreSchemaTooNew,
    has_session,
    lease_lost,
    require_blob_key,
)

try:
    import psycopg
    from psycopg_pool import ConnectionPool
except ImportError:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]  # the module is absent without the postgres extra
    ConnectionPool = None  # type: ignore[assignment,misc]  # the class is absent without the postgres extra

__all__ = ["DIALECT", "SCHEMA_VERSION", "PostgresStore"]

CHANNEL = "agentrt_work"
#: ``AGENTRT_PG_OWNER_SESSIONS`` values that turn owner sessions off.
_OFF = ("0", "false", "no", "off")

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
    # 7 -> 8: blobs are kept packed (see the SQLite store's migration 11 -> 12)
    """
    INSERT INTO agentrt_meta (key, value) VALUES ('blob_packing', '1')
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
    """,
    # 8 -> 9: blobs are packed against a second dictionary (see the SQLite store's migration 12 -> 13)
    """
    INSERT INTO agentrt_meta (key, value) VALUES ('blob_packing', '2')
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)

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


def _executemany(conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
    with conn.cursor() as cur:
        cur.executemany(sql, rows)


#: PostgreSQL's spelling of the store's statements: row locks kept, ``%s`` placeholders, tables
#: prefixed ``agentrt_`` (the store may share a database), a list as one array parameter.
DIALECT = Dialect(
    name="postgresql",
    table_prefix="agentrt_",
    placeholder="%s",
    row_locks=True,
    arrays=True,
    executemany=_executemany,
    container="database",
    code_point_order=' COLLATE "C"',
)


class PostgresStore(SqlStore):
    """The Store protocol on one PostgreSQL database (``postgresql://user:pass@host:port/db``)."""

    dialect = DIALECT
    capabilities = frozenset(
        {*SqlStore.capabilities, Capability.JOURNAL_WITH_CHECKPOINT, Capability.PIPELINED}
    )
    _driver_errors = (psycopg.Error,) if psycopg is not None else ()
    _conflict_errors = (psycopg.IntegrityError,) if psycopg is not None else ()

    def __init__(
        self,
        url: str,
        *,
        retention: int | None = 100,
        pool_size: int = 4,
        connect_timeout: float = 10.0,
        require_key: bool = True,
        read_only: bool = False,
        owner_sessions: bool | None = None,
    ) -> None:
        if psycopg is None:
            raise StoreError(
                "the PostgreSQL store needs psycopg 3 and psycopg_pool: pip install 'agentrt[postgres]'"
            )
        self.url = url
        self.location = _redact(url)
        self._label = self.location
        self.retention = retention
        self.read_only = read_only
        #: The keys its blobs are signed with (``agentrt.keys.keyring_for_store``); None: the project's.
        self.keyring = require_blob_key(self.location) if require_key else None
        self._listener: Any = None
        self._listen_lock = threading.Lock()
        if owner_sessions is None:
            owner_sessions = os.environ.get("AGENTRT_PG_OWNER_SESSIONS", "1").strip().lower() not in _OFF
        #: The liveness locks of the session owners this handle leases for (see ``_pg_sessions``).
        self._sessions: OwnerSessions | None = None
        if owner_sessions and not read_only:
            self._sessions = OwnerSessions(self._session_connection)
            # Per handle (owner sessions may be turned off): never declared without the sessions held.
            self.capabilities = type(self).capabilities | {Capability.OWNER_SESSIONS}  # type: ignore[misc]  # a ClassVar of SqlCore, narrowed per handle
        self._returned: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
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
            self._open(read_only)
        except BaseException:
            self.close()
            raise

    @translated
    def _open(self, read_only: bool) -> None:
        if read_only:
            self._check_read_only()
        else:
            self._migrate()
        self._load_identity()

    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r})"

    # ------------------------------------------------------------------ setup

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """A pooled connection, stamped as it goes back so the next checkout knows how long it sat idle.

        Stamped here rather than by the pool's ``reset`` callback: with one, the pool hands every
        returned connection to its worker thread, a thread hop (and a wait for the connection to come
        back) per statement -- measured, a third of a worker's CPU per durable step."""
        with self._pool.connection() as conn:
            try:
                yield conn
            finally:
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
        with self._connection() as conn, conn.transaction():
            yield conn

    def _q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._connection() as conn:
            rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
            return rows

    def _statement(self) -> AbstractContextManager[Any]:
        """A pooled connection in autocommit: a one-statement write is one round trip."""
        return self._connection()

    def _may_retry(self, exc: BaseException) -> bool:
        """A call that failed because its pooled connection was dead (connections are checked only
        after sitting idle, see ``_check_idle``) is made once more, after the pool has checked and
        replaced its idle connections: a dropped connection (``pg_terminate_backend``, a failover)
        costs a round trip, not a failed call."""
        if not _connection_lost(exc):
            return False
        with suppress(Exception):
            self._pool.check()
        return True

    def _store_error(self, exc: BaseException) -> StoreError:
        return StoreError(
            f"store {self.location}: {type(exc).__name__}: {str(exc).strip()}. "
            "Check that the server is up and reachable; runs stay resumable from their last checkpoint"
        )

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
        signed note that it holds blobs sealed for no store (:meth:`SqlCore._seal_migrated`)."""
        conn.execute(
            "INSERT INTO agentrt_meta (key, value) VALUES ('store_id', %s) ON CONFLICT (key) DO NOTHING",
            (_identity.new_store_id(),),
        )
        if migrated:
            self._seal_migrated(conn, keyring_for_store(self))

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

    @translated
    def schema_version(self) -> int:
        with self._connection() as conn:
            return self._schema_version(conn)

    def _notify(self, conn: Any) -> None:
        conn.execute(f"NOTIFY {CHANNEL}")

    def _serialize_claims(self, conn: Any, agents: list[str]) -> None:
        """An advisory lock per limited agent (released at commit): claims that may take runs of the
        same limited agent are serialized, so two workers cannot both see the last free slot."""
        for agent in sorted(agents):  # one order everywhere: no deadlock between claimers
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('agentrt-limit:' || %s))", (agent,))

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

    # ------------------------------------------------------------------ a step's one-statement writes

    @translated
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
        sql, params = checkpoint_statement(
            run_id, owner, seq, blob, pending, events, epoch, journal, code_required,
            retention=self.retention, head=self._head(run_id, seq, blob, False),
        )  # fmt: skip
        with self._connection() as conn:
            try:
                row = conn.execute(sql, params).fetchone()
            except psycopg.errors.UniqueViolation as exc:
                raise self._checkpoint_error(exc, run_id, journal) from None
            if not row or not row[0]:
                self._refuse(conn, run_id, epoch)

    async def save_checkpoint_pipelined(
        self,
        pipeline: StatementPipeline,
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
        """:meth:`save_checkpoint`, its statement sent with the loop's others (``Capability.PIPELINED``)."""
        sql, params = checkpoint_statement(
            run_id, owner, seq, blob, pending, events, epoch, journal, code_required,
            retention=self.retention, head=self._head(run_id, seq, blob, False),
        )  # fmt: skip
        try:
            row = await pipeline.fetchone(sql, params, run_id)
        except psycopg.Error as exc:
            raise self._checkpoint_error(exc, run_id, journal) from None
        if not row or not row[0]:
            await asyncio.to_thread(self._refuse_unfenced, run_id, epoch)

    def _checkpoint_error(
        self, exc: BaseException, run_id: str, journal: Sequence[tuple[int, int, bool, bytes]]
    ) -> StoreError:
        """What a failed checkpoint statement means: with a journal, a key refusing its result is a
        result another driver already journaled (nothing of the statement was written); else the
        store's error."""
        if journal and isinstance(exc, psycopg.errors.UniqueViolation):
            return self._journaled_twice(run_id, [(j[0], j[1]) for j in journal])
        return self._store_error(exc)

    def open_pipeline(self) -> StatementPipeline:
        """A pipeline for the calling event loop's one-statement writes (``Capability.PIPELINED``)."""

        async def connect() -> Any:
            try:
                return await psycopg.AsyncConnection.connect(self.url, autocommit=True, connect_timeout=10)
            except psycopg.Error as exc:
                raise self._store_error(exc) from None

        return StatementPipeline(connect, _connection_lost)

    @translated
    def _refuse_unfenced(self, run_id: str, epoch: int | None) -> None:
        with self._connection() as conn:
            self._refuse(conn, run_id, epoch)

    def _refuse(self, conn: Any, run_id: str, epoch: int | None) -> None:
        """Raise why a fenced one-statement write matched no run row (no lease, or no run)."""
        row = conn.execute(
            "SELECT lease_owner, epoch FROM agentrt_runs WHERE run_id = %s", (run_id,)
        ).fetchone()
        if row is None:
            raise RunNotFound(run_id, self.location)
        raise lease_lost(run_id, row[0], row[1], epoch)

    @translated
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
        if owner is not None and not usage:
            fast = self._put_fenced(run_id, seq, idx, ok, blob, owner, epoch, time.time())
            if fast is not None:
                return fast
        return super().put_result(run_id, seq, idx, ok, blob, usage, owner=owner, epoch=epoch)

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
        with self._connection() as conn:
            row = conn.execute(
                "WITH fenced AS (SELECT run_id, status FROM agentrt_runs WHERE run_id = %(run)s "
                "AND lease_owner = %(owner)s AND (%(epoch)s::bigint IS NULL OR epoch = %(epoch)s::bigint) "
                "FOR UPDATE), ins AS (INSERT INTO agentrt_results (run_id, seq, idx, ok, blob, created_at) "
                "SELECT run_id, %(seq)s, %(idx)s, %(ok)s, %(blob)s, %(now)s FROM fenced "
                "ON CONFLICT DO NOTHING RETURNING idx) "
                "SELECT (SELECT status FROM fenced), (SELECT count(*) FROM ins)",
                {"run": run_id, "owner": owner, "epoch": epoch, "seq": seq, "idx": idx, "ok": bool(ok),
                 "blob": pack(blob), "now": now},
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
                if status == "waiting" and run_seq == seq:
                    self._wake_if_answered(conn, run_id, seq, pending, now)
        return bool(inserted)

    # ------------------------------------------------------------------ owner sessions

    def _session_connection(self) -> Any:
        """The connection holding the owner sessions' locks: autocommit, with TCP keepalives (a
        server gone silent is noticed), and a connect timeout (the keeper retries)."""
        return psycopg.connect(
            self.url,
            autocommit=True,
            keepalives=1,
            keepalives_idle=10,
            keepalives_interval=5,
            keepalives_count=3,
            connect_timeout=5,
        )

    def _hold_owner(self, owner: str) -> None:
        if self._sessions is not None and has_session(owner):
            self._sessions.hold(owner)

    def end_owner_session(self, owner: str) -> None:
        """``owner``'s runtime closed: stop holding its session lock (``Capability.OWNER_SESSIONS``)."""
        if self._sessions is not None:
            self._sessions.release(owner)

    def _gone_owners(self, conn: Any, owners: list[str]) -> set[str]:
        if not owners or self._sessions is None or not self._sessions.settled():
            return set()  # judged by pids and lease lapses only
        params = gone_params(owners)
        rows = conn.execute(GONE_SQL, params).fetchall() if conn is not None else self._q(GONE_SQL, params)
        return {o for (o,) in rows}

    def close(self) -> None:
        if self._sessions is not None:
            self._sessions.close()
        with self._listen_lock:
            if self._listener is not None:
                with suppress(Exception):
                    self._listener.close()
                self._listener = None
        with suppress(Exception):
            self._pool.close()
