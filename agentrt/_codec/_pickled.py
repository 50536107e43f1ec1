"""Ordinary objects in signed blobs: the pickle protocol, its callable named by ``module:qualname``.

A signed blob was written by a holder of the key, who is as trusted as the code, so
restoring it may call what ``pickle`` would call.  For a value agentrt has no
reducer of its own for (an unmarked dataclass, a pydantic model, ``Fraction``,
``Path``...), the encoder asks the value for its pickle reduction
(``copyreg.dispatch_table``, else ``__reduce_ex__(5)``) and writes it as a call of
the ``call`` reconstructor: ``call(module, qualname, args, stateful)``, with the
reduction's state, list items and dict items applied afterwards by ``state`` (so
cycles through the object work, as they do for pickle).  Only signed blobs may name
``call`` (``_wire.SIGNED_ONLY``); an unsigned blob keeps agentrt's own value list.

What ``get()`` writes, ``set()`` restores: the reduction's callable must be found
again by ``module:qualname`` (a lambda or a local class is refused at ``get()``),
and the reduction is tried once on the spot -- the callable called with its
arguments and the state applied to the result, which is then dropped -- so a
``__setstate__`` that fails, fails at ``get()`` with the variable and path named.
The trial runs what ``set()`` will run, with the live arguments: a reduction whose
callable opens something (a connection) opens it once more at ``get()``, and a
``__setstate__`` that mutates objects *inside* its state (not the state dict itself,
which is copied) mutates the live ones.  Pickle reductions of ordinary classes do
neither.
"""

from __future__ import annotations

import copyreg
import importlib
import sys
import types
from typing import Any  # Any: the pickle protocol reduces and rebuilds any Python object

from agentrt._codec import _wire
from agentrt._codec._bounds import describe_error
from agentrt._codec._class_paths import class_reduction
from agentrt._codec._hazards import Refusal, type_name
from agentrt._codec._refs import MISSING, class_dict, imported_module, module_dict
from agentrt.exceptions import IncompatibleBlob

_CALL, _STATE = _wire.PLACEHOLDERS["call"], _wire.PLACEHOLDERS["state"]
#: pickle's "cls.__new__(cls, ...)" (typeshed does not list them; they are in copyreg since 2.3 / 3.4)
_NEWOBJ = (vars(copyreg)["__newobj__"], vars(copyreg)["__newobj_ex__"])

FIX_PICKLED = (
    "Keep plain data (or an instance of an importable class whose pickle reduction works) across the "
    "await, or move the work that needs it into a tool."
)


