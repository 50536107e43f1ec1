"""An Agents SDK agent with conversation memory (``SQLiteSession``), durable (issue 29).

Two turns of one conversation (the SDK's sessions example): "What city is the Golden Gate Bridge
in?" (the agent looks it up with a tool, then answers), then "What state is it in?", which the
model can only answer from the first turn's items in the session.  The session's file is
``AGENTRT_TEST_SESSIONS`` (default: ``conversations.db`` in the working directory).
"""

from __future__ import annotations

import os
from typing import Any

from agents import Agent, SQLiteSession, function_tool

from agentrt.adapters.openai_agents import durable
from tests.adapters._calls import tool_call
from tests.adapters.oai_corpus import RUN_CONFIG, call, outputs, say, scripted


def _text(items: list[Any]) -> str:
    return repr(items)


@function_tool
def city_of(landmark: str) -> str:
    """The city a landmark is in."""
    tool_call("city_of", landmark=landmark)
    return "San Francisco"


def _script(items: list[Any]) -> list[Any]:
    last = items[-1]
    asked = last.get("content") if isinstance(last, dict) else None
    if asked == "What state is it in?":
        return say("California" if "San Francisco" in _text(items) else "Which city do you mean?")
    if not outputs(items):
        return [call("city_of", {"landmark": "Golden Gate Bridge"}, "g1")]
    return say(f"It is in {outputs(items)[-1]}.")


assistant = Agent(
    name="Assistant", instructions="Reply very concisely.", model=scripted("memory", _script), tools=[city_of]
)


def sessions(session_id: str) -> SQLiteSession:
    return SQLiteSession(session_id, os.environ.get("AGENTRT_TEST_SESSIONS", "conversations.db"))


durable_assistant = durable(assistant, name="assistant", run_config=RUN_CONFIG, session=sessions)
