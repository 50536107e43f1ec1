"""Fixtures shared by every test directory: a real PostgreSQL server for the store and fleet tests."""

from __future__ import annotations

import os
import re
import shutil
import tempfile

import pytest

from tests import pgcluster

_KEY_DIR: str | None = None


def pytest_configure(config):
    """Blobs written without a store are signed with the project key; give the session (and the
    processes it starts) a key file of its own instead of creating one in the runner's home."""
    global _KEY_DIR
    if "AGENTRT_KEY_FILE" not in os.environ:
        _KEY_DIR = tempfile.mkdtemp(prefix="agentrt-test-key-")
        os.environ["AGENTRT_KEY_FILE"] = os.path.join(_KEY_DIR, "blob.key")


def pytest_unconfigure(config):
    if _KEY_DIR is not None:
        os.environ.pop("AGENTRT_KEY_FILE", None)
        shutil.rmtree(_KEY_DIR, ignore_errors=True)


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
