"""The reconstructors: the only functions a blob can call, bound to one load's context.

Every reconstructor treats its arguments as untrusted data: it checks their
types, builds one object, and never imports a module or calls user code --
except the restoration of classes their authors marked ``@serializable``
(``__new__``, ``__setstate__``, ``__iter__`` of their iterators).  Objects that
need contents after they exist (cells, closures, instances, exceptions,
extension objects) are registered as *pending*; the ``state`` reconstructor
fills only pending objects of this load, once, so a blob cannot use it to
modify functions or classes it merely referenced.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import types
from collections.abc import Callable, Sequence
from types import CodeType
from typing import Any  # Any: the codec rebuilds any Python object

from agentrt._codec import _pickled, _reopen
from agentrt._codec._bounds import describe_error, short
from agentrt._codec._compat import TPFLAGS_HEAPTYPE
from agentrt._codec._extension import Extension, extension_named
from agentrt._codec._format import CodeIdentity
from agentrt._codec._hazards import type_name
from agentrt._codec._reduce import (
    IMMUTABLE_BASES,
    MUTABLE_BASES,
    builtin_base,
    extension_is_inert,
    native_members,
)
from agentrt._codec._refs import (
    ANY_MODULE,
    BUILTIN_CALLABLE_TYPES,
    MISSING,
    class_dict,
    find_module,
    imported_module,
    lookup,
    module_dict,
    unwrap_method,
)
from agentrt._codec._serializable import is_serializable
from agentrt.exceptions import AgentrtError, CorruptBlob, IncompatibleBlob

Applier = Callable[["DecodeContext", Any, Any, Any], None]
RECONSTRUCTORS: dict[str, Callable[..., Any]] = {}


def _reconstructor(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        RECONSTRUCTORS[name] = fn
        return fn

    return register


def _corrupt(what: str) -> CorruptBlob:
    return CorruptBlob(f"malformed blob: {what}")


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise _corrupt(what)


class DecodeContext:
    """One load: the resolved code table, the pending objects, and the after-load callbacks.

    Implements the ``DecodeContext`` protocol of ``_extension``.  ``verified``
    says whether referencing reconstructors may run (the blob declared them and
    was authenticated or passed the dry run).
    """

    def __init__(
        self,
        identities: Sequence[CodeIdentity],
        codes: Sequence[CodeType],
        allow_modules: frozenset[str],
        *,
        verified: bool,
    ) -> None:
        self._identities = identities
        self._codes = codes
        self.allow_modules = allow_modules
        self.verified = verified
        self.signed = False
        self.describe = False  # decoded to be shown (agentrt dump): extensions build data, never run code
        self._pending: dict[int, tuple[Any, Applier, Any]] = {}
        self._fixups: list[Callable[[], None]] = []
        self._after: list[Callable[[], None]] = []
        self._refuse: list[Callable[[], None]] = []
        self._accept: list[Callable[[], None]] = []

    # --- the seam (DecodeContext protocol) ---

    def code(self, index: int) -> CodeType:
        if not (type(index) is int and 0 <= index < len(self._codes)):
            raise _corrupt(f"code index {short(index)} out of range")  # built only when refusing
        return self._codes[index]

    def code_module(self, index: int) -> str:
        if not (type(index) is int and 0 <= index < len(self._codes)):
            raise _corrupt(f"code index {short(index)} out of range")
        return self._identities[index].module

    def after_load(self, callback: Callable[[], None]) -> None:
        self._after.append(callback)

    def on_refuse(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` if this load is refused, by the codec or by its caller (see :meth:`refuse`)."""
        self._refuse.append(callback)

    def refuse(self) -> None:
        """The load is refused: let extensions drop what they built without running any of it."""
        callbacks, self._refuse, self._accept = self._refuse, [], []
        for callback in callbacks:
            callback()

    def on_accept(self, callback: Callable[[], None]) -> None:
        self._accept.append(callback)

    def accept(self) -> None:
        """The result is kept: extensions may now keep what they cached for it (e.g. on disk)."""
        callbacks, self._accept, self._refuse = self._accept, [], []
        for callback in callbacks:
            callback()

    # --- bookkeeping ---

    def expect_state(self, obj: Any, apply: Applier, extra: Any = None) -> None:
        self._pending[id(obj)] = (obj, apply, extra)

    def finish_graph(self) -> None:
        """Codec-internal fixes that need the complete graph (iterator positions)."""
        for fixup in self._fixups:
            fixup()

    def run_after_load(self) -> None:
        for callback in self._after:
            try:
                callback()
            except AgentrtError:
                raise
            except Exception as exc:
                raise CorruptBlob(f"restoring the blob failed after decoding: {describe_error(exc)}") from exc


