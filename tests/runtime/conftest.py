from __future__ import annotations

import pytest

from agentrt.stores import MemoryStore, SqliteStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    s = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "agentrt.db")
    yield s
    s.close()


@pytest.fixture
def sqlite_path(tmp_path):
    return tmp_path / "agentrt.db"
