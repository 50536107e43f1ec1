"""``SqliteStore``: runs, checkpoints, journal and events in one SQLite file.

- WAL journal, ``synchronous=NORMAL`` by default (a committed checkpoint survives
  a crash of the process; ``synchronous="FULL"`` also survives a power loss).
- Versioned schema: ``PRAGMA user_version`` and a list of migrations applied in
  order; a file from a newer agentrt is refused with a clear message.
- Safe across processes on one machine: a lease (owner + expiry + epoch) on each
  run row, so two processes never drive one run at once; a lease whose owner pid
  is dead on this machine is taken over at once, any other one when it expires.
  Writes carrying an epoch are fenced inside their transaction (``BEGIN
  IMMEDIATE`` serializes writers, so a claim and a fenced write never interleave).
  Several worker processes may share one file.
- ``sqlite3`` errors are translated once, here, into :class:`StoreError`
  subclasses that say what happened and what to do.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import suppress
from typing import Any, TypeVar  # Any: sqlite3 rows; JSON columns

import attrs

from agentrt import keys as _keys
from agentrt.exceptions import LeaseHeld, RunExists, RunNotFound
from agentrt.stores import _identity
from agentrt.stores._rows import RowDecoder, json_column, load_json_or_damaged
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
    StoreLocked,
    StoreNotFound,
    StoreSchemaTooNew,
    StreamEvent,
    add_usage,
    claim_within_limits,
    is_answered,
    lease_lost,
    owner_is_dead,
    prune_due,
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

__all__ = ["SCHEMA_VERSION", "SqliteStore"]

F = TypeVar("F", bound=Callable[..., Any])

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
]
SCHEMA_VERSION = len(MIGRATIONS)
#: The page size of a new store file (an existing one keeps its own).
PAGE_SIZE_BYTES = 2048

_RUN_COLUMNS = (
    "run_id, agent, status, input, output, error, error_blob, seq, pending, waiting_on, wake_at, "
    "parent_id, parent_seq, parent_idx, created_at, updated_at, lease_owner, lease_expires, usage, "
    "epoch, priority, cancel_requested, deadline, code_required, blocked, head"
)
_INSERT_STREAM = "INSERT INTO stream (run_id, id, kind, data, created_at) VALUES (?, ?, ?, ?, ?)"
#: How many runs' last stream ids a store remembers before it forgets them all (then looks them up).
_MAX_STREAM_RUNS = 4096
_HOST_PREFIX = socket.gethostname() + "/"
#: How often ``wait_for_work`` looks at the file for commits of other processes.
_POLL_SECONDS = 0.05


def _translate(method: F) -> F:
    """Turn ``sqlite3`` errors into :class:`StoreError` subclasses naming the file and the fix."""

    @functools.wraps(method)
    def wrapper(self: SqliteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise self._translate_error(exc) from None

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps method's signature; mypy sees a new one


#: ``json.dumps(value, separators=(",", ":"))``'s encoder, without building it at every call
_COMPACT = json.JSONEncoder(separators=(",", ":"))
_C_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # the C accelerator, when there is one


def _dumps(value: Any) -> str | None:
    """Compact JSON text (the same as ``json.dumps(value, separators=(",", ":"))``), or None."""
    if value is None:
        return None
    if _C_MAKE_ENCODER is None or type(value) is not dict:
        return _COMPACT.encode(value)
    # a dict (every JSON column but a run's input): the C encoder with a fresh cycle check
    encode = _C_MAKE_ENCODER(
        {}, _COMPACT.default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True
    )
    return "".join(encode(value, 0))


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _usage(d: RowDecoder, text: object) -> dict[str, int]:
    """The ``usage`` column: a JSON object of counts (anything else is damage)."""
    usage = d.json("usage", text, dict) or {}
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in usage.values()):
        d.mark("usage", "a JSON object whose values are not all integer counts")
        return {}
    return usage


class SqliteStore:
    """The default store: one SQLite file (created with its directory on first use).

    ``read_only=True`` is how the commands that only look (``agentrt runs``, ``show``, ``dump``,
    ``diff``, ``upgrade --dry-run``) open it: the file is opened through SQLite's ``mode=ro``, so
    nothing is created, migrated or written, and a missing file or a SQLite file that is not an
    agentrt store is :class:`StoreNotFound` instead of a new store.  ``create=False`` (the commands
    that act on existing runs: ``resume``, ``reply``, ``cancel``, ``fork``, ``upgrade``) writes but
    refuses a missing file the same way, so a mistyped path is not a new empty store.
    """

    #: ``save_checkpoint(..., journal=...)`` journals results in the checkpoint's transaction
    journals_with_checkpoint = True

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
        self.retention = retention
        self.read_only = read_only
        if busy_timeout_seconds is None:
            busy_timeout_seconds = float(os.environ.get("AGENTRT_STORE_TIMEOUT", "5"))
        self.busy_timeout_seconds = busy_timeout_seconds
        self._lock = threading.RLock()
        self._work = threading.Condition()
        self._generation = 0  # bumped by this process's writes that may make work runnable
        #: stream events queued by ``queue_stream``, written by the next write transaction
        self._stream_queue: list[tuple[str, str, str, float]] = []
        #: run id -> the last stream id this store wrote for it (see ``_write_stream``)
        self._stream_last: dict[str, int] = {}
        self._conn: sqlite3.Connection | None = None
        self._pruned_at = 0.0  # when this handle last deleted long-gone worker rows
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
            raise self._translate_error(exc) from None
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
            raise self._translate_error(exc) from None

    def _load_identity(self) -> None:
        """``store_id`` (the identity blobs are sealed for) and whether it takes legacy blobs."""
        meta = dict(self._q("SELECT key, value FROM meta WHERE key IN ('store_id', 'legacy_blobs')"))
        store_id = meta.get("store_id")
        if not isinstance(store_id, str) or not store_id:
            raise StoreCorrupt(
                f"store {self.path!r} has no store id in its meta table (it was edited); keep the "
                "file aside for inspection and move its runs with `agentrt move` from a copy"
            )
        #: the store's identity (``agentrt show --store S --json`` prints it), sealed into every blob
        self.store_id: str = store_id
        #: the store was migrated from an agentrt without store identities: blobs sealed for no store
        #: are taken (signed marker; see ``agentrt.stores._identity``)
        self.legacy_blobs = _identity.legacy_marker_valid(
            _keys.keyring_for_store(self) if "legacy_blobs" in meta else None,
            store_id,
            meta.get("legacy_blobs"),
        )

    def _head(self, run_id: str, seq: int, blob: bytes | None, finished: bool) -> str:
        """The signed head of ``run_id`` with newest checkpoint ``seq`` (``blob``; None: none)."""
        digest = _identity.blob_digest(blob) if blob is not None else b""
        return _identity.make_head(
            _keys.keyring_for_store(self), self.store_id, run_id, seq, digest, finished
        )

    def _head_at(self, conn: sqlite3.Connection, run_id: str, seq: int, finished: bool) -> str:
        row = conn.execute(
            "SELECT blob FROM checkpoints WHERE run_id = ? AND seq = ?", (run_id, seq)
        ).fetchone()
        return self._head(run_id, seq, bytes(row[0]) if row else None, finished)

    def _connect(self) -> sqlite3.Connection:
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
        if str(mode).lower() != "wal":
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
                if target == 10 and version > 0:
                    self._seal_migrated(conn)
                conn.execute(f"PRAGMA user_version={target + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _seal_migrated(self, conn: sqlite3.Connection) -> None:
        """Migration to store identities: each run already here gets its signed head, and the store a
        signed note that it holds blobs sealed for no store (which it then keeps accepting)."""
        if self.path == ":memory:":
            return
        ring = _keys.store_keyring(self.path, create=True)
        if ring is None:  # pragma: no cover - the key file could not be made: the open fails later
            return
        (store_id,) = conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
        rows = conn.execute(
            "SELECT r.run_id, r.seq, r.status, c.blob FROM runs r LEFT JOIN checkpoints c "
            "ON c.run_id = r.run_id AND c.seq = (SELECT max(seq) FROM checkpoints WHERE run_id = r.run_id)"
        ).fetchall()
        for run_id, seq, status, blob in rows:
            digest = _identity.blob_digest(bytes(blob)) if blob is not None else b""
            head = _identity.make_head(ring, store_id, run_id, int(seq), digest, status in FINAL)
            conn.execute("UPDATE runs SET head = ? WHERE run_id = ?", (head, run_id))
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('legacy_blobs', ?)",
            (_identity.legacy_marker(ring, store_id),),
        )

    def _translate_error(self, exc: sqlite3.Error) -> StoreError:
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

    def _q(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            if self._conn is None:
                raise StoreError(f"store {self.path!r} is closed")
            return self._conn.execute(sql, params).fetchall()

    @staticmethod
    def _record(row: tuple[Any, ...]) -> RunRecord:
        """The record of a ``runs`` row (SQLite and PostgreSQL): a damaged column is defaulted and
        named in ``RunRecord.damaged`` (see ``agentrt.stores._rows``), never raised."""
        (run_id, agent, status, input_, output, error, error_blob, seq, pending, waiting_on, wake_at,
         parent_id, parent_seq, parent_idx, created_at, updated_at, lease_owner, lease_expires, usage,
         epoch, priority, cancel_requested, deadline, code_required, blocked, head,
         ) = row  # fmt: skip
        d = RowDecoder()
        number = (int, float)
        rec = RunRecord(
            run_id=d.required("run_id", run_id, str, str(run_id)),
            agent=d.required("agent", agent, str, "?"),
            status=d.required("status", status, str, "?"),
            input=d.json("input", input_),
            output=d.json("output", output),
            error=d.json("error", error, dict),
            error_blob=d.of("error_blob", error_blob, (bytes, memoryview)),
            seq=d.of("seq", seq, int, 0),
            pending=d.json("pending", pending, dict),
            waiting_on=d.of("waiting_on", waiting_on, str),
            wake_at=d.of("wake_at", wake_at, number),
            parent_id=d.of("parent_id", parent_id, str),
            parent_seq=d.of("parent_seq", parent_seq, int),
            parent_idx=d.of("parent_idx", parent_idx, int),
            created_at=d.of("created_at", created_at, number, 0.0),
            updated_at=d.of("updated_at", updated_at, number, 0.0),
            lease_owner=d.of("lease_owner", lease_owner, str),
            lease_expires=d.of("lease_expires", lease_expires, number),
            usage=_usage(d, usage),
            epoch=d.of("epoch", epoch, int, 0),
            priority=d.of("priority", priority, int, 0),
            cancel_requested=bool(d.of("cancel_requested", cancel_requested, (int, bool), 0)),
            deadline=d.of("deadline", deadline, number),
            code_required=d.of("code_required", code_required, str),
            blocked=d.json("blocked", blocked, dict),
            head=head if isinstance(head, str) else None,
        )
        return rec if d.damaged is None else attrs.evolve(rec, damaged=d.damaged)

    # ------------------------------------------------------------------ runs

    @_translate
    def create_run(self, run: NewRun) -> RunRecord:
        now = time.time()
        with self._tx() as conn:
            try:
                conn.execute(
                    "INSERT INTO runs (run_id, agent, status, input, parent_id, parent_seq, parent_idx, "
                    "created_at, updated_at, priority, lease_owner, lease_expires, epoch, deadline, head) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                )
            except sqlite3.IntegrityError:
                raise RunExists(
                    f"a run with id {run.run_id!r} already exists in {self.path}; choose another run_id"
                ) from None
            # The tenant row is written with the run, never before: an older row for this id (written
            # by a version that recorded tenants before validating) must not claim the new run.
            conn.execute("DELETE FROM tenants WHERE run_id = ?", (run.run_id,))
            if run.tenant is not None:
                conn.execute("INSERT INTO tenants (run_id, tenant) VALUES (?, ?)", (run.run_id, run.tenant))
        if run.owner is None:
            self._notify()
        rec = self.get_run(run.run_id)
        assert rec is not None
        return rec

    @_translate
    def get_run(self, run_id: str) -> RunRecord | None:
        rows = self._q(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,))
        return self._record(rows[0]) if rows else None

    @_translate
    def list_runs(self, status: str | None = None, limit: int | None = None) -> list[RunRecord]:
        sql = f"SELECT {_RUN_COLUMNS} FROM runs"
        params: tuple[Any, ...] = ()
        if status is not None:
            sql += " WHERE status = ?"
            params = (status,)
        sql += " ORDER BY created_at DESC, run_id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [self._record(r) for r in self._q(sql, params)]

    @_translate
    def children(self, run_id: str) -> list[RunRecord]:
        rows = self._q(f"SELECT {_RUN_COLUMNS} FROM runs WHERE parent_id = ? ORDER BY created_at", (run_id,))
        return [self._record(r) for r in rows]

    # ------------------------------------------------------------------ leases

    @_translate
    def acquire_lease(self, run_id: str, owner: str, ttl_seconds: float) -> RunRecord:
        with self._tx() as conn:
            row = conn.execute(
                "SELECT lease_owner, lease_expires FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is None:
                raise RunNotFound(run_id, self.path)
            held_by, expires = row
            now = time.time()
            if (
                held_by not in (None, owner)
                and expires is not None
                and expires > now
                and not owner_is_dead(held_by)
            ):
                raise LeaseHeld(run_id, held_by, expires - now)
            conn.execute(
                "UPDATE runs SET lease_owner = ?, lease_expires = ?, "
                "epoch = CASE WHEN lease_owner IS ? THEN epoch ELSE epoch + 1 END WHERE run_id = ?",
                (owner, now + ttl_seconds, owner, run_id),
            )
            row = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return self._record(row)

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
        with self._tx() as conn:  # BEGIN IMMEDIATE: claims are serialized, limits hold across processes
            dead = [
                o
                for (o,) in conn.execute(
                    "SELECT DISTINCT lease_owner FROM runs WHERE lease_owner IS NOT NULL "
                    "AND substr(lease_owner, 1, ?) = ? AND lease_expires > ? "
                    "AND status IN ('queued', 'running', 'waiting')",
                    (len(_HOST_PREFIX), _HOST_PREFIX, now),
                )
                if owner_is_dead(o)
            ]
            driven = self._driven(conn, list(limits), dead, now) if limits else {}
            ids = claim_within_limits(
                lambda full, skip, want: self._runnable(conn, now, dead, agents, full, skip, want, skip_code),
                driven,
                limits,
                limit,
            )
            if not ids:
                return []
            rows = conn.execute(
                "UPDATE runs SET lease_owner = ?, lease_expires = ?, epoch = epoch + 1, "
                "status = CASE WHEN status = 'queued' THEN 'running' ELSE status END "
                f"WHERE run_id IN ({','.join('?' * len(ids))}) RETURNING {_RUN_COLUMNS}",
                (owner, now + ttl_seconds, *ids),
            ).fetchall()
        order = {run_id: i for i, run_id in enumerate(ids)}
        return sorted((self._record(r) for r in rows), key=lambda r: order[r.run_id])

    @staticmethod
    def _runnable(
        conn: sqlite3.Connection,
        now: float,
        dead: list[str],
        agents: list[str] | None,
        full: set[str],
        skip: list[str],
        limit: int,
        lacking: list[str],
    ) -> list[tuple[str, str]]:
        """``(run_id, agent)`` of up to ``limit`` runnable runs, best first (see agentrt.stores.base).

        Runnable also: a parent parked on a sub-run that finished while its outcome was never
        journaled for the parent (a worker died between the two writes).  ``lacking``: code the
        claimer cannot restore (its runs are passed over).
        """
        sql = (
            "SELECT run_id, agent FROM runs WHERE status IN ('queued', 'running', 'waiting') "
            "AND (lease_owner IS NULL OR lease_expires IS NULL OR lease_expires <= ?"
            + "".join(" OR lease_owner = ?" for _ in dead)
            + ") AND (status != 'waiting' OR (wake_at IS NOT NULL AND wake_at <= ?) "
            "OR (waiting_on = 'child' AND EXISTS (SELECT 1 FROM runs c WHERE c.parent_id = runs.run_id "
            "AND c.parent_seq = runs.seq AND c.status IN ('completed', 'failed', 'cancelled') "
            "AND NOT EXISTS (SELECT 1 FROM results x WHERE x.run_id = runs.run_id AND x.seq = runs.seq "
            "AND x.idx = COALESCE(c.parent_idx, 0)))))"
        )
        params: list[Any] = [now, *dead, now]
        if agents is not None:
            sql += " AND agent IN (" + ",".join("?" * len(agents)) + ")"
            params.extend(agents)
        if full:
            sql += " AND agent NOT IN (" + ",".join("?" * len(full)) + ")"
            params.extend(full)
        if skip:
            sql += " AND run_id NOT IN (" + ",".join("?" * len(skip)) + ")"
            params.extend(skip)
        if lacking:
            sql += (
                " AND (code_required IS NULL OR code_required NOT IN (" + ",".join("?" * len(lacking)) + "))"
            )
            params.extend(lacking)
        sql += " ORDER BY priority DESC, created_at, run_id LIMIT ?"
        params.append(int(limit))
        return [(r[0], r[1]) for r in conn.execute(sql, params)]

    @staticmethod
    def _driven(conn: sqlite3.Connection, agents: list[str], dead: list[str], now: float) -> dict[str, int]:
        """How many runs of each of ``agents`` a live process drives (a live lease) right now."""
        rows = conn.execute(
            "SELECT agent, count(*) FROM runs WHERE status IN ('queued', 'running', 'waiting') "
            f"AND agent IN ({','.join('?' * len(agents))}) AND lease_owner IS NOT NULL "
            "AND lease_expires > ?" + "".join(" AND lease_owner != ?" for _ in dead) + " GROUP BY agent",
            (*agents, now, *dead),
        ).fetchall()
        return {agent: n for agent, n in rows}

    @_translate
    def renew_leases(self, owner: str, run_ids: list[str], ttl_seconds: float) -> list[str]:
        if not run_ids:
            return []
        expires = time.time() + ttl_seconds
        with self._tx() as conn:
            held = {
                r[0]
                for r in conn.execute(
                    f"UPDATE runs SET lease_expires = ? WHERE lease_owner = ? "
                    f"AND run_id IN ({','.join('?' * len(run_ids))}) RETURNING run_id",
                    (expires, owner, *run_ids),
                )
            }
        return [run_id for run_id in run_ids if run_id not in held]

    @_translate
    def release_lease(self, run_id: str, owner: str) -> None:
        with self._tx() as conn:
            rows = conn.execute(
                "UPDATE runs SET lease_owner = NULL, lease_expires = NULL "
                "WHERE run_id = ? AND lease_owner = ? RETURNING status, wake_at",
                (run_id, owner),
            ).fetchall()
        if rows and (rows[0][0] in ("queued", "running") or rows[0][1] is not None):
            self._notify()

    def _check_owner(
        self, conn: sqlite3.Connection, run_id: str, owner: str, epoch: int | None = None
    ) -> tuple[Any, ...]:
        row: tuple[Any, ...] | None = conn.execute(
            "SELECT lease_owner, status, epoch FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        if row is None:
            raise RunNotFound(run_id, self.path)
        if row[0] != owner or (epoch is not None and row[2] != epoch):
            raise lease_lost(run_id, row[0], row[2], epoch)
        return row

    # ------------------------------------------------------------------ cancellation and wake-ups

    @_translate
    def request_cancel(self, run_id: str) -> list[str]:
        now = time.time()
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
                raise RunNotFound(run_id, self.path)
            rows = conn.execute(
                "WITH RECURSIVE tree(id) AS (SELECT ? UNION ALL "
                "SELECT runs.run_id FROM runs JOIN tree ON runs.parent_id = tree.id) "
                "SELECT run_id FROM runs WHERE run_id IN (SELECT id FROM tree) "
                "AND status NOT IN ('completed', 'failed', 'cancelled')",
                (run_id,),
            ).fetchall()
            ids = [r[0] for r in rows]
            for rid in ids:
                conn.execute(
                    "UPDATE runs SET cancel_requested = 1, updated_at = ?, "
                    "lease_owner = NULL, lease_expires = NULL, "
                    "wake_at = CASE WHEN status = 'waiting' THEN ? ELSE wake_at END, "
                    "status = CASE WHEN status = 'blocked' OR (status = 'queued' AND NOT EXISTS "
                    "(SELECT 1 FROM checkpoints c WHERE c.run_id = runs.run_id)) "
                    "THEN 'cancelled' ELSE status END "
                    "WHERE run_id = ?",
                    (now, now, rid),
                )
        self._notify()
        return ids

    @_translate
    def next_wake_at(self) -> float | None:
        rows = self._q("SELECT min(wake_at) FROM runs WHERE status = 'waiting' AND wake_at IS NOT NULL")
        return rows[0][0] if rows else None

    def _notify(self) -> None:
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
        journal: Sequence[tuple[int, int, bool, bytes]] = (),
        code_required: str | None = None,
    ) -> None:
        """Store checkpoint ``seq``; ``journal`` holds ``(seq, idx, ok, blob)`` results to journal in the
        same transaction (the result that answered the previous request: one commit per step)."""
        now = time.time()
        pending_json = _dumps(pending)
        head = self._head(run_id, seq, blob, False)
        with self._tx() as conn:
            # The common step -- the run is ours, running, with nothing to clear -- is fenced and
            # recorded by this one statement, which leaves the indexed columns out (naming them
            # rewrites their index entries, which cost as much as the rest of the step).
            cur = conn.execute(
                "UPDATE runs SET seq = ?, pending = ?, updated_at = ?, code_required = ?, head = ? "
                "WHERE run_id = ? AND lease_owner = ? AND (? IS NULL OR epoch = ?) AND status = 'running' "
                "AND waiting_on IS NULL AND wake_at IS NULL",
                (seq, pending_json, now, code_required, head, run_id, owner, epoch, epoch),
            )
            if cur.rowcount != 1:  # not ours (LeaseLost), or it was waiting: the general case
                self._check_owner(conn, run_id, owner, epoch)
                conn.execute(
                    "UPDATE runs SET seq = ?, pending = ?, status = 'running', waiting_on = NULL, "
                    "wake_at = NULL, updated_at = ?, code_required = ?, blocked = NULL, head = ? "
                    "WHERE run_id = ?",
                    (seq, pending_json, now, code_required, head, run_id),
                )
            for r_seq, idx, ok, r_blob in journal:
                cur = conn.execute(
                    "INSERT OR IGNORE INTO results (run_id, seq, idx, ok, blob, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (run_id, r_seq, idx, int(ok), r_blob, now),
                )
                if cur.rowcount != 1:  # only a driver that lost its lease could meet this
                    raise StoreError(
                        f"store {self.path!r}: run {run_id!r} already has a result for seq {r_seq} "
                        f"member {idx}, journaled by another driver; nothing was written, and the run "
                        "is driven again from its stored checkpoint and journal"
                    )
            conn.execute(
                "INSERT OR REPLACE INTO checkpoints (run_id, seq, blob, pending, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (run_id, seq, blob, pending_json, now),
            )
            self._insert_events(conn, run_id, events, now)
            if prune_due(seq, self.retention):
                self._prune(conn, run_id, seq)

    def _prune(self, conn: sqlite3.Connection, run_id: str, seq: int) -> None:
        """Drop the checkpoints and journal entries older than the newest ``retention``."""
        if self.retention is not None and seq > self.retention:
            cutoff = seq - self.retention
            conn.execute("DELETE FROM checkpoints WHERE run_id = ? AND seq <= ?", (run_id, cutoff))
            conn.execute("DELETE FROM results WHERE run_id = ? AND seq <= ?", (run_id, cutoff))
            conn.execute("DELETE FROM replaced_checkpoints WHERE run_id = ? AND seq <= ?", (run_id, cutoff))

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
                "SELECT max(seq) FROM checkpoints WHERE run_id = ?", (run_id,)
            ).fetchone()
            (last_n,) = conn.execute(
                "SELECT max(n) FROM events WHERE run_id = ? AND seq = ?", (run_id, seq)
            ).fetchone()
            n = 0 if last_n is None else int(last_n) + 1
            if newest is not None and seq == newest:
                conn.execute(
                    "INSERT INTO replaced_checkpoints (run_id, seq, n, blob, created_at) "
                    "SELECT run_id, seq, ?, blob, created_at FROM checkpoints WHERE run_id = ? AND seq = ?",
                    (n, run_id, seq),
                )
                conn.execute(
                    "UPDATE checkpoints SET blob = ?, pending = ? WHERE run_id = ? AND seq = ?",
                    (blob, pending_json, run_id, seq),
                )
                (status,) = conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
                conn.execute(
                    "UPDATE runs SET code_required = ?, head = ? WHERE run_id = ?",
                    (code_required, self._head(run_id, seq, blob, status in FINAL), run_id),
                )
            elif newest is None or seq > newest:
                for idx, ok, r_blob in journal:
                    conn.execute(
                        "INSERT OR IGNORE INTO results (run_id, seq, idx, ok, blob, created_at) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (run_id, seq, idx, int(ok), r_blob, now),
                    )
                conn.execute(
                    "INSERT INTO checkpoints (run_id, seq, blob, pending, created_at) VALUES (?, ?, ?, ?, ?)",
                    (run_id, seq, blob, pending_json, now),
                )
                conn.execute(
                    "UPDATE runs SET seq = ?, pending = ?, status = 'running', waiting_on = NULL, "
                    "wake_at = NULL, code_required = ?, updated_at = ?, blocked = NULL, output = NULL, "
                    "error = NULL, error_blob = NULL, head = ? WHERE run_id = ?",
                    (seq, pending_json, code_required, now, self._head(run_id, seq, blob, False), run_id),
                )
            else:
                raise StoreError(
                    f"store {self.path!r}: run {run_id!r} has checkpoints up to {newest}; an upgrade "
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
            if self._check_owner_or_finished(conn, run_id, owner, epoch) is None:
                return False
            self._insert_events(conn, run_id, events, now)
            conn.execute(
                "UPDATE runs SET status = 'blocked', blocked = ?, waiting_on = NULL, wake_at = NULL, "
                "lease_owner = NULL, lease_expires = NULL, updated_at = ? WHERE run_id = ?",
                (_dumps(blocked), now, run_id),
            )
        return True

    @_translate
    def reopen_run(
        self, run_id: str, owner: str, event: tuple[str, str | None, Any], *, epoch: int | None = None
    ) -> int:
        now = time.time()
        with self._tx() as conn:
            self._check_owner(conn, run_id, owner, epoch)
            (seq,) = conn.execute("SELECT seq FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            (last_n,) = conn.execute(
                "SELECT max(n) FROM events WHERE run_id = ? AND seq = ?", (run_id, seq)
            ).fetchone()
            n = 0 if last_n is None else int(last_n) + 1
            # a finished run's row forgot its pending request; its checkpoint did not
            conn.execute(
                "UPDATE runs SET status = 'running', blocked = NULL, output = NULL, error = NULL, "
                "error_blob = NULL, waiting_on = NULL, wake_at = NULL, updated_at = ?, head = ?, "
                "pending = COALESCE((SELECT c.pending FROM checkpoints c WHERE c.run_id = runs.run_id "
                "AND c.seq = runs.seq), pending) WHERE run_id = ?",
                (now, self._head_at(conn, run_id, seq, False), run_id),
            )
            self._insert_events(conn, run_id, [(seq, n, *event)], now)
        return n

    @_translate
    def replaced_checkpoints(self, run_id: str) -> list[ReplacedCheckpoint]:
        rows = self._q(
            "SELECT seq, n, blob, created_at FROM replaced_checkpoints WHERE run_id = ? ORDER BY seq, n",
            (run_id,),
        )
        return [ReplacedCheckpoint(s, n, bytes(b), t) for s, n, b, t in rows]

    @_translate
    def latest_checkpoint(self, run_id: str) -> tuple[int, bytes] | None:
        rows = self._q(
            "SELECT seq, blob FROM checkpoints WHERE run_id = ? ORDER BY seq DESC LIMIT 1", (run_id,)
        )
        return (rows[0][0], bytes(rows[0][1])) if rows else None

    @_translate
    def get_checkpoint(self, run_id: str, seq: int) -> bytes | None:
        rows = self._q("SELECT blob FROM checkpoints WHERE run_id = ? AND seq = ?", (run_id, seq))
        return bytes(rows[0][0]) if rows else None

    @_translate
    def list_checkpoints(self, run_id: str) -> list[CheckpointInfo]:
        rows = self._q(
            "SELECT seq, length(blob), created_at, pending FROM checkpoints WHERE run_id = ? ORDER BY seq",
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
        woke = False
        with self._tx() as conn:
            row = conn.execute(
                "SELECT usage, status, seq, pending, lease_owner, epoch FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if owner is not None:
                if row is None:
                    raise RunNotFound(run_id, self.path)
                if row[4] != owner or (epoch is not None and row[5] != epoch):
                    raise lease_lost(run_id, row[4], row[5], epoch)
            cur = conn.execute(
                "INSERT OR IGNORE INTO results (run_id, seq, idx, ok, blob, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, seq, idx, int(ok), blob, now),
            )
            if cur.rowcount != 1:
                return False
            if row is None:
                return True
            if usage:
                total = add_usage(json_column(row[0], "usage", run_id, self.path), usage)
                conn.execute("UPDATE runs SET usage = ? WHERE run_id = ?", (_dumps(total), run_id))
            if (
                row[1] == "waiting"
                and row[2] == seq
                and is_answered(
                    json_column(row[3], "pending", run_id, self.path), self._oks(conn, run_id, seq)
                )
            ):
                conn.execute("UPDATE runs SET wake_at = ? WHERE run_id = ?", (now, run_id))
                woke = True
        if woke:
            self._notify()
        return True

    @staticmethod
    def _oks(conn: sqlite3.Connection, run_id: str, seq: int) -> dict[int, bool]:
        rows = conn.execute("SELECT idx, ok FROM results WHERE run_id = ? AND seq = ?", (run_id, seq))
        return {idx: bool(ok) for idx, ok in rows}

    @_translate
    def get_results(self, run_id: str, seq: int) -> dict[int, tuple[bool, bytes]]:
        rows = self._q("SELECT idx, ok, blob FROM results WHERE run_id = ? AND seq = ?", (run_id, seq))
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
            self._check_owner(conn, run_id, owner, epoch)
            seq, pending, cancel = conn.execute(
                "SELECT seq, pending, cancel_requested FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            pending = json_column(pending, "pending", run_id, self.path)
            if cancel or is_answered(pending, self._oks(conn, run_id, seq)):
                wake_at = now  # answered while the driver decided to park: a worker goes on with it
            self._prune(conn, run_id, seq)  # at rest, exactly the newest ``retention`` are kept
            self._insert_events(conn, run_id, events, now)
            conn.execute(
                "UPDATE runs SET status = 'waiting', waiting_on = ?, wake_at = ?, updated_at = ?, "
                "blocked = NULL WHERE run_id = ?",
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
            row = self._check_owner_or_finished(conn, run_id, owner, epoch)
            if row is None:
                return False
            self._prune(conn, run_id, row[3])  # at rest, exactly the newest ``retention`` are kept
            self._insert_events(conn, run_id, events, now)
            cur = conn.execute(
                "UPDATE runs SET status = ?, output = ?, error = ?, error_blob = ?, pending = NULL, "
                "waiting_on = NULL, blocked = NULL, "
                "wake_at = NULL, updated_at = ?, head = ? "
                "WHERE run_id = ? AND status NOT IN ('completed', 'failed', 'cancelled')",
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
            return cur.rowcount == 1

    def _check_owner_or_finished(
        self, conn: sqlite3.Connection, run_id: str, owner: str, epoch: int | None
    ) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = conn.execute(
            "SELECT lease_owner, status, epoch, seq FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        if row is None:
            raise RunNotFound(run_id, self.path)
        if row[1] in FINAL:
            return None
        if row[0] != owner or (epoch is not None and row[2] != epoch):
            raise lease_lost(run_id, row[0], row[2], epoch)
        return row

    # ------------------------------------------------------------------ events

    @staticmethod
    def _insert_events(conn: sqlite3.Connection, run_id: str, events: list[EventRow], now: float) -> None:
        if events:
            conn.executemany(
                "INSERT OR IGNORE INTO events (run_id, seq, n, kind, level, data, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (run_id, seq, n, kind, level, json.dumps(data), now)
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
                "SELECT seq, n, kind, level, data, created_at FROM (SELECT * FROM events WHERE run_id = ? "
                "ORDER BY seq DESC, n DESC LIMIT ?) ORDER BY seq, n",
                (run_id, int(limit)),
            )
        else:
            rows = self._q(
                "SELECT seq, n, kind, level, data, created_at FROM events WHERE run_id = ? ORDER BY seq, n",
                (run_id,),
            )
        return [EventRecord(s, n, k, lv, load_json_or_damaged(d, "data"), t) for s, n, k, lv, d, t in rows]

    # ------------------------------------------------------------------ the durable stream, tenants

    @_translate
    def append_stream(self, run_id: str, kind: str, data: Any) -> int:
        data_json = json.dumps(data, default=repr)
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

    @_translate
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
                    conn.executemany(_INSERT_STREAM, _numbered(run_id, last, events))
                except sqlite3.IntegrityError:  # another process wrote to this run's stream
                    pass  # the conflicting row was the first of this run's: none of them was written
                else:
                    self._stream_last[run_id] = last + len(events)
                    continue
            (last,) = conn.execute(
                "SELECT COALESCE(MAX(id), 0) FROM stream WHERE run_id = ?", (run_id,)
            ).fetchone()
            conn.executemany(_INSERT_STREAM, _numbered(run_id, last, events))
            if len(self._stream_last) >= _MAX_STREAM_RUNS:
                self._stream_last.clear()
            self._stream_last[run_id] = last + len(events)

    @_translate
    def read_stream(self, run_id: str, after: int = 0, limit: int | None = None) -> list[StreamEvent]:
        if self._stream_queue:
            self.flush_stream()
        sql = "SELECT id, kind, data, created_at FROM stream WHERE run_id = ? AND id > ? ORDER BY id"
        params: tuple[Any, ...] = (run_id, int(after))
        if limit:
            sql += " LIMIT ?"
            params += (int(limit),)
        return [StreamEvent(i, k, load_json_or_damaged(d, "data"), t) for i, k, d, t in self._q(sql, params)]

    @_translate
    def set_tenant(self, run_id: str, tenant: str) -> None:
        with self._tx() as conn:
            conn.execute("INSERT OR IGNORE INTO tenants (run_id, tenant) VALUES (?, ?)", (run_id, tenant))

    @_translate
    def get_tenant(self, run_id: str) -> str | None:
        # a tenant row counts only beside its run (a squatted id of an older agentrt's does not)
        rows = self._q(
            "SELECT t.tenant FROM tenants t JOIN runs r ON r.run_id = t.run_id WHERE t.run_id = ?", (run_id,)
        )
        return rows[0][0] if rows else None

    @_translate
    def tenant_runs(self, tenant: str) -> set[str]:
        rows = self._q(
            "SELECT t.run_id FROM tenants t JOIN runs r ON r.run_id = t.run_id WHERE t.tenant = ?", (tenant,)
        )
        return {r[0] for r in rows}

    # ------------------------------------------------------------------ the worker registry

    @_translate
    def advertise_worker(self, info: WorkerInfo) -> None:
        info = bounded(info)
        now = time.time()
        with self._tx() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO workers (owner, host, pid, started_at, last_seen, info) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (info.owner, info.host, info.pid, info.started_at, info.last_seen, to_json(info)),
            )
            if now - self._pruned_at >= PRUNE_EVERY_SECONDS:
                conn.execute(
                    "DELETE FROM workers WHERE owner IN "
                    "(SELECT owner FROM workers WHERE last_seen < ? LIMIT ?)",
                    (now - PRUNE_AFTER_SECONDS, PRUNE_BATCH),
                )
                self._pruned_at = now

    @_translate
    def list_workers(self) -> list[WorkerInfo]:
        rows = self._q(
            "SELECT owner, host, pid, started_at, last_seen, info FROM workers ORDER BY started_at, owner"
        )
        return [from_json(*row) for row in rows]

    @_translate
    def forget_worker(self, owner: str) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM workers WHERE owner = ?", (owner,))

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
