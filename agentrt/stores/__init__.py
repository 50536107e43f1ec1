"""Stores: where runs, checkpoints and the journal live.

``open_store(None)`` opens the default: the SQLite file named by
``AGENTRT_STORE``, else ``.agentrt/agentrt.db`` under the current directory.
``"memory"`` gives a :class:`MemoryStore` (one process only).
"""

from __future__ import annotations

import os

from agentrt.stores.base import CheckpointInfo as CheckpointInfo
from agentrt.stores.base import EventRecord as EventRecord
from agentrt.stores.base import LeaseLost as LeaseLost
from agentrt.stores.base import NewRun as NewRun
from agentrt.stores.base import RunRecord as RunRecord
from agentrt.stores.base import Store as Store
from agentrt.stores.base import StoreCorrupt as StoreCorrupt
from agentrt.stores.base import StoreError as StoreError
from agentrt.stores.base import StoreLocked as StoreLocked
from agentrt.stores.base import StoreSchemaTooNew as StoreSchemaTooNew
from agentrt.stores.memory import MemoryStore as MemoryStore
from agentrt.stores.sqlite import SqliteStore as SqliteStore

__all__ = [
    "DEFAULT_STORE_PATH",
    "CheckpointInfo",
    "EventRecord",
    "LeaseLost",
    "MemoryStore",
    "NewRun",
    "RunRecord",
    "SqliteStore",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreSchemaTooNew",
    "default_store_location",
    "open_store",
]

DEFAULT_STORE_PATH = os.path.join(".agentrt", "agentrt.db")
STORE_ENV = "AGENTRT_STORE"


def default_store_location() -> str:
    return os.environ.get(STORE_ENV) or DEFAULT_STORE_PATH


def open_store(location: str | None = None, *, retention: int | None = 100) -> Store:
    """Open the store at ``location`` (a path, ``sqlite:///path``, or ``memory``); None: the default."""
    location = location or default_store_location()
    if location in ("memory", ":memory:", "memory:"):
        return MemoryStore(retention=retention)
    if location.startswith("sqlite:///"):
        location = location[len("sqlite:///") :]
    elif "://" in location:
        scheme = location.split("://", 1)[0]
        raise StoreError(
            f"store {location!r}: the {scheme!r} scheme is not supported yet; "
            "use a SQLite file path or 'memory'"
        )
    return SqliteStore(location, retention=retention)
