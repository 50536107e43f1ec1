"""Stores: where runs, checkpoints and the journal live.

``open_store(None)`` opens the default: the store named by ``AGENTRT_STORE``,
else the SQLite file ``.agentrt/agentrt.db`` under the current directory.
Store URLs: a file path or ``sqlite:///path`` (SQLite), ``postgresql://user:pass@host:port/db``
(PostgreSQL, needs ``agentrt[postgres]`` and a blob key), ``memory:`` (one process only).
"""

from __future__ import annotations

import os

from agentrt.stores._identity import blob_digest as blob_digest
from agentrt.stores.base import Capability as Capability
from agentrt.stores.base import CheckpointInfo as CheckpointInfo
from agentrt.stores.base import EventRecord as EventRecord
from agentrt.stores.base import LeaseLost as LeaseLost
from agentrt.stores.base import NewRun as NewRun
from agentrt.stores.base import RunRecord as RunRecord
from agentrt.stores.base import RunStatus as RunStatus
from agentrt.stores.base import Store as Store
from agentrt.stores.base import StoreCorrupt as StoreCorrupt
from agentrt.stores.base import StoreError as StoreError
from agentrt.stores.base import StoreLocked as StoreLocked
from agentrt.stores.base import StoreNotFound as StoreNotFound
from agentrt.stores.base import StoreSchemaTooNew as StoreSchemaTooNew
from agentrt.stores.memory import MemoryStore as MemoryStore
from agentrt.stores.sqlite import SqliteStore as SqliteStore

__all__ = [
    "DEFAULT_STORE_PATH",
    "Capability",
    "CheckpointInfo",
    "EventRecord",
    "LeaseLost",
    "MemoryStore",
    "NewRun",
    "RunRecord",
    "RunStatus",
    "SqliteStore",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreNotFound",
    "StoreSchemaTooNew",
    "blob_digest",
    "default_store_location",
    "open_store",
]

DEFAULT_STORE_PATH = os.path.join(".agentrt", "agentrt.db")
STORE_ENV = "AGENTRT_STORE"


def default_store_location() -> str:
    return os.environ.get(STORE_ENV) or DEFAULT_STORE_PATH


def open_store(
    location: str | os.PathLike[str] | None = None,
    *,
    retention: int | None = 100,
    read_only: bool = False,
    create: bool = True,
) -> Store:
    """Open the store at ``location`` (a path, ``sqlite:///path``, ``postgresql://...`` or ``memory:``);
    None: the default (``AGENTRT_STORE``, else ``.agentrt/agentrt.db``).

    ``read_only=True`` looks without touching: nothing is created, migrated or written, and
    where there is no agentrt store it raises :class:`StoreNotFound` (a fresh ``memory:``
    store is empty, so it is opened as usual).  ``create=False`` opens for writing but raises
    :class:`StoreNotFound` instead of creating a missing SQLite file.
    """
    location = os.fspath(location) if location is not None else default_store_location()
    if location in ("memory", ":memory:", "memory:"):
        return MemoryStore(retention=retention)
    if location.startswith("sqlite:///"):
        location = location[len("sqlite:///") :]
    elif location.startswith(("postgresql://", "postgres://")):
        from agentrt.stores.postgres import PostgresStore

        return PostgresStore(location, retention=retention, read_only=read_only)
    elif "://" in location:
        scheme = location.split("://", 1)[0]
        raise StoreError(
            f"store {location!r}: unknown scheme {scheme!r}; use a SQLite file path, sqlite:///PATH, "
            "postgresql://USER:PASS@HOST:PORT/DB or memory:"
        )
    return SqliteStore(location, retention=retention, read_only=read_only, create=create)
