"""Code identity: how a blob names a code object, and how a loader finds it again.

A blob never contains bytecode.  It names a code object by
``(module, co_qualname, digest)`` and the loader finds it in the *loaded*
module.  The digest covers what the code does (bytecode, names, constants,
argument layout, flags) and deliberately not where it sits (file name, first
line, line table): moving the checkout or editing lines above a function keeps
its blobs valid, while any change to the function itself is reported as
``IncompatibleBlob`` instead of resuming the wrong instructions.
"""

from __future__ import annotations

import functools
import hashlib
import types
from collections.abc import Iterable, Iterator
from types import CodeType
from typing import Any  # Any: module globals hold any object

from agentrt._codec._class_paths import instance_dict
from agentrt._codec._refs import class_dict, find_module, imported_module, module_dict
from agentrt._percode import PerCode
from agentrt.exceptions import IncompatibleBlob

_SHORT_DIGEST_CHARS = 8

#: Each code's digest (PerCode: by identity, since code objects hash by value, slowly for large
#: constant tuples).
_digests: PerCode[str] = PerCode("code digests")


def _const_key(const: object) -> str:
    """A text for one constant that is the same in every process (no hash-order dependence)."""
    if type(const) is CodeType:
        return "code:" + code_digest(const)
    if type(const) is tuple:
        return "(" + ",".join(_const_key(item) for item in const) + ")"
    if type(const) is frozenset:
        return "frozenset{" + ",".join(sorted(_const_key(item) for item in const)) + "}"
    return f"{type(const).__name__}:{const!r}"


def _compute_digest(code: CodeType) -> str:
    h = hashlib.blake2b(digest_size=16)
    parts: Iterable[bytes] = (
        code.co_code,
        code.co_exceptiontable,
        repr(code.co_names).encode(),
        repr(code.co_varnames).encode(),
        repr(code.co_cellvars).encode(),
        repr(code.co_freevars).encode(),
        repr((code.co_flags, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount)).encode(),
        "\x00".join(_const_key(const) for const in code.co_consts).encode("utf-8", "surrogatepass"),
    )
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def code_digest(code: CodeType) -> str:
    """The hex digest identifying what ``code`` does, independent of where it is in its file."""
    digest = _digests.get(code)
    if digest is None:
        digest = _digests.put(code, _compute_digest(code))
    return digest


def short(digest: str) -> str:
    return digest[:_SHORT_DIGEST_CHARS]


# --- the per-module index -------------------------------------------------------------

# module name -> (module object, co_qualname -> code objects defined in that module)
_indexes: dict[str, tuple[types.ModuleType, dict[str, list[CodeType]]]] = {}


