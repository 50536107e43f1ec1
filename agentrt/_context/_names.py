"""How a checkpoint names a context variable, and how a restore finds it again.

A ``contextvars.ContextVar`` has a ``name`` but no module: nothing ties ``ContextVar("user")``
to the code that made it, and two libraries may both have a ``"user"``.  So a checkpoint
names a variable by where it *lives*: ``module:qualname`` of a module global (or an
attribute of a class defined in that module) that holds it.  The first time a run
checkpoints a variable, the loaded modules' globals are searched for it (once per
variable: the answer is kept, and checked again by one lookup at each later checkpoint).

A variable held under several names (``app.ctx:REQUEST_ID`` re-exported as
``app:REQUEST_ID``) is written with all of them, best first, so the restoring process
finds it through whichever of those modules it has imported.  Finding it again reads
``sys.modules`` and ``__dict__`` mappings only, and imports nothing the caller did not
allow (``agentrt._codec._refs``), exactly as for the functions a blob names.
"""

from __future__ import annotations

import contextvars
import sys
import types
from collections.abc import Collection
from typing import Any  # Any: a context variable holds any value

from agentrt._codec import MISSING, class_dict, find_module, imported_module, lookup, module_dict
from agentrt.exceptions import IncompatibleBlob

__all__ = ["MAX_NAMES", "describe", "find_global", "global_names"]

#: at most this many names are written per variable (re-exports rarely go further)
MAX_NAMES = 4

_KNOWN: dict[contextvars.ContextVar[Any], tuple[str, ...]] = {}  # variables live for the process


def describe(var: contextvars.ContextVar[Any]) -> str:
    """How an error names a variable it could not name by module (its ``name`` and id)."""
    return f"ContextVar({var.name!r}) at {id(var):#x}"


def global_names(var: contextvars.ContextVar[Any]) -> tuple[str, ...]:
    """The ``module:qualname`` names under which imported modules hold ``var``, best first; () if none."""
    known = _KNOWN.get(var)
    if known and _resolves(known[0], var):
        return known
    found = _search(var)
    if found:
        _KNOWN[var] = found
    return found


def _resolves(name: str, var: contextvars.ContextVar[Any]) -> bool:
    module_name, _, qualname = name.partition(":")
    module = imported_module(module_name)
    return module is not None and lookup(module, qualname) is var


def _search(var: contextvars.ContextVar[Any]) -> tuple[str, ...]:
    """Every module global (and class attribute of a class defined there) holding ``var``."""
    found: list[str] = []
    for module_name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType):
            continue
        try:
            namespace = list(module_dict(module).items())
        except Exception:  # a module object without a usable namespace: nothing to find there
            continue
        for key, value in namespace:
            if value is var:
                found.append(f"{module_name}:{key}")
            elif isinstance(value, type) and getattr(value, "__module__", None) == module_name:
                found.extend(
                    f"{module_name}:{key}.{attr}" for attr, held in class_dict(value).items() if held is var
                )
    return tuple(sorted(set(found), key=lambda name: _rank(name, var))[:MAX_NAMES])


def _rank(name: str, var: contextvars.ContextVar[Any]) -> tuple[bool, bool, bool, int, str]:
    """Sort key, best first: not ``__main__`` (a script is not imported by the restoring process),
    not private, held under its own ``name``, then the shortest module path."""
    module_name, _, qualname = name.partition(":")
    last = qualname.rsplit(".", 1)[-1]
    private = any(part.startswith("_") for part in module_name.split(".")) or qualname.startswith("_")
    own_name = last in (var.name, var.name.upper())
    return (module_name == "__main__", private, not own_name, module_name.count("."), name)


def find_global(names: tuple[str, ...], allow_modules: Collection[str]) -> contextvars.ContextVar[Any]:
    """The variable a checkpoint names by ``names``: the first one that an imported module (or one the
    caller allowed, imported now) holds.  ``IncompatibleBlob`` saying what to import otherwise."""
    wrong: list[str] = []
    for importing in (False, True):  # modules imported already first; then those the caller allowed
        for name in names:
            module_name, _, qualname = name.partition(":")
            module = imported_module(module_name)
            if importing == (module is not None) or (importing and module_name not in allow_modules):
                continue
            held = lookup(module or find_module(module_name, allow_modules), qualname)
            if type(held) is contextvars.ContextVar:
                return held
            wrong.append(name if held is MISSING else f"{name} (now a {type(held).__name__})")
    first = names[0]
    if wrong:
        raise IncompatibleBlob(
            f"the checkpoint sets the context variable {first}, and {', '.join(wrong)} no longer holds a "
            "ContextVar: the code changed since the checkpoint; define it again, or finish old runs "
            "with the old code"
        )
    module_name = first.partition(":")[0]
    raise IncompatibleBlob(
        f"the checkpoint sets the context variable {first}, and module {module_name!r} is not imported; "
        f"import it before Machine.set() or pass allow_modules=({module_name!r},)"
    )
