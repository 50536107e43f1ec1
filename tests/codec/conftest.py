"""Fixtures for the codec tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTRT_BLOB_KEY", raising=False)
