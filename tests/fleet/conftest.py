"""The fleet tests drive worker *processes*: the in-process round-trip plugin adds nothing to them."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("agentrt_roundtrip", False):
        skip = pytest.mark.skip(reason="fleet tests run worker processes; the round trip applies in-process")
        for item in items:
            if "tests/fleet/" in item.nodeid:
                item.add_marker(skip)
