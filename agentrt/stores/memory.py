"""``MemoryStore``: the SQLite store's state machine over a private in-memory database.

For tests, embedding and benchmarks: one process, one object, nothing on disk.  It is a
:class:`~agentrt.stores.SqliteStore` on SQLite's ``:memory:`` -- the same statements for leases,
epochs (fencing), claims, cancel requests, retention, identity and heads -- so the store
conformance suite proves one state machine, not a twin written over dictionaries.  Its contents
live as long as the object: :meth:`MemoryStore.close` writes what is queued and keeps them.
"""

from __future__ import annotations

import atexit
import sqlite3
import threading
from contextlib import suppress

from agentrt.stores import _identity
from agentrt.stores.base import StoreError
from agentrt.stores.sqlite import SqliteStore

__all__ = ["MemoryStore"]

#: A new store's database, migrated once per process and copied into each new store (a copy takes
#: microseconds; the migrations, some milliseconds).
_template: sqlite3.Connection | None = None
_template_lock = threading.Lock()


def _copy_of_template() -> sqlite3.Connection:
    global _template
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    with _template_lock:
        if _template is None:
            made = SqliteStore(":memory:")  # migrated from scratch; its connection becomes the template
            template, made._conn = made._conn, None
            assert template is not None
            atexit.register(template.close)
            _template = template
        _template.backup(conn)
    return conn


class MemoryStore(SqliteStore):
    """A store that lives in this object (SQLite ``:memory:``); same semantics as :class:`SqliteStore`."""

    def __init__(self, *, retention: int | None = 100) -> None:
        super().__init__(":memory:", retention=retention)
        self.location = "memory"
        self._label = "memory"

    def _connect(self) -> sqlite3.Connection:
        """A private in-memory database: a copy of the template, with an identity of its own."""
        conn = _copy_of_template()
        conn.execute("UPDATE meta SET value = ? WHERE key = 'store_id'", (_identity.new_store_id(),))
        return conn

    def __repr__(self) -> str:
        return f"MemoryStore({self._q('SELECT count(*) FROM runs')[0][0]} runs)"

    def close(self) -> None:
        """Write the queued stream events; the database stays, since it is the store (a closed
        memory store would be an empty one).  It goes with the object."""
        with suppress(StoreError):
            self.flush_stream()

    def __del__(self) -> None:
        conn = self.__dict__.get("_conn")
        if conn is not None:
            conn.close()
