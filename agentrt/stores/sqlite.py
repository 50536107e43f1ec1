"""``SqliteStore``: runs, checkpoints, journal and events in one SQLite file.

The state machine is :class:`~agentrt.stores._sql.store.SqlStore`'s; this module is SQLite's part:

- WAL journal, ``synchronous=NORMAL`` by default (a committed checkpoint survives
  a crash of the process; ``synchronous="FULL"`` also survives a power loss).
- Versioned schema: ``PRAGMA user_version`` and a list of migrations applied in
  order; a file from a newer agentrt is refused with a clear message.
- Safe across processes on one machine: a lease (owner + expiry + epoch) on each
  run row, so two processes never drive one run at once; a lease whose owner pid
  is dead on this machine is taken over at once, any other one when it expires.
  Writes carrying an epoch are fenced inside their transaction (``BEGIN
  IMMEDIATE`` serializes writers, so a claim and a fenced write never interleave;
  the dialect drops PostgreSQL's row locks).  Several worker processes may share one file.
- Stream events queued by ``queue_stream`` ride on the next write transaction.
- ``sqlite3`` errors are translated once, here, into :class:`StoreError`
  subclasses that say what happened and what to do.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Sequence
from contextlib import suppress
from typing import Any  # Any: sqlite3 rows and parameters

from agentrt import keys as _keys
from agentrt.stores._rows import stream_json
from agentrt.stores._sql.core import translated
from agentrt.stores._sql.dialect import Dialect
from agentrt.stores._sql.store import STREAM_COLUMNS, SqlStore
from agentrt.stores.base import (
    Capability,
    StoreCorrupt,
    StoreError,
    StoreLocked,
    StoreNotFound,
    StoreSchemaTooNew,
    StreamEvent,
)

__all__ = ["DIALECT", "SCHEMA_VERSION", "SqliteStore"]

#: Each entry migrates the schema from version i to i + 1.
MIGRATIONS: list[str] = [
    # 0 -> 1: runs, checkpoints, results (the journal), events
    """
    CREATE TABLE runs (
        run_id        TEXT PRIMARY KEY,
        agent         TEXT NOT NULL,
        status        TEXT NOT NULL,
        input         TEXT NOT NULL,
        output        TEXT,
        error         TEXT,
        error_blob    BLOB,
        seq           INTEGER NOT NULL DEFAULT 0,
        pending       TEXT,
        waiting_on    TEXT,
        wake_at       REAL,
        parent_id     TEXT,
        parent_seq    INTEGER,
        parent_idx    INTEGER,
        created_at    REAL NOT NULL,
        updated_at    REAL NOT NULL,
        lease_owner   TEXT,
        lease_expires REAL
    );
    CREATE INDEX runs_by_status ON runs (status, created_at);
    CREATE INDEX runs_by_parent ON runs (parent_id);
    CREATE TABLE checkpoints (
        run_id     TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        blob       BLOB NOT NULL,
        pending    TEXT,
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE results (
        run_id     TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        idx        INTEGER NOT NULL,
        ok         INTEGER NOT NULL,
        blob       BLOB NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, seq, idx)
    );
    CREATE TABLE events (
        run_id     TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        n          INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        level      TEXT,
        data       TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, seq, n)
    );
    """,
    # 1 -> 2: store metadata (which agentrt created the file), timers index
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE INDEX runs_by_wake ON runs (wake_at) WHERE wake_at IS NOT NULL;
    """,
    # 2 -> 3: model usage summed per run (model_calls, input/output/total tokens)
    """
    ALTER TABLE runs ADD COLUMN usage TEXT;
    """,
    # 3 -> 4: workers -- the lease epoch (fencing token), priorities, cancel requests
    """
    ALTER TABLE runs ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX runs_by_owner ON runs (lease_owner) WHERE lease_owner IS NOT NULL;
    CREATE INDEX runs_claimable ON runs (priority DESC, created_at)
        WHERE status IN ('queued', 'running', 'waiting');
    """,
    # 4 -> 5: the durable event stream (one id sequence per run) and the tenant of each run
    """
    CREATE TABLE stream (
        run_id     TEXT NOT NULL,
        id         INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        data       TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, id)
    );
    CREATE TABLE tenants (
        run_id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL
    );
    CREATE INDEX tenants_by_tenant ON tenants (tenant);
    """,
    # 5 -> 6: per-run deadlines
    """
    ALTER TABLE runs ADD COLUMN deadline REAL;
    """,
    # 6 -> 7: the code each run's newest checkpoint needs (claims of a mixed fleet), and the
    # checkpoint blobs agentrt upgrade replaced (agentrt diff compares them with the moved ones)
    """
    ALTER TABLE runs ADD COLUMN code_required TEXT;
    CREATE TABLE replaced_checkpoints (
        run_id     TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        n          INTEGER NOT NULL,
        blob       BLOB NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, seq, n)
    );
    """,
    # 7 -> 8: the journal and the stream as WITHOUT ROWID tables: one b-tree each, ordered by the
    # key, instead of a table and its key's index -- fewer pages written by every step (issue 16)
    """
    CREATE TABLE results_v8 (
        run_id     TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        idx        INTEGER NOT NULL,
        ok         INTEGER NOT NULL,
        blob       BLOB NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, seq, idx)
    ) WITHOUT ROWID;
    INSERT INTO results_v8 (run_id, seq, idx, ok, blob, created_at)
        SELECT run_id, seq, idx, ok, blob, created_at FROM results;
    DROP TABLE results;
    ALTER TABLE results_v8 RENAME TO results;
    CREATE TABLE stream_v8 (
        run_id     TEXT NOT NULL,
        id         INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        data       TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, id)
    ) WITHOUT ROWID;
    INSERT INTO stream_v8 (run_id, id, kind, data, created_at)
        SELECT run_id, id, kind, data, created_at FROM stream;
    DROP TABLE stream;
    ALTER TABLE stream_v8 RENAME TO stream;
    """,
    # 8 -> 9: the worker registry -- one row per worker: what it runs and the code it carries and
    # lacks (agentrt workers); everything but the columns a query needs is one JSON text
    """
    CREATE TABLE workers (
        owner      TEXT PRIMARY KEY,
        host       TEXT NOT NULL,
        pid        INTEGER NOT NULL,
        started_at REAL NOT NULL,
        last_seen  REAL NOT NULL,
        info       TEXT NOT NULL
    );
    CREATE INDEX workers_by_last_seen ON workers (last_seen);
    """,
    # 9 -> 10: why a blocked run is blocked (a refused checkpoint, or code that cannot restore it)
    """
    ALTER TABLE runs ADD COLUMN blocked TEXT;
    """,
    # 10 -> 11: the store's identity, which every blob is sealed for, and each run's signed head
    # (agentrt.stores._identity); the runs already here get their heads in the same transaction.
    # Tenant rows of no run are dropped: an older agentrt wrote a request's tenant before it
    # validated the run, and kept it when the run was refused (a squatted id; issue 25)
    """
    ALTER TABLE runs ADD COLUMN head TEXT;
    INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));
    DELETE FROM tenants WHERE run_id NOT IN (SELECT run_id FROM runs);
    """,
    # 11 -> 12: blobs are kept packed (deflated against a fixed dictionary when that is smaller,
    # agentrt.stores._sql.packing; issue 26). No column changes: the rows already here stay plain
    # blobs, which are read as before; the version is what stops an older agentrt from reading a
    # packed row as a damaged blob.
    """
    INSERT OR REPLACE INTO meta (key, value) VALUES ('blob_packing', '1');
    """,
    # 12 -> 13: blobs are packed against a second dictionary (packing.DICTIONARY_V2: the payload's
    # preamble since the codec's preset memo); rows packed with the first stay readable, and the
    # version stops an older agentrt from reading a row of the second as a damaged blob
    """
    INSERT OR REPLACE INTO meta (key, value) VALUES ('blob_packing', '2');
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)
#: The page size of a new store file (an existing one keeps its own).
PAGE_SIZE_BYTES = 2048
#: How many runs' last stream ids a store remembers before it forgets them all (then looks them up).
_MAX_STREAM_RUNS = 4096
#: How often ``wait_for_work`` looks at the file for commits of other processes.
_POLL_SECONDS = 0.05


def _executemany(conn: sqlite3.Connection, sql: str, rows: Sequence[Sequence[Any]]) -> None:
    conn.executemany(sql, rows)


#: SQLite's spelling of the store's statements: no row locks (``BEGIN IMMEDIATE`` takes the file's
#: write lock), ``?`` placeholders, bare table names, one placeholder per list item.
DIALECT = Dialect(
    name="sqlite",
    table_prefix="",
    placeholder="?",
    row_locks=False,
    arrays=False,
    executemany=_executemany,
    container="file",
)


class SqliteStore(SqlStore):
    """The default store: one SQLite file (created with its directory on first use).

    ``read_only=True`` is how the commands that only look (``agentrt runs``, ``show``, ``dump``,
    ``diff``, ``upgrade --dry-run``) open it: the file is opened through SQLite's ``mode=ro``, so
    nothing is created, migrated or written, and a missing file or a SQLite file that is not an
    agentrt store is :class:`StoreNotFound` instead of a new store.  ``create=False`` (the commands
    that act on existing runs: ``resume``, ``reply``, ``cancel``, ``fork``, ``upgrade``) writes but
    refuses a missing file the same way, so a mistyped path is not a new empty store.
    """

    dialect = DIALECT
    capabilities = frozenset(
        {
            Capability.WORKER_REGISTRY,
            Capability.WATCHED_OWNERS,
            Capability.JOURNAL_WITH_CHECKPOINT,
            Capability.QUEUED_STREAM,
            Capability.BATCHED_STREAM,
        }
    )
    _driver_errors = (sqlite3.Error,)
    _conflict_errors = (sqlite3.IntegrityError,)

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        retention: int | None = 100,
        busy_timeout_seconds: float | None = None,
        synchronous: str = "NORMAL",
        read_only: bool = False,
        create: bool = True,
    ) -> None:
        self.path = os.fspath(path)
        self.location = self.path
        self._label = repr(self.path)
        self.retention = retention
        self.read_only = read_only
        if busy_timeout_seconds is None:
            busy_timeout_seconds = float(os.environ.get("AGENTRT_STORE_TIMEOUT", "5"))
        self.busy_timeout_seconds = busy_timeout_seconds
        #: threads the runtime makes this store's calls on (``agentrt._runtime.storeio``): none at
        #: OFF/NORMAL, where a commit is a write to the page cache and a hop to a thread would cost
        #: more than the call (a durable step took 2x as long through one); one where a commit
        #: waits on the disk (FULL, EXTRA), so that the fsync never holds up the event loop
        self.io_threads = 1 if str(synchronous).upper() in ("FULL", "EXTRA") else 0
        self._lock = threading.RLock()
        self._work = threading.Condition()
        self._generation = 0  # bumped by this process's writes that may make work runnable
        #: stream events queued by ``queue_stream``, written by the next write transaction
        self._stream_queue: list[tuple[str, str, str, float]] = []
        #: run id -> the last stream id this store wrote for it (see ``_write_stream``)
        self._stream_last: dict[str, int] = {}
        self._conn: sqlite3.Connection | None = None
        try:
            if read_only:
                self._conn = self._connect_read_only()
                self._check_read_only()
            else:
                if not create:
                    self._require_file()
                self._conn = self._connect()
                self._setup(synchronous, create)
        except sqlite3.Error as exc:
            self.close()
            raise self._store_error(exc) from None
        except StoreError:
            self.close()
            raise
        #: the blob keys of this store: AGENTRT_BLOB_KEY, else ``<database>.key`` beside it (0600),
        #: created with the database (a store made before keys existed gets one on first open)
        try:  # a refused key file (BlobKeyRejected) must not leave the connection open
            self.keyring = (
                _keys.store_keyring(self.path, create=not read_only) if self.path != ":memory:" else None
            )
            self._load_identity()
        except StoreError:
            self.close()
            raise
        except sqlite3.Error as exc:
            self.close()
            raise self._store_error(exc) from None

    def _connect(self) -> sqlite3.Connection:
        if self.path == ":memory:":  # a private in-memory database (MemoryStore)
            return sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        directory = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store directory {directory!r}: {exc.strerror}") from None
        return sqlite3.connect(
            self.path, timeout=self.busy_timeout_seconds, isolation_level=None, check_same_thread=False
        )

    def _require_file(self) -> None:
        if not os.path.isfile(self.path):
            what = "is not a file" if os.path.exists(self.path) else "does not exist"
            where = "" if os.path.isabs(self.path) else f" (relative to {os.getcwd()!r})"
            raise StoreNotFound(
                f"no such store: {self.path!r} {what}; nothing was created. Check the path{where}; "
                "a store is made when it is first opened for writing"
            )

    def _connect_read_only(self) -> sqlite3.Connection:
        self._require_file()
        uri = "file:" + urllib.parse.quote(os.path.abspath(self.path)) + "?mode=ro"
        return sqlite3.connect(
            uri, uri=True, timeout=self.busy_timeout_seconds, isolation_level=None, check_same_thread=False
        )

    def _check_read_only(self) -> None:
        """The file opened read-only must be an agentrt store this agentrt can read as it is."""
        conn = self._conn
        assert conn is not None
        version = conn.execute("PRAGMA user_version").fetchone()[
            0
        ]  # reads the header: fails if not a database
        if version > SCHEMA_VERSION:
            raise self._too_new(version)
        if version == 0:
            raise self._not_a_store()
        if version < SCHEMA_VERSION:
            raise StoreError(
                f"store {self.path!r} has schema version {version}, from an older agentrt (this one uses "
                f"{SCHEMA_VERSION}); a read-only command does not migrate it. Any command that writes to "
                "the store (agentrt resume, worker, serve) migrates it first"
            )

    def _has_tables(self) -> bool:
        assert self._conn is not None
        return self._conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None

    def _not_a_store(self) -> StoreNotFound:
        """A SQLite file that agentrt never set up (``user_version`` 0), named by its tables."""
        assert self._conn is not None
        rows = self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        tables = [row[0] for row in rows]
        found = f"its tables: {', '.join(tables)}" if tables else "it is empty"
        return StoreNotFound(
            f"no such store: {self.path!r} is a SQLite file but not an agentrt store ({found}); it "
            "was left unchanged, and agentrt makes a new store only in a new or empty file. Check the path"
        )

    def _too_new(self, version: int) -> StoreSchemaTooNew:
        return StoreSchemaTooNew(
            f"store {self.path!r} has schema version {version}, written by a newer agentrt; this agentrt "
            f"understands up to version {SCHEMA_VERSION}. Upgrade agentrt, or use another store."
        )

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"

    # ------------------------------------------------------------------ setup and errors

    def _setup(self, synchronous: str, create: bool) -> None:
        conn = self._conn
        assert conn is not None
        version = conn.execute("PRAGMA user_version").fetchone()[
            0
        ]  # reads the header: fails if not a database
        if version > SCHEMA_VERSION:
            raise self._too_new(version)
        if version == 0 and (not create or self._has_tables()):
            # a new store is made only in a new or empty file: a SQLite file of another program's
            # (tables, no agentrt schema) is refused before anything -- WAL mode included -- touches it
            raise self._not_a_store()
        if version == 0:
            # A new file (the setting is ignored once the file has tables or is in WAL mode): pages
            # of 2 KiB instead of 4 KiB halve what a step's few changed pages write to the WAL, and
            # measured faster for checkpoints up to a few KiB; 7% slower at 16 KiB (issue 16).
            conn.execute(f"PRAGMA page_size={PAGE_SIZE_BYTES}")
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal" and self.path != ":memory:":  # in memory: journal_mode=memory
            raise StoreError(f"store {self.path!r}: cannot switch to WAL journal mode (got {mode!r})")
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, got {synchronous!r}")
        conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
        conn.execute("PRAGMA foreign_keys=ON")
        if version < SCHEMA_VERSION:
            self._migrate()

    def _migrate(self) -> None:
        conn = self._conn
        assert conn is not None
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]  # re-read under the write lock
            for target in range(version, SCHEMA_VERSION):
                for statement in _statements(MIGRATIONS[target]):
                    conn.execute(statement)
                if target == 1:
                    from agentrt._version import __version__

                    conn.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES ('created_by', ?)",
                        (f"agentrt {__version__}",),
                    )
                if target == 10 and version > 0 and self.path != ":memory:":
                    # the key file beside the database signs the heads (made now if it is missing)
                    ring = _keys.store_keyring(self.path, create=True)
                    if ring is not None:  # pragma: no branch - else the key file failed: the open fails later
                        self._seal_migrated(conn, ring)
                conn.execute(f"PRAGMA user_version={target + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _store_error(self, exc: BaseException) -> StoreError:
        text = str(exc)
        lowered = text.lower()
        if "locked" in lowered or "busy" in lowered:
            return StoreLocked(
                f"store {self.path!r} is locked by another process "
                f"(waited {self.busy_timeout_seconds:g} s): {text}. "
                "Wait for it to finish, or raise the wait with AGENTRT_STORE_TIMEOUT=SECONDS."
            )
        if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
            return StoreCorrupt(
                f"store {self.path!r} is not a valid agentrt store ({text}). Use another file; keep "
                "this one aside for inspection rather than deleting it."
            )
        if "readonly" in lowered or "unable to open" in lowered:
            return StoreError(
                f"store {self.path!r} cannot be opened for writing ({text}); check the path and permissions"
            )
        return StoreError(f"store {self.path!r}: {type(exc).__name__}: {text}")

    def _tx(self) -> _Transaction:
        """A write transaction (``BEGIN IMMEDIATE``: takes the write lock up front); ``with`` it."""
        return _Transaction(self)

    def _q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            if self._conn is None:
                raise StoreError(f"store {self.path!r} is closed")
            return self._conn.execute(sql, params).fetchall()

    # ------------------------------------------------------------------ wake-ups

    def _notify(self, conn: object = None) -> None:
        """Wake this process's ``wait_for_work`` (other processes see the commit within 50 ms)."""
        with self._work:
            self._generation += 1
            self._work.notify_all()

    def wait_for_work(self, timeout: float) -> bool:
        """Wake on this process's own writes at once, on other processes' commits within 50 ms
        (``PRAGMA data_version`` changes when another connection commits to the file)."""
        deadline = time.monotonic() + timeout
        with self._work:
            generation = self._generation
        start_version = self._data_version()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            with self._work:
                if self._work.wait_for(lambda: self._generation != generation, min(remaining, _POLL_SECONDS)):
                    return True
            if self._data_version() != start_version:
                return True

    def _data_version(self) -> int | None:
        try:
            rows = self._q("PRAGMA data_version")
        except (sqlite3.Error, StoreError):
            return None
        return int(rows[0][0]) if rows else None

    # ------------------------------------------------------------------ the durable stream, tenants

    @translated
    def append_stream(self, run_id: str, kind: str, data: Any) -> int:
        data_json = stream_json(data)
        with self._lock:  # after anything queued before it, in the same transaction
            self._stream_queue.append((run_id, kind, data_json, time.time()))
            with self._tx():
                pass
            return self._stream_last[run_id]

    def queue_stream(self, run_id: str, kind: str, data_json: str) -> None:
        """Queue one event (its data already JSON text) for the run's stream: the next write transaction
        of this store writes it first, so a step's events share the commit of its journal entry or
        checkpoint instead of costing one commit each.  ``flush_stream`` writes the queue at once;
        ``read_stream`` and ``close`` do so first.  Ids are given when written (the run's last + 1)."""
        with self._lock:
            self._stream_queue.append((run_id, kind, data_json, time.time()))

    @translated
    def flush_stream(self) -> None:
        """Write the queued stream events now (one transaction), if there are any."""
        with self._lock:
            if self._stream_queue:
                with self._tx():
                    pass

    def _write_stream(self, conn: sqlite3.Connection, queued: list[tuple[str, str, str, float]]) -> None:
        """Write the queued events, numbering each run's after its last id.

        A run's ids are 1, 2, 3... with no gap and none ever deleted, so the first id after the
        last this store wrote is free exactly when no other connection wrote to that run's stream
        since: the insert itself is the check, and only a conflict costs a look at the stored
        last id (``_stream_last`` is dropped when a transaction rolls back)."""
        by_run: dict[str, list[tuple[str, str, float]]] = {}
        for run_id, kind, data_json, created in queued:
            by_run.setdefault(run_id, []).append((kind, data_json, created))
        for run_id, events in by_run.items():
            last = self._stream_last.get(run_id)
            if last is not None:
                try:
                    self.dialect.insert_rows(conn, "stream", STREAM_COLUMNS, _numbered(run_id, last, events))
                except sqlite3.IntegrityError:  # another process wrote to this run's stream
                    pass  # the conflicting row was the first of this run's: none of them was written
                else:
                    self._stream_last[run_id] = last + len(events)
                    continue
            (last,) = conn.execute(
                "SELECT COALESCE(MAX(id), 0) FROM stream WHERE run_id = ?", (run_id,)
            ).fetchone()
            self.dialect.insert_rows(conn, "stream", STREAM_COLUMNS, _numbered(run_id, last, events))
            if len(self._stream_last) >= _MAX_STREAM_RUNS:
                self._stream_last.clear()
            self._stream_last[run_id] = last + len(events)

    @translated
    def read_stream(self, run_id: str, after: int = 0, limit: int | None = None) -> list[StreamEvent]:
        if self._stream_queue:
            self.flush_stream()
        return super().read_stream(run_id, after, limit)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                with suppress(sqlite3.Error, StoreError):
                    self.flush_stream()
                with suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None


