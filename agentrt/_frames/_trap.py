"""The ``suspend()`` trap as the frame engine sees it: recognise it, read it, store it, rebuild it.

``agentrt.lowlevel.suspend`` is a ``@types.coroutine`` generator function: ``await
suspend(x)`` runs one tiny generator frame that yields a marker tuple carrying ``x`` and
returns whatever the driver sends -- no Python-level method runs per suspension (issue 16).
While a chain is suspended, the awaited slot of its innermost agent frame holds that
generator, suspended at its one ``yield``.

The engine never checkpoints the trap as a frame of its own.  It is recognised by its code
object (:func:`is_trap`) and stored as the plain value ``lowlevel._Trap(payload)`` -- the
form every blob has held the trap in, so blobs written before and after this change read
the same (:func:`stored_trap`).  A restore turns that value, where it sits in an awaited
slot, into a fresh, unstarted trap generator for the payload (:func:`fresh_trap`); the
chain's priming ``send(None)`` then starts it, which runs the trap's own known code to its
yield and re-yields the payload.  That keeps the restore-safety rule: priming runs nothing
but restored frames' prologues and the trap's own two lines.  (``__await__`` methods return the
trap's plain-generator twin, which CPython allows there; both codes are the trap.)

``lowlevel`` registers the functions and the stored type (:func:`register_trap`): this
package cannot import ``lowlevel``, which imports it.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any  # Any: a payload is any value the blob can hold

from agentrt._codec import is_serializable

__all__ = [
    "STORED_TYPES",
    "fresh_trap",
    "is_stored_trap",
    "is_trap",
    "register_trap",
    "stored_trap",
    "trap_payload",
]

_PAYLOAD = "payload"  # the trap functions' one argument
_trap_function: Callable[[Any], Any] | None = None
_trap_code: types.CodeType | None = None  # suspend's
_iterator_code: types.CodeType | None = None  # the same trap without @types.coroutine, for __await__
_stored_type: type | None = None
#: the stored form, once registered: hot paths of a restore test ``type(x) in STORED_TYPES`` inline
STORED_TYPES: set[type] = set()


def register_trap(functions: tuple[Callable[[Any], Any], Callable[[Any], Any]], stored_type: type) -> None:
    """Make ``functions`` the trap, stored as ``stored_type(payload)``.

    Two one-argument generator functions with the same body: ``suspend`` (a ``@types.coroutine``,
    for ``await suspend(x)``) and its plain twin for ``__await__`` methods, which CPython does not
    let return a generator-based coroutine.  ``stored_type`` is an ``@serializable`` class whose
    state is the payload.
    """
    global _trap_function, _trap_code, _iterator_code, _stored_type
    codes = tuple(function.__code__ for function in functions)
    for function, code in zip(functions, codes, strict=True):
        if code.co_varnames[:1] != (_PAYLOAD,) or code.co_argcount != 1 or not code.co_flags & 0x20:
            raise TypeError(f"a suspend trap is a generator function of one argument 'payload': {function!r}")
    if not is_serializable(stored_type):
        raise TypeError(f"the stored form of the trap must be @serializable, not {stored_type!r}")
    _trap_function = functions[0]
    _trap_code, _iterator_code = codes
    _stored_type = stored_type
    STORED_TYPES.clear()
    STORED_TYPES.add(stored_type)


def is_trap(obj: object) -> bool:
    """Whether ``obj`` is a ``suspend()`` trap generator (made by calling the trap, never restored)."""
    return type(obj) is types.GeneratorType and (
        (code := obj.gi_code) is _trap_code or code is _iterator_code
    )


def is_stored_trap(obj: object) -> bool:
    """Whether ``obj`` is the stored form of a trap (``lowlevel._Trap``), as a blob decodes it."""
    return type(obj) in STORED_TYPES


def trap_payload(obj: object) -> Any:
    """The payload of a trap generator that has not finished, or of a stored trap.

    A generator's payload is its one argument; its frame keeps it until the trap returns.
    Raises ``ValueError`` for a finished trap and ``TypeError`` for anything else.
    """
    if type(obj) in STORED_TYPES:
        return obj.payload  # type: ignore[attr-defined]  # the stored type is lowlevel._Trap: it has .payload
    if not is_trap(obj):
        raise TypeError(f"{type(obj).__name__} is not a suspend() trap")
    frame = obj.gi_frame  # type: ignore[attr-defined]  # is_trap() checked that obj is a generator
    if frame is None:
        raise ValueError("this suspend() trap has finished: it holds no payload any more")
    return frame.f_locals[_PAYLOAD]


def stored_trap(obj: object) -> tuple[type, Any] | None:
    """``(stored type, payload)`` to write for ``obj`` if it is a trap generator that has not finished.

    None for anything else, a finished trap included (that one is a plain finished generator).
    Called by the frame extension for every generator it encodes, so it stays cheap for the rest.
    """
    if not is_trap(obj):
        return None
    frame = obj.gi_frame  # type: ignore[attr-defined]  # is_trap() checked that obj is a generator
    if frame is None:
        return None
    return _stored_type, frame.f_locals[_PAYLOAD]  # type: ignore[return-value]  # registered: is_trap held


def fresh_trap(payload: Any) -> Any:
    """A new, unstarted trap generator for ``payload``: what a restore puts in an awaited slot.

    Unstarted on purpose: priming the chain sends ``None`` into it, which starts it and runs it
    to its ``yield`` -- a trap primed here already would instead return to the agent at once.
    """
    if _trap_function is None:
        raise RuntimeError("no suspend() trap is registered: import agentrt.lowlevel first")
    return _trap_function(payload)