# --- state --------------------------------------------------------------------------------


@_reconstructor("state")
def r_state(ctx: DecodeContext, obj: Any, state: Any) -> None:
    entry = ctx._pending.pop(id(obj), None)
    if entry is None or entry[0] is not obj:
        raise _corrupt("it sets the state of an object it did not create")
    entry[1](ctx, obj, state, entry[2])


# --- references by name -------------------------------------------------------------------

_KIND_CHECKS: dict[str, Callable[[object], bool]] = {
    "function": lambda obj: type(obj) is types.FunctionType,
    "class": lambda obj: isinstance(obj, type),
    "builtin": lambda obj: isinstance(obj, BUILTIN_CALLABLE_TYPES),
}


#: (module, qualname, kind) -> (module object, what its namespace held, the reference) for names at
#: the top of a module: a blob names the same classes again and again, and the answer stands while
#: the module is the same ``sys.modules`` entry holding the same object under that name
_REFS: dict[tuple[str, str, str], tuple[Any, Any, Any]] = {}
_MAX_REFS = 4096


@_reconstructor("ref")
def r_ref(ctx: DecodeContext, module: str, qualname: str, kind: str) -> Any:
    _require(type(module) is str and type(qualname) is str and type(kind) is str, "reference arguments")
    cached = _REFS.get((module, qualname, kind))
    if cached is not None:
        module_obj = sys.modules.get(module)
        if module_obj is cached[0] and module_dict(module_obj).get(qualname, MISSING) is cached[1]:
            return cached[2]
    if kind != "module" and kind not in _KIND_CHECKS:
        raise _corrupt(f"unknown reference kind {short(kind, 40)}")
    # a signed blob imports the module of a class it names, as pickle would (an SDK's response
    # types); modules, functions and code are found only among imported or allowed modules
    module_obj = find_module(module, ANY_MODULE if ctx.signed and kind == "class" else ctx.allow_modules)
    if kind == "module":
        _require(qualname == "", "module reference with a qualname")
        return module_obj
    found = lookup(module_obj, qualname)
    if found is MISSING:
        raise IncompatibleBlob(
            f"{module}:{qualname} no longer exists (renamed, moved or deleted since the checkpoint); "
            "finish old runs with the old code, or fork them"
        )
    raw = found
    if kind == "function":
        found = unwrap_method(found)
    if not _KIND_CHECKS[kind](found):
        raise IncompatibleBlob(
            f"{module}:{qualname} is now a {type_name(type(found))}, but the checkpoint recorded a {kind}; "
            "finish old runs with the old code, or fork them"
        )
    if "." not in qualname:
        if len(_REFS) >= _MAX_REFS:
            _REFS.clear()
        _REFS[(module, qualname, kind)] = (module_obj, raw, found)
    return found


def _apply_function(ctx: DecodeContext, fn: types.FunctionType, state: Any, extra: Any) -> None:
    _require(type(state) is tuple and len(state) == 6, "function state")
    name, qualname, defaults, kwdefaults, attributes, doc = state
    fn.__name__ = name
    fn.__qualname__ = qualname
    fn.__defaults__ = defaults
    fn.__kwdefaults__ = kwdefaults
    if attributes is not None:
        _require(type(attributes) is dict and all(type(k) is str for k in attributes), "function attributes")
        fn.__dict__.update(attributes)
    fn.__doc__ = doc


@_reconstructor("fn")
def r_fn(ctx: DecodeContext, index: int, closure: tuple[types.CellType, ...] | None) -> types.FunctionType:
    code = ctx.code(index)
    module = find_module(ctx.code_module(index), ctx.allow_modules)
    _require(
        closure is None or (type(closure) is tuple and all(type(c) is types.CellType for c in closure)),
        "closure is not a tuple of cells",
    )
    if len(closure or ()) != len(code.co_freevars):
        raise _corrupt(f"closure of {code.co_qualname} has the wrong size")
    fn = types.FunctionType(code, module_dict(module), code.co_name, None, closure)
    ctx.expect_state(fn, _apply_function)
    return fn


def _apply_cell(ctx: DecodeContext, cell: types.CellType, state: Any, extra: Any) -> None:
    _require(type(state) is tuple and len(state) <= 1, "cell state")
    if state:
        cell.cell_contents = state[0]


@_reconstructor("cell")
def r_cell(ctx: DecodeContext) -> types.CellType:
    cell = types.CellType()
    ctx.expect_state(cell, _apply_cell)
    return cell


