"""``agentrt.reopenable``: live clients that are re-created on restore instead of refused.

An HTTP or SDK client holds sockets, locks and secrets; none of that can cross an
await.  What can is its configuration: ``save(obj)`` returns plain data (base URL,
timeouts, non-secret headers -- never an API key), the blob stores it, and
``reopen(state)`` builds a new client from it on restore, which reads its secrets
the way its constructor does (the environment).  Only signed blobs carry them:
reopening runs the registered ``reopen``, which is code; an unsigned blob keeps
refusing clients (AR112).

Registrations are by ``module:qualname``, so the built-in ones (httpx, openai,
anthropic; see ``_reopen_builtin``) import nothing: a class is matched when an
instance of it is met, which means its module is imported already.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar  # Any: save/reopen take and return any client

import attrs

from agentrt._codec._bounds import describe_error, short
from agentrt._codec._pickled import resolve
from agentrt._codec._refs import imported_module
from agentrt.exceptions import AgentrtError, IncompatibleBlob

T = TypeVar("T", bound=type)


@attrs.frozen
class Reopenable:
    """One registration: the class's ``module:qualname`` and its two functions."""

    name: str
    save: Callable[[Any], Any]
    reopen: Callable[[Any], Any]


_REGISTRY: dict[str, Reopenable] = {}
#: exact type -> its registration or None, for types met while encoding (cleared on registration)
_BY_TYPE: dict[type, Reopenable | None] = {}


def class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def register(name: str, save: Callable[[Any], Any], reopen: Callable[[Any], Any]) -> None:
    """Register ``save``/``reopen`` for the class named ``module:qualname`` (and its subclasses)."""
    _REGISTRY[name] = Reopenable(name, save, reopen)
    _BY_TYPE.clear()  # the encoder asks again for every type (``_reduce._r_pickled``)


def reopenable(cls: T, *, save: Callable[[Any], Any], reopen: Callable[[Any], Any]) -> T:
    """Let instances of ``cls`` cross an await in signed blobs: re-created by ``reopen(save(obj))``.

    ``save(obj)`` must return plain data (str, int, float, bool, None, and lists, tuples and dicts
    of them) and no secrets: it is written into the blob.  ``reopen(state)`` runs when the blob is
    restored and returns the new object; it should read credentials the way the class's own
    constructor does (from the environment).  Subclasses of ``cls`` use the same pair unless they
    are registered themselves.  Returns ``cls``.
    """
    if not isinstance(cls, type):
        raise TypeError(f"agentrt.reopenable takes a class, got {cls!r}")
    if "<locals>" in cls.__qualname__:
        raise TypeError(
            f"agentrt.reopenable: class {cls.__qualname__} is defined inside a function; blobs name "
            "classes by module:qualname, so define it at module level"
        )
    if not callable(save) or not callable(reopen):
        raise TypeError("agentrt.reopenable needs callables: save(obj) -> state, reopen(state) -> obj")
    register(class_name(cls), save, reopen)
    return cls


def registration_for(tp: type) -> Reopenable | None:
    """The registration that covers ``tp`` (the nearest class of its MRO that has one), or None.

    A registration's name is resolved in ``sys.modules`` only (``openai:OpenAI`` is the class
    ``openai`` exports, whatever module defines it); an unimported module has no instances.
    """
    try:
        return _BY_TYPE[tp]
    except KeyError:
        pass
    found: Reopenable | None = None
    if _REGISTRY:
        mro = tp.__mro__
        best = len(mro)
        for name, registration in _REGISTRY.items():
            cls = _class_named(name)
            if cls is not None and cls in mro and mro.index(cls) < best:
                best, found = mro.index(cls), registration
    _BY_TYPE[tp] = found
    return found


def _class_named(name: str) -> type | None:
    module_name, _, qualname = name.partition(":")
    module = imported_module(module_name)
    found = resolve(module, qualname) if module is not None else None
    return found if isinstance(found, type) else None


def saved_state(registration: Reopenable, obj: object) -> Any:
    """``save(obj)``, checked to be plain data; raises ValueError with the reason otherwise."""
    state = registration.save(obj)
    if not _is_plain(state, 0):
        raise ValueError(
            f"save() for {registration.name} returned a {type(state).__name__} that is not plain data "
            "(str, int, float, bool, None and lists, tuples, dicts with str keys of them)"
        )
    return state


_ATOMS = (type(None), bool, int, float, str)
_MAX_DEPTH = 32


def _is_plain(value: Any, depth: int) -> bool:
    """JSON-like data: atoms in exact lists, tuples and dicts with string keys, not too deep."""
    tp = type(value)
    if tp in _ATOMS:
        return True
    if depth >= _MAX_DEPTH:
        return False
    if tp is list or tp is tuple:
        return all(_is_plain(item, depth + 1) for item in value)
    if tp is dict:
        return all(type(k) is str and _is_plain(v, depth + 1) for k, v in value.items())
    return False


def reopen(name: str, state: Any) -> Any:
    """Decode side: the object ``reopen(state)`` of the registration ``name`` returns."""
    registration = _REGISTRY.get(name)
    if registration is None:
        raise IncompatibleBlob(
            f"the checkpoint holds a {short(name, 80)} to reopen, but no agentrt.reopenable is registered "
            "for it in this process; register it (import the module that calls agentrt.reopenable) "
            "before Machine.set()"
        )
    try:
        return registration.reopen(state)
    except AgentrtError:
        raise
    except Exception as exc:
        raise IncompatibleBlob(
            f"reopening the {name} of the checkpoint failed: {describe_error(exc)}"
        ) from exc


def _register_builtins() -> None:
    from agentrt._codec._reopen_builtin import BUILTIN

    for name, save, reopen_ in BUILTIN:
        _REGISTRY.setdefault(name, Reopenable(name, save, reopen_))


_register_builtins()