class _Transaction:
    """``with store._tx() as conn``: the store's lock and one write transaction, which first writes the
    queued stream events; committed at the end of the block, rolled back (the events queued again)
    if anything in it raises.  A class, not a ``@contextmanager`` generator: every step opens one."""

    __slots__ = ("conn", "queued", "store")

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.queued: list[tuple[str, str, str, float]] = []

    def __enter__(self) -> sqlite3.Connection:
        store = self.store
        store._lock.acquire()
        try:
            conn = store._conn
            if conn is None:
                raise StoreError(f"store {store.path!r} is closed")
            conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            store._lock.release()
            raise
        self.conn = conn
        self.queued, store._stream_queue = store._stream_queue, []
        if self.queued:
            try:
                store._write_stream(conn, self.queued)
            except BaseException:
                self._abort()
                raise
        return conn

    def __exit__(self, exc_type: type[BaseException] | None, exc: object, tb: object) -> None:
        if exc_type is not None:
            self._abort()
            return
        try:
            self.conn.execute("COMMIT")
        except BaseException:
            self._abort()
            raise
        self.store._lock.release()

    def _abort(self) -> None:
        store = self.store
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        finally:
            store._stream_queue[:0] = self.queued  # written by the next transaction instead
            store._stream_last.clear()  # the ids given in this transaction were not written
            store._lock.release()


def _numbered(
    run_id: str, last: int, events: list[tuple[str, str, float]]
) -> list[tuple[str, int, str, str, float]]:
    return [(run_id, last + n, kind, data, created) for n, (kind, data, created) in enumerate(events, 1)]


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (``executescript`` would commit our transaction)."""
    out, buf = [], []
    for line in script.splitlines():
        buf.append(line)
        candidate = "\n".join(buf).strip()
        if candidate.endswith(";") and sqlite3.complete_statement(candidate):
            out.append(candidate)
            buf = []
    rest = "\n".join(buf).strip()
    if rest:
        out.append(rest)
    return out