@_reconstructor("method")
def r_method(ctx: DecodeContext, func: Any, owner: Any) -> types.MethodType:
    _require(callable(func), "bound method of something not callable")
    return types.MethodType(func, owner)


_C_METHOD_DESCRIPTORS = (types.MethodDescriptorType, types.WrapperDescriptorType)


@_reconstructor("descr")
def r_descr(ctx: DecodeContext, owner: Any, name: str) -> Any:
    """An unbound C method (``generator.send``) of a class that is itself referable."""
    _require(isinstance(owner, type) and type(name) is str, "method descriptor arguments")
    descriptor = class_dict(owner).get(name)
    if not isinstance(descriptor, BUILTIN_CALLABLE_TYPES):
        raise IncompatibleBlob(f"{type_name(owner)}.{name} is no longer a builtin method")
    return descriptor


@_reconstructor("bmethod")
def r_bmethod(ctx: DecodeContext, owner: Any, name: str) -> Any:
    _require(type(name) is str and not isinstance(owner, types.ModuleType), "builtin method arguments")
    cls = owner if isinstance(owner, type) else type(owner)
    descriptor = next((class_dict(base)[name] for base in cls.__mro__ if name in class_dict(base)), None)
    if isinstance(owner, type):
        _require(
            isinstance(descriptor, types.ClassMethodDescriptorType),
            f"{short(name, 40)} is not a builtin classmethod",
        )
        bound = descriptor.__get__(None, owner)  # type: ignore[union-attr]  # _require above proved it a descriptor
    else:
        _require(isinstance(descriptor, _C_METHOD_DESCRIPTORS), f"{short(name, 40)} is not a builtin method")
        bound = descriptor.__get__(owner, cls)  # type: ignore[union-attr]  # _require above proved it a descriptor
    _require(getattr(bound, "__self__", None) is owner, "builtin method not bound to its owner")
    return bound


def _apply_partial(ctx: DecodeContext, p: functools.partial[Any], state: Any, extra: Any) -> None:
    _require(type(state) is tuple and len(state) == 3, "partial state")
    args, keywords, attributes = state
    partial_state: Any = p
    partial_state.__setstate__((p.func, args, keywords, attributes))


@_reconstructor("partial")
def r_partial(ctx: DecodeContext, func: Any) -> functools.partial[Any]:
    _require(callable(func), "partial of something not callable")
    p = functools.partial(func)
    ctx.expect_state(p, _apply_partial)
    return p


# --- enums, exceptions, instances ---------------------------------------------------------


@_reconstructor("enum")
def r_enum(ctx: DecodeContext, cls: Any, name: str | None, value: Any) -> Any:
    enum = imported_module("enum")
    base = module_dict(enum).get("Enum") if enum is not None else None
    _require(
        isinstance(cls, type) and isinstance(base, type) and issubclass(cls, base),
        "enum member of a non-enum",
    )
    if name is not None:
        _require(type(name) is str, "enum member name")
        member = class_dict(cls)["_member_map_"].get(name)
        if member is None:
            raise IncompatibleBlob(
                f"enum {type_name(cls)} has no member {name!r} any more; finish old runs "
                "with the old code, or fork them"
            )
        return member
    flag = module_dict(enum).get("Flag") if enum is not None else None
    _require(isinstance(flag, type) and issubclass(cls, flag), "enum member without a name")
    return cls(value)


def _native_base(cls: type) -> type:
    return next(base for base in cls.__mro__ if not base.__flags__ & TPFLAGS_HEAPTYPE)


def _apply_exception(ctx: DecodeContext, exc: BaseException, state: Any, extra: Any) -> None:
    _require(type(state) is tuple and len(state) == 6, "exception state")
    args, cause, context, suppress, attributes, members = state
    _require(type(args) is tuple and type(suppress) is bool, "exception args")
    exc.args = args
    exc.__cause__ = cause
    exc.__context__ = context
    exc.__suppress_context__ = suppress
    if attributes is not None:
        _require(type(attributes) is dict and all(type(k) is str for k in attributes), "exception attributes")
        exc.__dict__.update(attributes)
    if members is not None:
        known = dict(native_members(type(exc)))
        _require(type(members) is tuple, "exception fields")
        for member in members:
            _require(type(member) is tuple and len(member) == 2, "exception field")
            name, value = member
            descriptor = known.get(name) if type(name) is str else None
            if descriptor is None:
                raise _corrupt(f"exception field {short(name, 40)}")
            _check_native_field(exc, name, value)
            with contextlib.suppress(AttributeError):  # read-only fields were set from args by __new__
                descriptor.__set__(exc, value)
        if isinstance(exc, UnicodeError):
            _check_unicode_error(exc)


