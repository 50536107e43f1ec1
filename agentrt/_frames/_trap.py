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
but restored frames' prologues and this one known function.

``lowlevel`` registers the function and the stored type (:func:`register_trap`): this
package cannot import ``lowlevel``, which imports it.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any  # Any: a payload is any value the blob can hold

__all__ = ["fresh_trap", "is_stored_trap", "is_trap", "register_trap", "stored_trap", "trap_payload"]

_trap_function: Callable[[Any], Any] | None = None
_trap_code: types.CodeType | None = None
_stored_type: type | None = None


def register_trap(function: Callable[[Any], Any], stored_type: type) -> None:
    """Make ``function`` (a one-argument generator function) the trap, stored as ``stored_type(payload)``."""
    global _trap_function, _trap_code, _stored_type
    code = function.__code__
    if code.co_argcount != 1 or not code.co_flags & 0x20:  # inspect.CO_GENERATOR
        raise TypeError(f"the suspend trap must be a one-argument generator function, got {function!r}")
    _trap_function, _trap_code, _stored_type = function, code, stored_type


def is_trap(obj: object) -> bool:
    """Whether ``obj`` is a ``suspend()`` trap generator (one made by calling the trap, not a restored frame)."""
    return type(obj) is types.GeneratorType and obj.gi_code is _trap_code


def is_stored_trap(obj: object) -> bool:
    """Whether ``obj`` is the stored form of a trap (``lowlevel._Trap``), as a blob decodes it."""
    return type(obj) is _stored_type


def trap_payload(obj: object) -> Any:
    """The payload of a trap generator that has not finished, or of a stored trap.

    A generator's payload is its one argument; its frame keeps it until the trap returns.
    Raises ``ValueError`` for a finished trap and ``TypeError`` for anything else.
    """
    if type(obj) is _stored_type:
        return obj.payload  # type: ignore[attr-defined]  # _stored_type is lowlevel._Trap, which has .payload
    if not is_trap(obj):
        raise TypeError(f"{type(obj).__name__} is not a suspend() trap")
    frame = obj.gi_frame  # type: ignore[attr-defined]  # is_trap() checked that obj is a generator
    if frame is None:
        raise ValueError("this suspend() trap has finished: it holds no payload any more")
    return frame.f_locals[_trap_code.co_varnames[0]]  # type: ignore[union-attr]  # is_trap() implies registered


def stored_trap(obj: object) -> Any:
    """The value a checkpoint stores for trap generator ``obj`` (None if it has finished: a plain
    finished generator then)."""
    frame = obj.gi_frame  # type: ignore[attr-defined]  # callers checked is_trap(obj)
    if frame is None:
        return None
    return _stored_type(frame.f_locals[_trap_code.co_varnames[0]])  # type: ignore[misc, union-attr]  # registered (is_trap)


def fresh_trap(payload: Any) -> Any:
    """A new, unstarted trap generator for ``payload``: what a restore puts in an awaited slot.

    Unstarted on purpose: priming the chain sends ``None`` into it, which starts it and runs it
    to its ``yield`` -- a trap primed here already would instead return to the agent at once.
    """
    if _trap_function is None:
        raise RuntimeError("no suspend() trap is registered: import agentrt.lowlevel first")
    return _trap_function(payload)
