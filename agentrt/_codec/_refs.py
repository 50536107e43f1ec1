"""Finding functions, classes and builtins again by ``module:qualname``.

Both directions use the same lookup, so "referable" means the same thing when a
blob is written and when it is read.  The lookup reads ``sys.modules`` and
``__dict__`` mappings only: never ``getattr`` on a module (a module
``__getattr__`` could run code), never descriptors' ``__get__``, and never an
import unless the caller allowed that module explicitly.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Collection
from typing import Any, Final  # Any: slot descriptors read through __get__

from agentrt.exceptions import IncompatibleBlob

MISSING: Final = object()

_MODULE_DICT: Any = vars(types.ModuleType)["__dict__"]  # the slot descriptor, not a module's dict
_CLASS_DICT: Any = vars(type)["__dict__"]

#: The types of "builtin" callables referable by name (C functions and method descriptors).
BUILTIN_CALLABLE_TYPES: Final = (
    types.BuiltinFunctionType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.ClassMethodDescriptorType,
)


def module_dict(module: types.ModuleType) -> dict[str, Any]:
    """``module.__dict__`` read through the module type's own slot (no user code)."""
    result: dict[str, Any] = _MODULE_DICT.__get__(module)
    return result


def class_dict(cls: type) -> types.MappingProxyType[str, Any]:
    """``cls.__dict__`` read through ``type``'s own slot (no metaclass code)."""
    result: types.MappingProxyType[str, Any] = _CLASS_DICT.__get__(cls)
    return result


def imported_module(name: str) -> types.ModuleType | None:
    """The module object ``sys.modules[name]`` if there is one (no import)."""
    module = sys.modules.get(name)
    return module if isinstance(module, types.ModuleType) else None


class _AnyModule:
    """``allow_modules`` of a signed blob: it may import what pickle would (``ANY_MODULE``)."""

    def __contains__(self, name: object) -> bool:
        return True


#: what a signed blob's references may import on demand: any module, as pickle would
ANY_MODULE: Collection[str] = _AnyModule()  # type: ignore[assignment]  # only `in` is ever used


def find_module(name: str, allow_modules: Collection[str]) -> types.ModuleType:
    """The module ``name``: already imported, or imported now because the caller allowed it."""
    module = imported_module(name)
    if module is not None:
        return module
    if name in allow_modules:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise IncompatibleBlob(f"module {name!r} (in allow_modules) failed to import: {exc!r}") from exc
        module = imported_module(name)
        if module is not None:
            return module
    raise IncompatibleBlob(
        f"module {name!r} is not imported; import it before Machine.set() or pass allow_modules=({name!r},)"
    )


def lookup(module: types.ModuleType, qualname: str) -> object:
    """Follow ``qualname`` through the module's and then classes' ``__dict__``; MISSING if it breaks."""
    parts = qualname.split(".")
    obj: object = module_dict(module).get(parts[0], MISSING)
    for part in parts[1:]:
        if not isinstance(obj, type):
            return MISSING
        obj = class_dict(obj).get(part, MISSING)
    return obj


def unwrap_method(obj: object) -> object:
    """The function inside a ``staticmethod`` / ``classmethod`` found in a class ``__dict__``."""
    if isinstance(obj, (staticmethod, classmethod)):
        return obj.__func__
    return obj


def lookup_name(module_name: object, qualname: object) -> object:
    """Encode-side check: what ``module_name:qualname`` names right now, or MISSING."""
    if not isinstance(module_name, str) or not isinstance(qualname, str):
        return MISSING
    module = imported_module(module_name)
    if module is None:
        return MISSING
    return lookup(module, qualname)
