"""Classes that ``module:qualname`` does not find, named another way (signed blobs only).

Real code makes classes that are not attributes of their module under their own name:

- pydantic's parametrized generics (``ParsedChatCompletion[ResponseFormatT]``, what the
  ``openai`` SDK's ``.parse()`` returns) are created on first subscription and cached by
  pydantic; the class is "the origin subscripted by its arguments", so a blob names it that
  way and ``set()`` subscripts again (pydantic answers with its cached class, or makes an
  equal one in a fresh process);
- ``pydantic.create_model(...)`` at import time, kept under another module attribute name
  (``Schema = create_model("Weather", ...)``) or in an attribute of a module-level object
  (LangChain's ``@tool`` keeps the model it generated in the tool's ``args_schema``, and the
  tool object shadows the function's name).  A blob names such a class by the module
  attribute and, if needed, the one instance attribute that holds it.

Both are written as calls of the signed-only ``call`` reconstructor, so no new wire name is
needed: the first calls ``Origin.__class_getitem__(args)``, the second calls
:func:`module_attribute` here.  Each is tried at ``get()``: the call must give back the very
class being written, or the class is refused as before (AR111) -- what ``get()`` writes,
``set()`` restores.  Unsigned blobs never call anything and keep refusing these classes.
"""

from __future__ import annotations

import types
from typing import Any  # Any: a reduce tuple holds any value

from agentrt._codec import _wire
from agentrt._codec._refs import (
    ANY_MODULE,
    MISSING,
    class_dict,
    find_module,
    imported_module,
    lookup,
    module_dict,
)
from agentrt.exceptions import IncompatibleBlob

_CALL = _wire.PLACEHOLDERS["call"]
_MAX_REMEMBERED = 4096

#: class -> (the module object it was found in, the reduce tuple); valid while the module is the same
_FOUND: dict[type, tuple[types.ModuleType | None, Any]] = {}


def instance_dict(obj: object) -> dict[str, Any] | None:
    """``obj.__dict__`` when it is the ordinary one (a ``__dict__`` slot of its class), else None.

    Read through the slot descriptor, never ``getattr``: a ``__dict__`` property or a
    ``__getattr__`` of a user class is never run while a blob is written or read.
    """
    for base in type(obj).__mro__:
        slot = class_dict(base).get("__dict__", MISSING)
        if slot is MISSING:
            continue
        if type(slot) is not types.GetSetDescriptorType:
            return None
        try:
            value = slot.__get__(obj)
        except Exception:  # a C type's own __dict__ slot that refuses this object: nothing to read
            return None
        return value if type(value) is dict else None
    return None


def class_reduction(cls: type) -> Any:
    """The reduce tuple naming ``cls`` another way than ``module:qualname``, or None if there is none.

    Tried on the spot: the reduction must give back ``cls`` itself in this process.
    """
    module = imported_module(cls.__module__) if isinstance(cls.__module__, str) else None
    known = _FOUND.get(cls)
    if known is not None and known[0] is module:
        return known[1]
    reduced = _generic(cls)
    if reduced is None and module is not None:
        reduced = _held(cls, module)
    if reduced is not None:
        if len(_FOUND) >= _MAX_REMEMBERED:
            _FOUND.clear()
        _FOUND[cls] = (module, reduced)
    return reduced


def _generic(cls: type) -> Any:
    """``Origin[args]`` for a pydantic parametrized generic whose origin is named by module:qualname."""
    meta = class_dict(cls).get("__pydantic_generic_metadata__")
    if type(meta) is not dict:
        return None
    origin, args = meta.get("origin"), meta.get("args")
    if not isinstance(origin, type) or type(args) is not tuple or not args:
        return None
    origin_module = imported_module(origin.__module__) if isinstance(origin.__module__, str) else None
    if origin_module is None or lookup(origin_module, origin.__qualname__) is not origin:
        return None
    try:
        again = origin.__class_getitem__(args)  # type: ignore[attr-defined]  # pydantic's BaseModel has it
    except Exception:
        return None
    if again is not cls:
        return None
    return (_CALL, (origin.__module__, f"{origin.__qualname__}.__class_getitem__", (args,), False))


def _held(cls: type, module: types.ModuleType) -> Any:
    """``module_attribute(module, name, attribute)`` for a class a module-level name holds."""
    for name, value in list(module_dict(module).items()):
        attribute = None
        if value is not cls:
            namespace = instance_dict(value) if not isinstance(value, (type, types.ModuleType)) else None
            if namespace is None:
                continue
            attribute = next(
                (key for key, held in namespace.items() if held is cls and type(key) is str), None
            )
            if attribute is None:
                continue
        args = (module.__name__, name, attribute)
        if module_attribute(*args) is cls:
            return (_CALL, (__name__, module_attribute.__qualname__, args, False))
    return None


def module_attribute(module: str, name: str, attribute: str | None) -> Any:
    """The object ``module.name`` (or ``module.name.attribute``, read from its ``__dict__``).

    Called by the ``call`` reconstructor of a signed blob, and at ``get()`` to try it; the module
    is imported if it is not yet, as pickle would.
    """
    found = module_dict(find_module(module, ANY_MODULE)).get(name, MISSING)
    if found is not MISSING and attribute is not None:
        namespace = instance_dict(found)
        found = namespace.get(attribute, MISSING) if namespace is not None else MISSING
    if found is MISSING:
        where = f"{module}:{name}" + (f" (its attribute {attribute!r})" if attribute else "")
        raise IncompatibleBlob(
            f"{where}, which held a class the checkpoint names, no longer exists (renamed, moved or "
            "deleted since the checkpoint); finish old runs with the old code, or fork them"
        )
    return found
