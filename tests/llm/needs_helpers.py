"""Helpers in another user module: ``needs_of`` must follow calls into them."""

from __future__ import annotations

import attrs

import agentrt
from agentrt import Task


@agentrt.serializable
@attrs.frozen
class Go:
    where: str


@agentrt.serializable
@attrs.frozen
class Stop:
    why: str


async def choose(task: Task) -> object:
    """Reached by ``from tests.llm.needs_helpers import choose``."""
    return await task.llm.decide("go or stop?", events=[Go, Stop])  # MARK: helper-decide


async def stream_summary(task: Task, text: str) -> str:
    """Reached by ``needs_helpers.stream_summary(...)`` (a module attribute)."""
    result = await task.llm.stream_text(f"summarize {text}")  # MARK: helper-stream
    return result.output


def no_model(text: str) -> str:
    return text.upper()
