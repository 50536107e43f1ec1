"""One store per backend: memory, SQLite and a real PostgreSQL server (see tests/pgcluster.py)."""

from __future__ import annotations

import pytest

from agentrt.stores import MemoryStore, SqliteStore, open_store

BACKENDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def location(backend, tmp_path, request):
    """Where the store lives (None for memory: one process, one object)."""
    if backend == "memory":
        return None
    if backend == "sqlite":
        return str(tmp_path / "agentrt.db")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def open_handle(backend, location):
    """Open another handle on the same store (a second process would open one like this)."""
    handles = []
    memory = MemoryStore() if backend == "memory" else None

    def make():
        if memory is not None:
            return memory
        handle = SqliteStore(location) if backend == "sqlite" else open_store(location)
        handles.append(handle)
        return handle

    yield make
    for handle in handles:
        handle.close()


@pytest.fixture
def store(open_handle):
    return open_handle()
