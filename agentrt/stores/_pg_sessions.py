"""Owner sessions on PostgreSQL: a lease owner's liveness, seen from every machine.

On one machine a killed worker is seen at once by its pid (``owner_is_dead``).  Across machines a
PostgreSQL store does better than waiting for the lease to lapse: each lease owner made with
``make_owner(session=True)`` (its id ends ``~s``) holds a session-level advisory lock, keyed by
its id, on a connection of its own (one per store handle, for all its owners) for as long as its
process lives.  When the process dies -- SIGKILL, OOM kill, a crash -- its operating system closes
the socket, the server ends that backend and the lock is gone; a claimer that finds no granted lock
for an ``~s`` owner with live leases (``pg_locks``) takes its runs at once, like a dead local pid.

The store takes an owner's lock before it writes that owner's first lease (``hold``, called by
every lease-taking write), so a live owner always holds its lock, except after its session ended
with the process alive: the server restarted or failed over, a proxy or ``idle_session_timeout``
closed the connection, the network reset it.  A keeper thread per handle waits on the connection
(no query while idle: it waits for the socket to become readable) and reconnects and takes the
locks again at once; and a handle judges others by their locks only once its own session has been
up :data:`SETTLE_SECONDS` (after a restart or a failover every session is new: the live owners
re-take their locks meanwhile).  Whatever slips through -- a live owner's session cut alone --
costs a takeover, never two drivers: every write is fenced by the lease epoch.

A lock that cannot be had (another session holds the key: a half-open old session of ours, or a
64-bit hash collision) makes the owner look alive, never dead: the lease's lapse takes over.
``PostgresStore(owner_sessions=False)`` or ``AGENTRT_PG_OWNER_SESSIONS=0`` (for a transaction
pooler that does not keep sessions, PgBouncer's transaction mode) turns this off: owners are made
without ``~s`` and another machine's dead worker is taken over when its lease lapses.
"""

from __future__ import annotations

import hashlib
import logging
import os
import select
import threading
import time
from collections.abc import Sequence
from contextlib import suppress
from typing import Any  # Any: psycopg connections and rows

__all__ = ["SETTLE_SECONDS", "OwnerSessions", "lock_key"]

logger = logging.getLogger("agentrt.stores")

#: A handle trusts the absence of another owner's lock once its own session is this old.
SETTLE_SECONDS = 2.0
#: How often the keeper retries a lost connection, and looks at it otherwise.
_RETRY_SECONDS = 0.2
_LOOK_SECONDS = 1.0

#: The owners of ``owners`` (``unnest`` of three arrays: owner, the key's high and low 32 bits)
#: whose advisory lock no session of this database holds.
GONE_SQL = (
    "SELECT o FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) AS t(o, hi, lo) "
    "WHERE NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted "
    "AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND l.classid::bigint = t.hi AND l.objid::bigint = t.lo)"
)


def lock_key(owner: str) -> int:
    """The advisory lock key (a signed 64-bit int) of ``owner``."""
    return int.from_bytes(hashlib.blake2b(owner.encode(), digest_size=8).digest(), "big", signed=True)


def gone_params(owners: Sequence[str]) -> tuple[list[str], list[int], list[int]]:
    """:data:`GONE_SQL`'s parameters: ``pg_locks`` shows a bigint key as two unsigned 32-bit oids."""
    keys = [lock_key(o) & 0xFFFFFFFFFFFFFFFF for o in owners]
    return list(owners), [k >> 32 for k in keys], [k & 0xFFFFFFFF for k in keys]