class PickleRefusal(Exception):
    """The reduction of a value cannot be written so that ``set()`` restores it; ``refusal`` says why."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.fix)
        self.refusal = refusal


def resolve(module: types.ModuleType, qualname: str) -> object:
    """What ``module:qualname`` names: module ``__dict__``, then class attributes (MISSING if none).

    Attributes of classes go through ``getattr`` once found in a class ``__dict__`` of the MRO,
    so a classmethod comes back bound (``ZoneInfo._unpickle``) and a staticmethod unwrapped, as
    ``pickle`` finds them.  Used on both sides, so "importable" means one thing.
    """
    parts = qualname.split(".")
    obj: object = module_dict(module).get(parts[0], MISSING)
    for part in parts[1:]:
        if not isinstance(obj, type) or not any(part in class_dict(base) for base in obj.__mro__):
            return MISSING
        obj = getattr(obj, part)
    return obj


def callable_name(fn: object) -> tuple[str, str] | None:
    """``(module, qualname)`` that finds ``fn`` again in this process, or None."""
    owner = getattr(fn, "__self__", None)
    module: object
    qualname: object
    if isinstance(fn, (types.MethodType, types.BuiltinMethodType)) and isinstance(owner, type):
        # a classmethod bound to its class (``ZoneInfo._unpickle``, pydantic-core's
        # ``ValidationError.from_exception_data``): found again through the class
        module, qualname = owner.__module__, f"{owner.__qualname__}.{fn.__name__}"
    else:
        module = getattr(fn, "__module__", None)
        qualname = getattr(fn, "__qualname__", None)
        if module is None and isinstance(owner, types.ModuleType):
            module = owner.__name__  # a builtin of a C module
    if not isinstance(module, str) or not isinstance(qualname, str) or "<locals>" in qualname:
        return None
    mod = imported_module(module)
    if mod is None:
        return None
    found = resolve(mod, qualname)
    if found is fn or (isinstance(fn, (types.MethodType, types.BuiltinMethodType)) and found == fn):
        return module, qualname
    return None


def _refuse(obj: object, fix: str) -> PickleRefusal:
    return PickleRefusal(Refusal("AR111", type_name(type(obj)), fix))


def reduction(obj: object) -> tuple[Any, Any, Any]:
    """``(call args, state for the state reconstructor or None, the trial)`` for ``obj``.

    Raises :class:`PickleRefusal` when the reduction fails, is of a shape agentrt does not
    write, names a callable that cannot be found again, or does not restore (the trial).
    """
    reducer = copyreg.dispatch_table.get(type(obj))
    try:
        reduced = reducer(obj) if reducer is not None else obj.__reduce_ex__(5)
    except Exception as exc:
        raise _refuse(obj, f"Its pickle reduction failed: {describe_error(exc)}. {FIX_PICKLED}") from None
    if isinstance(reduced, str):  # a global: the object is found by name (a singleton)
        module = getattr(obj, "__module__", None)
        mod = imported_module(module) if isinstance(module, str) else None
        if mod is None or resolve(mod, reduced) is not obj:
            raise _refuse(
                obj, f"It pickles as the global {reduced!r}, which is not importable. {FIX_PICKLED}"
            )
        return (module, reduced, None, False), None, None
    if type(reduced) is not tuple or not 2 <= len(reduced) <= 6:
        raise _refuse(
            obj, f"Its __reduce_ex__ returned a {type_name(type(reduced))}, not a tuple. {FIX_PICKLED}"
        )
    func, args, state, listitems, dictitems, setter = (*reduced, None, None, None, None)[:6]
    if setter is not None:
        raise _refuse(obj, f"Its reduction has a state_setter, which agentrt does not write. {FIX_PICKLED}")
    if type(args) is not tuple:
        raise _refuse(
            obj, f"Its reduction's arguments are a {type_name(type(args))}, not a tuple. {FIX_PICKLED}"
        )
    name = callable_name(func)
    if name is None:
        raise _refuse(
            obj,
            f"Its reduction calls {_describe_callable(func)}, which cannot be found again by "
            "module:qualname (a lambda, a function or class defined inside a function, or a name that "
            f"was rebound). Define it at module level. {FIX_PICKLED}",
        )
    if (
        func in _NEWOBJ
        and args
        and isinstance(args[0], type)
        and callable_name(args[0]) is None
        and class_reduction(args[0]) is None
    ):
        cls = args[0]
        where = "is defined inside a function" if "<locals>" in cls.__qualname__ else "cannot be found again"
        raise _refuse(
            obj,
            f"Its class {cls.__module__}:{cls.__qualname__} {where}; blobs name classes by "
            f"module:qualname. Define it at module level. {FIX_PICKLED}",
        )
    items = list(listitems) if listitems is not None else None
    pairs = list(dictitems) if dictitems is not None else None
    stateful = state is not None or items is not None or pairs is not None
    contents = (state, items, pairs) if stateful else None
    return (*name, args, stateful), contents, func


def _describe_callable(func: object) -> str:
    module = getattr(func, "__module__", "?")
    qualname = getattr(func, "__qualname__", None) or type_name(type(func))
    return f"{module}:{qualname}"


def trial(obj: object, func: Any, args: tuple[Any, ...], contents: Any) -> None:
    """Restore a copy of ``obj`` from its reduction the way ``set()`` will, and drop it.

    Catches at ``get()`` what would make ``set()`` fail: a constructor or ``__setstate__`` that
    refuses the state it was given (a dict state is copied first, so a ``__setstate__`` that pops
    from it cannot change ``obj``).
    """
    try:
        copy = func(*args)
        if contents is not None:
            state, items, pairs = contents
            if type(state) is dict:
                state = dict(state)
            elif type(state) is tuple and len(state) == 2 and type(state[0]) is dict:
                state = (dict(state[0]), state[1])
            apply_contents(copy, (state, items, pairs))
    except Exception as exc:
        raise _refuse(
            obj,
            f"It would not restore: rebuilding it from its pickle reduction raised {describe_error(exc)}. "
            + FIX_PICKLED,
        ) from None


def apply_contents(obj: Any, contents: tuple[Any, Any, Any]) -> None:
    """What pickle's APPENDS, SETITEMS and BUILD do with a reduction's items and state."""
    state, items, pairs = contents
    if items:
        extend = getattr(obj, "extend", None)
        if extend is not None:
            extend(items)
        else:
            for item in items:
                obj.append(item)
    if pairs:
        for key, value in pairs:
            obj[key] = value
    if state is None:
        return
    setstate = getattr(obj, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if type(state) is tuple and len(state) == 2:
        state, slots = state
    if state:
        namespace = obj.__dict__
        for key, value in state.items():
            namespace[sys.intern(key) if type(key) is str else key] = value
    if slots:
        for key, value in slots.items():
            setattr(obj, key, value)


def reduce_pickled(enc: Any, obj: Any) -> Any:
    """The reduce tuple of ``obj`` through its pickle protocol (signed blobs only)."""
    args, contents, func = reduction(obj)
    if func is not None:
        trial(obj, func, args[2], contents)
    if contents is None:
        return (_CALL, args)
    return (_CALL, args, contents, None, None, _STATE)


def find_callable(module: str, qualname: str) -> Any:
    """Decode side: the object ``module:qualname`` names, importing the module (signed blobs only)."""
    mod = imported_module(module)
    if mod is None:
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise IncompatibleBlob(
                f"module {module!r}, which the checkpoint names, cannot be imported ({describe_error(exc)}); "
                "install it, or finish old runs where it is"
            ) from exc
        mod = imported_module(module)
    return resolve(mod, qualname) if mod is not None else MISSING