#: the C-level exception fields that C code reads without checking their type, and the types they need
_NATIVE_FIELD_TYPES: dict[tuple[type, str], tuple[type, ...]] = {
    (UnicodeError, "encoding"): (str,),
    (UnicodeError, "reason"): (str,),
    (UnicodeError, "object"): (str, bytes),
    (UnicodeError, "start"): (int,),
    (UnicodeError, "end"): (int,),
    (OSError, "errno"): (int,),
    (OSError, "strerror"): (str,),
    (OSError, "filename"): (str, bytes, int),
    (OSError, "filename2"): (str, bytes, int),
    (OSError, "characters_written"): (int,),
}


def _check_native_field(exc: BaseException, name: str, value: Any) -> None:
    """Refuse a value C code would misread (the encoder never writes None: unset fields are omitted)."""
    _require(value is not None, f"exception field {short(name, 40)} is None")
    for (owner, field), allowed in _NATIVE_FIELD_TYPES.items():
        if field == name and isinstance(exc, owner):
            _require(type(value) in allowed, f"exception field {name} is a {type(value).__name__}")


def _check_unicode_error(exc: UnicodeError) -> None:
    """start/end inside ``object``, which must be bytes for a decode error and str otherwise.

    ``UnicodeDecodeError.__str__`` indexes ``object`` at ``start`` without a bounds check:
    ``start=-2**40`` read from a blob would crash the process when the error is printed.
    """
    obj, start, end = (getattr(exc, name, None) for name in ("object", "start", "end"))
    if obj is None:
        return  # never set (None values are refused above): the C code checks for it
    wanted = bytes if isinstance(exc, UnicodeDecodeError) else str
    _require(type(obj) is wanted, f"{type(exc).__name__}.object is not {wanted.__name__}")
    _require(
        type(start) is int and type(end) is int and 0 <= start <= len(obj) and 0 <= end <= len(obj),
        f"{type(exc).__name__}.start/end outside its object",
    )


@_reconstructor("exc")
def r_exc(ctx: DecodeContext, cls: Any, group_args: tuple[Any, ...] | None) -> BaseException:
    _require(isinstance(cls, type) and issubclass(cls, BaseException), "exception of a non-exception class")
    native: Any = _native_base(cls)
    if group_args is not None:
        _require(
            issubclass(cls, BaseExceptionGroup) and type(group_args) is tuple, "exception group arguments"
        )
        exc: BaseException = native.__new__(cls, *group_args)
    else:
        exc = native.__new__(cls)
    ctx.expect_state(exc, _apply_exception)
    return exc


_setstate_cache: dict[type, bool] = {}


def _has_custom_setstate(cls: type) -> bool:
    found = _setstate_cache.get(cls)
    if found is None:
        found = _setstate_cache[cls] = any(
            "__setstate__" in class_dict(base) for base in cls.__mro__ if base is not object
        )
    return found


def _slot(cls: type, name: str) -> Any:
    for base in cls.__mro__:
        descriptor = class_dict(base).get(name)
        if descriptor is not None:
            return descriptor if isinstance(descriptor, types.MemberDescriptorType) else None
    return None


def _apply_default_state(obj: Any, state: Any) -> None:
    """What pickle's BUILD does with a state, minus calling setattr hooks."""
    if type(state) is tuple and len(state) == 2:
        attributes, slots = state
    else:
        attributes, slots = state, None
    if attributes:
        _require(type(attributes) is dict and all(type(k) is str for k in attributes), "instance attributes")
        try:
            namespace = obj.__dict__
        except AttributeError:
            raise _corrupt(f"{type_name(type(obj))} instances have no __dict__") from None
        for key, value in attributes.items():
            namespace[sys.intern(key)] = value
    if slots:
        _require(type(slots) is dict, "instance slots")
        for key, value in slots.items():
            descriptor = _slot(type(obj), key) if type(key) is str else None
            if descriptor is None:
                raise _corrupt(f"{type_name(type(obj))} has no slot {short(key, 40)}")
            descriptor.__set__(obj, value)


def _apply_instance(ctx: DecodeContext, obj: Any, state: Any, base: type | None) -> None:
    if base in MUTABLE_BASES:
        _require(type(state) is tuple and len(state) == 2, "container instance state")
        state, items = state
        _require(type(items) is base, "container instance items")
        {dict: dict.update, list: list.extend, set: set.update}[base](obj, items)  # type: ignore[index, operator]  # base is one of MUTABLE_BASES (checked above)
        if state is None:
            return
    if _has_custom_setstate(type(obj)):
        obj.__setstate__(state)
    else:
        _apply_default_state(obj, state)