def _codes_of(
    obj: object, module: types.ModuleType, globals_: dict[str, Any], seen: set[int]
) -> Iterator[CodeType]:
    """Code objects reachable from one module-level (or class-level) object."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, types.FunctionType):
        if obj.__globals__ is globals_:
            yield obj.__code__
        wrapped = obj.__dict__.get("__wrapped__")
        if wrapped is not None:
            yield from _codes_of(wrapped, module, globals_, seen)
    elif isinstance(obj, type):
        if class_dict(obj).get("__module__") != module.__name__:
            return
        for value in list(class_dict(obj).values()):
            yield from _codes_of(value, module, globals_, seen)
    elif isinstance(obj, (staticmethod, classmethod)):
        yield from _codes_of(obj.__func__, module, globals_, seen)
    elif isinstance(obj, property):
        for accessor in (obj.fget, obj.fset, obj.fdel):
            if accessor is not None:
                yield from _codes_of(accessor, module, globals_, seen)
    elif isinstance(obj, (functools.cached_property, functools.partial)):
        yield from _codes_of(obj.func, module, globals_, seen)
    elif type(obj).__name__ == "_lru_cache_wrapper" and type(obj).__module__ == "functools":
        yield from _codes_of(getattr(obj, "__wrapped__", None), module, globals_, seen)
    elif not isinstance(obj, types.ModuleType):
        yield from _held_functions(obj, module, globals_, seen)


def _held_functions(
    obj: object, module: types.ModuleType, globals_: dict[str, Any], seen: set[int]
) -> Iterator[CodeType]:
    """Functions of this module that a module-level object holds in its ``__dict__``.

    A decorator that returns an object instead of a function (``@function_tool`` making a
    ``FunctionTool``, LangChain's ``@tool`` making a ``StructuredTool``) leaves the function
    reachable only through that object: its code (and the frames running it) is found there.
    One level only, and only functions whose globals are this module's.
    """
    namespace = instance_dict(obj)
    if namespace is None:
        return
    for value in list(namespace.values()):
        if isinstance(value, (functools.partial, staticmethod, classmethod)):
            yield from _codes_of(value, module, globals_, seen)
        elif isinstance(value, types.FunctionType):
            yield from _codes_of(value, module, globals_, seen)
            yield from _enclosed(value, module, globals_, seen, _CLOSURE_DEPTH)


#: how many closures deep a held function is followed: the OpenAI Agents SDK's ``function_tool``
#: keeps the user's function two closures down (``on_invoke_tool`` -> ``_on_invoke_tool_impl``)
_CLOSURE_DEPTH = 2


def _enclosed(
    fn: types.FunctionType, module: types.ModuleType, globals_: dict[str, Any], seen: set[int], depth: int
) -> Iterator[CodeType]:
    """Functions of this module in the closure cells of ``fn`` (a library's wrapper), ``depth`` deep."""
    for cell in fn.__closure__ or ():
        try:
            inner = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(inner, types.FunctionType) and id(inner) not in seen:
            yield from _codes_of(inner, module, globals_, seen)
            if depth > 1:
                yield from _enclosed(inner, module, globals_, seen, depth - 1)


def _build_index(module: types.ModuleType) -> dict[str, list[CodeType]]:
    index: dict[str, list[CodeType]] = {}
    seen_codes: set[int] = set()
    pending: list[CodeType] = []
    globals_ = module_dict(module)
    seen: set[int] = set()
    for value in list(globals_.values()):
        pending.extend(_codes_of(value, module, globals_, seen))
    while pending:
        code = pending.pop()
        if id(code) in seen_codes:
            continue
        seen_codes.add(id(code))
        index.setdefault(code.co_qualname, []).append(code)
        pending.extend(const for const in code.co_consts if type(const) is CodeType)
    return index


def _index(module: types.ModuleType, *, refresh: bool = False) -> dict[str, list[CodeType]]:
    cached = _indexes.get(module.__name__)
    if cached is not None and cached[0] is module and not refresh:
        return cached[1]
    index = _build_index(module)
    _indexes[module.__name__] = (module, index)
    return index


def _find(module: types.ModuleType, qualname: str, digest: str) -> tuple[CodeType | None, list[CodeType]]:
    for refresh in (False, True):
        candidates = _index(module, refresh=refresh).get(qualname, [])
        for candidate in candidates:
            if code_digest(candidate) == digest:
                return candidate, candidates
    return None, candidates


def resolve_code(module: str, qualname: str, digest: str, allow_modules: Iterable[str] = ()) -> CodeType:
    """The code object of ``module:qualname`` in this process, which must have ``digest``.

    The module must already be imported, or be named in ``allow_modules`` (then it
    is imported).  Raises :class:`IncompatibleBlob` naming the function and what
    changed.
    """
    allowed = (
        allow_modules if isinstance(allow_modules, (tuple, frozenset, set, list)) else tuple(allow_modules)
    )
    module_obj = find_module(module, allowed)
    code, candidates = _find(module_obj, qualname, digest)
    if code is not None:
        return code
    if not candidates:
        raise IncompatibleBlob(
            f"{module}:{qualname} no longer exists (renamed, moved or deleted since the checkpoint); "
            "finish old runs with the old code, or fork them"
        )
    now = ", ".join(short(code_digest(candidate)) for candidate in candidates)
    raise IncompatibleBlob(
        f"code of {module}:{qualname} changed since the checkpoint (digest {short(digest)} → {now}); "
        "finish old runs with the old code, or fork them"
    )


#: Per code, the modules (name -> module object) it was found in: positive answers only.
_FINDABLE: PerCode[dict[str, object]] = PerCode("findable codes")


def findable(code: CodeType, module: str) -> str | None:
    """Encode-side check that ``resolve_code`` will find ``code`` again; the reason if not.

    A positive answer is remembered per (code, module object): the same code found
    in the same module stays findable, and every checkpoint of a chain asks again.
    """
    module_obj = imported_module(module)
    found = _FINDABLE.get(code)
    if found is not None and found.get(module) is module_obj:
        return None
    reason = _findable(code, module, module_obj)
    if reason is None:
        if found is None:
            found = _FINDABLE.put(code, {})
        found[module] = module_obj
    return reason


def _findable(code: CodeType, module: str, module_obj: Any) -> str | None:
    if module_obj is None:
        return f"its module {module!r} is not in sys.modules"
    for refresh in (False, True):
        candidates = _index(module_obj, refresh=refresh).get(code.co_qualname, [])
        if any(candidate is code for candidate in candidates):
            return None
        digest = code_digest(code)
        if any(code_digest(candidate) == digest for candidate in candidates):
            return None
    return (
        f"cannot be found again in module {module!r} "
        "(it was created by exec/compile, or is reachable only through a container)"
    )
