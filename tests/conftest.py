"""Fixtures shared by every test directory: a real PostgreSQL server for the store and fleet tests."""

from __future__ import annotations

import os
import re

import pytest

from tests import pgcluster


@pytest.fixture(scope="session")
def pg_server():
    """The URL of a throwaway PostgreSQL cluster for the session; skips locally (fails in CI) without one."""
    try:
        with pgcluster.cluster() as url:
            yield url
    except FileNotFoundError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the PostgreSQL tests: {exc}")
        pytest.skip(str(exc))


@pytest.fixture
def pg_url(pg_server, request, monkeypatch):
    """A fresh database on the session's cluster (one per test) and a blob key in the environment."""
    monkeypatch.setenv("AGENTRT_BLOB_KEY", "test-key-" + "0" * 32)
    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    return pgcluster.fresh_database(pg_server, name)
