"""The corpus's tiny request protocol and its deterministic responder.

Every agent in the corpus talks to its driver only through ``await suspend(payload)``,
with one of three payloads:

* ``("echo", x)``      -> the driver answers ``x``          (helper: ``ask(x)``)
* ``("add", a, b)``    -> the driver answers ``a + b``      (helper: ``add(a, b)``)
* ``("fail", msg)``    -> the driver THROWS ``ValueError(msg)`` into the agent
                          (helper: ``fail(msg)``)

The helpers are plain functions returning the ``suspend`` awaitable, so
``await ask(x)`` is literally ``await suspend(("echo", x))`` and adds no frame to
the suspended chain.

While the engine (``agentrt/_frames``, ``agentrt/_codec``) is being written,
``agentrt.lowlevel`` may not import.  Then this module falls back to a stand-in trap
so the corpus can still be run uninterrupted (mode (a)); ``ENGINE_IMPORT_ERROR``
records why, and the checkpoint modes (b)/(c) FAIL with that message (they never
skip).  Set ``AGENTRT_CORPUS_STRICT=1`` to forbid the fallback altogether.
"""

from __future__ import annotations

import os
from typing import Any

ENGINE_IMPORT_ERROR: str | None = None
SERIALIZABLE_IMPORT_ERROR: str | None = None
_STRICT = os.environ.get("AGENTRT_CORPUS_STRICT") == "1"

try:
    from agentrt.lowlevel import Done, Machine, suspend
except Exception as _exc:
    if _STRICT:
        raise
    ENGINE_IMPORT_ERROR = f"agentrt.lowlevel failed to import: {type(_exc).__name__}: {_exc}"
    Done = None  # type: ignore[assignment]
    Machine = None  # type: ignore[assignment]

    import types

    _STAND_IN_MARK = object()

    @types.coroutine
    def suspend(payload: Any) -> Any:  # type: ignore[no-redef]
        """Same shape as agentrt's trap: yields ``(marker, payload)``, returns what is sent."""
        return (yield (_STAND_IN_MARK, payload))


try:
    from agentrt import serializable
except Exception as _exc:
    if _STRICT:
        raise
    SERIALIZABLE_IMPORT_ERROR = f"agentrt.serializable unavailable: {type(_exc).__name__}: {_exc}"

    def serializable(cls):  # type: ignore[no-redef]
        return cls


def request_payload(yielded: Any) -> Any:
    """The payload of what a ``suspend`` trap yielded to its driver (a ``(marker, payload)`` tuple).

    Raises ``ValueError`` for anything a trap does not yield.
    """
    if type(yielded) is not tuple or len(yielded) != 2:
        raise ValueError(f"not a suspend() request: {yielded!r}")
    return yielded[1]


def ask(x: Any) -> Any:
    """``await ask(x)`` == ``await suspend(("echo", x))`` -> x."""
    return suspend(("echo", x))


def add(a: Any, b: Any) -> Any:
    """``await add(a, b)`` == ``await suspend(("add", a, b))`` -> a + b."""
    return suspend(("add", a, b))


def fail(msg: str) -> Any:
    """``await fail(msg)`` == ``await suspend(("fail", msg))``: the driver throws ValueError(msg)."""
    return suspend(("fail", msg))


class ProtocolError(AssertionError):
    """A payload outside the protocol reached the driver (a corpus or engine bug)."""


def respond(payload: Any) -> tuple[str, Any]:
    """The deterministic responder: ``("value", v)`` to send, or ``("throw", exc)`` to throw."""
    if type(payload) is tuple and payload:
        op = payload[0]
        if op == "echo" and len(payload) == 2:
            return ("value", payload[1])
        if op == "add" and len(payload) == 3:
            return ("value", payload[1] + payload[2])
        if op == "fail" and len(payload) == 2:
            return ("throw", ValueError(payload[1]))
    raise ProtocolError(f"payload outside the corpus protocol: {payload!r}")