@_reconstructor("obj")
def r_obj(ctx: DecodeContext, cls: Any, value: Any) -> Any:
    if not isinstance(cls, type) or issubclass(cls, BaseException):
        raise _corrupt("instance of a non-class")
    if not is_serializable(cls):
        raise IncompatibleBlob(
            f"class {type_name(cls)} is not marked @agentrt.serializable in this process, but the checkpoint "
            "holds an instance of it; mark it again, or finish old runs with the old code"
        )
    base = builtin_base(cls)
    if base is None or base in MUTABLE_BASES:
        if value is not None:
            raise _corrupt("instance arguments")
        obj = cls.__new__(cls)
    else:
        _require(base in IMMUTABLE_BASES and type(value) is base, "instance of a builtin-derived class")
        obj = base.__new__(cls, value)  # type: ignore[arg-type]  # cls derives from base (builtin_base)
    ctx._pending[id(obj)] = (obj, _apply_instance, base)  # expect_state, inlined
    return obj


# --- signed blobs only: the pickle protocol and reopened clients ---------------------------


def _apply_pickled(ctx: DecodeContext, obj: Any, contents: Any, extra: Any) -> None:
    _require(type(contents) is tuple and len(contents) == 3, "pickled state")
    _pickled.apply_contents(obj, contents)


@_reconstructor("call")
def r_call(
    ctx: DecodeContext, module: str, qualname: str, args: tuple[Any, ...] | None, stateful: bool
) -> Any:
    """``module:qualname(*args)``, as pickle's REDUCE would call it (``args`` None: the object itself)."""
    _require(ctx.signed, "an unsigned blob calls the pickle protocol")  # find_class refused it first
    _require(
        type(module) is str
        and type(qualname) is str
        and (args is None or type(args) is tuple)
        and type(stateful) is bool,
        "call arguments",
    )
    found = _pickled.find_callable(module, qualname)
    if found is MISSING:
        raise IncompatibleBlob(
            f"{module}:{qualname} no longer exists (renamed, moved or deleted since the checkpoint); "
            "finish old runs with the old code, or fork them"
        )
    if args is None:
        return found
    try:
        obj = found(*args)  # a signed blob: what pickle would call
    except AgentrtError:
        raise
    except Exception as exc:
        raise IncompatibleBlob(
            f"restoring a value with {module}:{qualname} failed ({describe_error(exc)}); the class changed "
            "since the checkpoint? finish old runs with the old code, or fork them"
        ) from exc
    if stateful:
        ctx._pending[id(obj)] = (obj, _apply_pickled, None)  # expect_state, inlined
    return obj


@_reconstructor("reopen")
def r_reopen(ctx: DecodeContext, name: str, state: Any) -> Any:
    """A client re-created by its registered ``reopen(state)`` (``agentrt.reopenable``)."""
    _require(ctx.signed, "an unsigned blob reopens a client")  # find_class refused it first
    _require(type(name) is str, "reopen name")
    return _reopen.reopen(name, state)


# --- extensions ---------------------------------------------------------------------------


def _apply_extension(ctx: DecodeContext, obj: Any, state: Any, ext: Extension) -> None:
    if type(state) is not tuple or not 1 <= len(state) <= 2:
        raise _corrupt("extension state")
    if len(state) == 2:
        _unwrap_floats(state[0], state[1])
    ext.set_state(ctx, obj, state[0])


def _unwrap_floats(values: Any, positions: Any) -> None:
    """Undo ``_reduce._share_floats``: each listed position holds a 1-tuple of a float."""
    if type(values) is not list or type(positions) is not tuple or not positions:
        raise _corrupt("float positions")
    size = len(values)
    for i in positions:
        if type(i) is not int or not 0 <= i < size:
            raise _corrupt("float position")
        box = values[i]
        if type(box) is not tuple or len(box) != 1 or type(box[0]) is not float:
            raise _corrupt("shared float")
        values[i] = box[0]


@_reconstructor("ext")
def r_ext(ctx: DecodeContext, name: str, *args: Any) -> Any:
    ext = extension_named(name) if type(name) is str else None
    if ext is None:
        _require(type(name) is str, "extension name")
        raise IncompatibleBlob(
            f"blob needs the agentrt extension {short(name, 60)}, which is not registered in this process; "
            "import agentrt.lowlevel (or the package that provides it) before loading"
        )
    if not (ctx.verified or extension_is_inert(ext)):
        raise _corrupt(f"extension {name!r} objects need a verified blob, and this one did not declare it")
    obj = ext.create(ctx, *args)
    ctx._pending[id(obj)] = (obj, _apply_extension, ext)  # expect_state, inlined
    return obj