class OwnerSessions:
    """The advisory locks of the ``~s`` owners one store handle leases for (see the module docstring)."""

    def __init__(self, connect: Any) -> None:
        #: ``connect()`` -> a new autocommit psycopg connection
        self._connect = connect
        self._lock = threading.Lock()
        self._owners: dict[str, bool] = {}  # owner -> its lock taken on the current connection
        self._conn: Any = None
        self._since: float | None = None  # monotonic: when the current connection was made
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._wake: tuple[int, int] | None = None  # a pipe: close() wakes the keeper out of its select

    def hold(self, owner: str) -> None:
        """Hold ``owner``'s lock from now on (at once: before its first lease is written).  Raises
        the driver's error when the server cannot be reached (then no lease is written either)."""
        with self._lock:
            if self._closed.is_set():
                return  # the store is closed: its own calls say so
            if self._owners.get(owner) and self._conn is not None and not self._conn.closed:
                return
            if self._conn is None or self._conn.closed:
                self._reconnect()
            self._owners[owner] = self._take(owner)
            if self._thread is None:
                self._wake = os.pipe()
                self._thread = threading.Thread(target=self._keep, name="agentrt-owner-sessions", daemon=True)
                self._thread.start()

    def release(self, owner: str) -> None:
        """Stop holding ``owner``'s lock (its runtime closed: its leases are given back or lapse).
        Long-lived handles that see many runtimes come and go keep only the live ones' locks (the
        server's lock table is shared and bounded)."""
        with self._lock:
            taken = self._owners.pop(owner, False)
            if taken and self._conn is not None and not self._conn.closed:
                with suppress(Exception):  # a lost session has freed it already
                    self._conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key(owner),))

    def settled(self) -> bool:
        """Whether this handle's own session is old enough to judge others by their locks."""
        since = self._since
        return since is not None and time.monotonic() - since >= SETTLE_SECONDS

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        with self._lock:
            if self._wake is not None:
                with suppress(OSError):
                    os.write(self._wake[1], b"x")
            if self._conn is not None:
                with suppress(Exception):
                    self._conn.close()  # the locks go with the session
                self._conn = None
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if self._wake is not None:
            for fd in self._wake:
                with suppress(OSError):
                    os.close(fd)

    # ------------------------------------------------------------------ under self._lock

    def _reconnect(self) -> None:
        if self._conn is not None:
            with suppress(Exception):
                self._conn.close()
        self._conn, self._since = None, None
        conn = self._connect()
        self._conn, self._since = conn, time.monotonic()
        for owner in self._owners:
            self._owners[owner] = self._take(owner)

    def _take(self, owner: str) -> bool:
        row = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key(owner),)).fetchone()
        taken = bool(row and row[0])
        if not taken:  # someone holds the key: the owner looks alive (the lease's lapse takes over)
            logger.debug("agentrt: the session lock of %s is held by another session", owner)
        return taken

    # ------------------------------------------------------------------ the keeper thread

    def _keep(self) -> None:
        """Wait on the connection; when it is lost, make a new one and take every lock again."""
        assert self._wake is not None
        wake = self._wake[0]
        failing = False
        while not self._closed.is_set():
            conn = self._conn
            try:
                if conn is None or conn.closed:
                    with self._lock:
                        if self._closed.is_set():
                            return
                        self._reconnect()
                    continue
                readable, _, _ = select.select([conn.fileno(), wake], [], [], _LOOK_SECONDS)
                with self._lock:
                    if self._closed.is_set() or conn is not self._conn:
                        continue
                    if readable or not all(self._owners.values()):
                        conn.execute("SELECT 1")  # a closed session raises here
                        for owner, taken in self._owners.items():
                            if not taken:
                                self._owners[owner] = self._take(owner)
                failing = False
            except Exception as exc:
                if self._closed.is_set():
                    return
                if not failing:
                    logger.warning(
                        "agentrt: the PostgreSQL session holding this worker's liveness lock was lost "
                        "(%s: %s); reconnecting every %.1f s",
                        type(exc).__name__,
                        exc,
                        _RETRY_SECONDS,
                    )
                failing = True
                with self._lock:
                    if self._conn is not None:
                        with suppress(Exception):
                            self._conn.close()
                    self._conn, self._since = None, None
                self._closed.wait(_RETRY_SECONDS)
