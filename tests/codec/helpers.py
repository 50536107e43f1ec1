"""Shared helpers for the codec tests."""

from __future__ import annotations

from typing import Any

from agentrt._codec import dumps, loads


def roundtrip(value: Any, **loads_kwargs: Any) -> Any:
    return loads(dumps(value), **loads_kwargs)
