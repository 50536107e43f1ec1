"""The only place a ported agent meets its driver: model calls and tool calls as suspensions.

A port keeps its framework's agent loop as written and replaces exactly two things: where the
original sends a request to a model (``client.chat.completions.create(...)``,
``client.messages.create(...)``, an LLM wrapper) it awaits ``model(AGENT, **request)``, and where
it runs a tool it awaits ``tool(AGENT, name, **arguments)``.  Both return the ``suspend``
awaitable itself, so they add no frame to the suspended chain.  The request is deep-copied first,
as an SDK serializes its request when it sends it: the payload is what was asked at that moment,
whatever the agent does to its message list afterwards.

The driver answers with ``respond(payload)``: each agent module registers a scripted stand-in for
its model and its tools with ``@script(AGENT)``.  A script is a pure function of the request (the
conversation so far decides what the "model" says next), so a run restored in a fresh process at
any suspension is answered exactly as the uninterrupted run was, without the driver keeping any
state of its own.  Scripts answer with the SDK's real classes (``openai.types.chat.ChatCompletion``,
``anthropic.types.Message``...) built from the JSON the service returns.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NamedTuple

from tests.corpus.protocol import suspend

#: agent name -> script(kind, *request) -> answer ("model": (request,), "tool": (name, arguments))
SCRIPTS: dict[str, Callable[..., Any]] = {}


class Throw(NamedTuple):
    """A script's answer that the driver throws into the agent (a tool or API error)."""

    exc: BaseException


def script(agent: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if agent in SCRIPTS:
            raise ValueError(f"two scripts for {agent!r}")
        SCRIPTS[agent] = fn
        return fn

    return register


def model(agent: str, /, **request: Any) -> Any:
    """``await model(AGENT, messages=..., tools=...)``: the agent's model call, answered by its script."""
    return suspend(("model", agent, copy.deepcopy(request)))


def tool(agent: str, name: str, /, **arguments: Any) -> Any:
    """``await tool(AGENT, "get_weather", city=...)``: the agent's tool call, answered by its script."""
    return suspend(("tool", agent, name, copy.deepcopy(arguments)))


def respond(payload: Any) -> tuple[str, Any]:
    """The driver: ``("value", answer)`` to send into the agent, or ``("throw", exc)`` to throw."""
    kind, agent, *request = payload
    answer = SCRIPTS[agent](kind, *request)
    if isinstance(answer, Throw):
        return ("throw", answer.exc)
    return ("value", answer)
