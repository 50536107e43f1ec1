"""Per-type reducers: how each kind of value becomes a call of an agentrt reconstructor.

The C pickler handles exact builtin atoms and containers itself and never shows
them to ``reducer_override``; every other object comes here.  A reducer returns
a reduce tuple whose callable is always a placeholder from ``_wire`` (so the
payload only ever names agentrt reconstructors), uses the 6-tuple form with the
``state`` reconstructor when an object must exist before its contents (that is
what makes cycles through it work), or raises :class:`Refused`.

Dispatch is a dict on the exact type; the first object of a new type pays for
working out its reducer, later ones are one dict lookup.
"""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Callable
from sys import getrefcount
from typing import Any  # Any: the codec reduces any Python object

from agentrt._codec import _class_paths, _pickled, _reopen, _wire
from agentrt._codec._bounds import describe_error
from agentrt._codec._compat import TPFLAGS_HEAPTYPE
from agentrt._codec._extension import STORED_AS, Extension, extension_for_type
from agentrt._codec._format import FLAG_REFERENCING
from agentrt._codec._hazards import Refusal, classify, not_referable, type_name
from agentrt._codec._reduce_plain import (
    DICT_ITER_KINDS as DICT_ITER_KINDS,
)
from agentrt._codec._reduce_plain import (
    SEQ_ITER_KINDS as SEQ_ITER_KINDS,
)
from agentrt._codec._reduce_plain import (
    EncodeState as EncodeState,
)
from agentrt._codec._reduce_plain import (
    Reducer as Reducer,
)
from agentrt._codec._reduce_plain import (
    Refused as Refused,
)
from agentrt._codec._reduce_plain import (
    Unresolvable as Unresolvable,
)
from agentrt._codec._reduce_plain import (
    _r_complex,
    _r_const,
    _r_counter,
    _r_datetime_like,
    _r_decimal,
    _r_defaultdict,
    _r_deque,
    _r_dictiter,
    _r_enumerate,
    _r_filter,
    _r_map,
    _r_odict,
    _r_pattern,
    _r_range,
    _r_seqiter,
    _r_setiter,
    _r_slice,
    _r_timedelta,
    _r_timezone,
    _r_uuid,
    _r_zip,
)
from agentrt._codec._refs import (
    class_dict,
    imported_module,
    lookup_name,
    module_dict,
    unwrap_method,
)
from agentrt._codec._serializable import is_serializable

P = _wire.PLACEHOLDERS
_REF, _FN, _METHOD, _BMETHOD, _PARTIAL = P["ref"], P["fn"], P["method"], P["bmethod"], P["partial"]
_OBJ, _EXC, _ENUM, _STATE, _CELL, _EXT = P["obj"], P["exc"], P["enum"], P["state"], P["cell"], P["ext"]
_SEQITER, _DICTITER, _SETITER = P["seqiter"], P["dictiter"], P["setiter"]
_REOPEN = P["reopen"]

#: Exact types the C pickler writes itself; ``reducer_override`` never sees them.
PASSTHROUGH: frozenset[type] = frozenset(
    {type(None), bool, int, float, str, bytes, bytearray, list, tuple, dict, set, frozenset}
)


# --- callables ------------------------------------------------------------------------


def _r_function(enc: EncodeState, fn: types.FunctionType) -> Any:
    if fn in _wire.ALL_PLACEHOLDERS:  # a reconstructor's name: let the pickler write the global
        if fn in _wire.REFERENCING_PLACEHOLDERS:
            enc.flags |= FLAG_REFERENCING
        if fn in _wire.NEEDS_PLACEHOLDERS:  # once per blob: the pickler memoizes the global
            enc.need(fn.__name__)
        return NotImplemented
    module, qualname = fn.__module__, fn.__qualname__
    if unwrap_method(lookup_name(module, qualname)) is fn:
        return (_REF, (module, qualname, "function"))
    return _r_function_by_code(enc, fn)


def _r_function_by_code(enc: EncodeState, fn: types.FunctionType) -> Any:
    globals_ = fn.__globals__
    module_name = globals_.get("__name__")
    module = imported_module(module_name) if isinstance(module_name, str) else None
    qualified = f"{module_name}:{fn.__qualname__}"
    if module is None or module_dict(module) is not globals_:
        reason = "has globals that are not the namespace of an imported module"
        raise Refused(fn, Refusal("AR106", "function", not_referable("function", qualified, reason)))
    try:
        index = enc.code_ref(fn.__code__, module_name)  # type: ignore[arg-type]  # a str: module is None otherwise
    except Unresolvable as exc:
        raise Refused(
            fn, Refusal("AR106", "function", not_referable("function", qualified, exc.reason))
        ) from None
    state = (
        fn.__name__,
        fn.__qualname__,
        fn.__defaults__,
        fn.__kwdefaults__,
        fn.__dict__ or None,
        fn.__doc__,
    )
    return (_FN, (index, fn.__closure__), state, None, None, _STATE)


def _r_cell(enc: EncodeState, cell: types.CellType) -> Any:
    try:
        state: tuple[Any, ...] = (cell.cell_contents,)
    except ValueError:  # an empty cell: a closure variable not assigned yet
        state = ()
    return (_CELL, (), state, None, None, _STATE)


def _r_method(enc: EncodeState, method: types.MethodType) -> Any:
    return (_METHOD, (method.__func__, method.__self__))


def _r_builtin(enc: EncodeState, fn: types.BuiltinFunctionType) -> Any:
    owner = fn.__self__
    if owner is None or isinstance(owner, types.ModuleType):
        module = fn.__module__ or getattr(owner, "__name__", None)
        if lookup_name(module, fn.__qualname__) is fn:
            return (_REF, (module, fn.__qualname__, "builtin"))
        reason = "is not reachable by module:qualname"
        raise Refused(
            fn, Refusal("AR106", "builtin function", not_referable("builtin", fn.__qualname__, reason))
        )
    if isinstance(owner, type) and lookup_name(owner.__module__, f"{owner.__qualname__}.{fn.__name__}") is fn:
        return (_REF, (owner.__module__, f"{owner.__qualname__}.{fn.__name__}", "builtin"))  # object.__new__
    return (_BMETHOD, (owner, fn.__name__))


def _r_method_wrapper(enc: EncodeState, fn: Any) -> Any:
    return (_BMETHOD, (fn.__self__, fn.__name__))


def _r_descriptor(enc: EncodeState, descr: Any) -> Any:
    owner: type = descr.__objclass__
    name: str = descr.__name__
    module, qualname = owner.__module__, descr.__qualname__
    if lookup_name(module, qualname) is descr:
        return (_REF, (module, qualname, "builtin"))
    if class_dict(owner).get(name) is descr:  # e.g. generator.send: found through its class
        return (P["descr"], (owner, name))
    raise Refused(
        descr,
        Refusal(
            "AR106",
            type_name(type(descr)),
            not_referable("method", qualname, "is not reachable by module:qualname"),
        ),
    )


def _r_partial(enc: EncodeState, p: functools.partial[Any]) -> Any:
    return (_PARTIAL, (p.func,), (p.args, p.keywords or None, p.__dict__ or None), None, None, _STATE)


def _r_module(enc: EncodeState, module: types.ModuleType) -> Any:
    name = module.__name__
    if imported_module(name) is module:
        return (_REF, (name, "", "module"))
    raise Refused(module)


_TYPES_ALIASES: dict[int, str] = {
    id(value): name
    for name, value in vars(types).items()
    if isinstance(value, type) and not name.startswith("_")
}


#: class -> (its module object, its reduce tuple), for classes found at the top of their module:
#: valid while the module is the same object and still holds the class under that name
_CLASS_REFS: dict[type, tuple[Any, Any]] = {}


def _r_class(enc: EncodeState, cls: type) -> Any:
    module, qualname = cls.__module__, cls.__qualname__
    cached = _CLASS_REFS.get(cls)
    if cached is not None:
        module_obj = imported_module(module)
        if module_obj is cached[0] and module_dict(module_obj).get(qualname) is cls:
            return cached[1]
    if lookup_name(module, qualname) is cls:
        reduced = (_REF, (module, qualname, "class"))
        if "." not in qualname:
            if len(_CLASS_REFS) >= _MAX_CACHED_CLASSES:
                _CLASS_REFS.clear()
            _CLASS_REFS[cls] = (imported_module(module), reduced)
        return reduced
    alias = _TYPES_ALIASES.get(id(cls))
    if alias is not None and lookup_name("types", alias) is cls:
        return (_REF, ("types", alias, "class"))
    if enc.signed:  # a pydantic generic, or a class a module-level object holds (_class_paths)
        elsewhere = _class_paths.class_reduction(cls)
        if elsewhere is not None:
            enc.flags |= FLAG_REFERENCING
            return elsewhere
    reason = (
        "is defined inside a function" if "<locals>" in qualname else "is not reachable by module:qualname"
    )
    raise Refused(
        cls,
        Refusal("AR111", f"class {type_name(cls)}", not_referable("class", f"{module}:{qualname}", reason)),
    )


# --- enums, exceptions, instances -----------------------------------------------------


def _r_enum(enc: EncodeState, member: Any) -> Any:
    cls = type(member)
    name = member._name_
    if name is not None and cls._member_map_.get(name) is member:
        return (_ENUM, (cls, name, None))
    return (_ENUM, (cls, None, member._value_))


_native_members_cache: dict[type, tuple[tuple[str, Any], ...]] = {}


def native_members(cls: type) -> tuple[tuple[str, Any], ...]:
    """``(name, descriptor)`` of the C-level fields of an exception class (errno, value, ...)."""
    cached = _native_members_cache.get(cls)
    if cached is None:
        found: dict[str, Any] = {}
        for base in cls.__mro__:
            if base.__flags__ & TPFLAGS_HEAPTYPE or base in (BaseException, object):
                continue
            for name, value in class_dict(base).items():
                if name.startswith("__") or name in found:
                    continue
                if isinstance(value, (types.MemberDescriptorType, types.GetSetDescriptorType)):
                    found[name] = value
        cached = _native_members_cache[cls] = tuple(found.items())
    return cached


def _r_exception(enc: EncodeState, exc: BaseException) -> Any:
    cls = type(exc)
    members = []
    for name, descr in native_members(cls):
        try:
            value = descr.__get__(exc, cls)
        except (AttributeError, TypeError):  # unset C field, e.g. BlockingIOError.characters_written
            continue
        if value is not None:  # None reads back from an unset field; setting it would change str(exc)
            members.append((name, value))
    group_args = exc.args if isinstance(exc, BaseExceptionGroup) else None
    state = (
        exc.args,
        exc.__cause__,
        exc.__context__,
        exc.__suppress_context__,
        exc.__dict__ or None,
        tuple(members) or None,
    )
    return (_EXC, (cls, group_args), state, None, None, _STATE)


#: builtin bases a @serializable class may extend, and how to read the builtin part.
IMMUTABLE_BASES: dict[type, Callable[[Any], Any]] = {
    tuple: lambda obj: tuple(tuple.__iter__(obj)),
    frozenset: lambda obj: frozenset(frozenset.__iter__(obj)),
    str: str.__str__,
    bytes: bytes.__bytes__,
    int: int.__index__,
    float: float.__float__,
}
MUTABLE_BASES: dict[type, Callable[[Any], Any]] = {dict: dict.copy, list: list.copy, set: set.copy}


_BUILTIN_BASES: dict[type, type | None] = {}
_MAX_CACHED_CLASSES = 4096


def builtin_base(cls: type) -> type | None:
    """The builtin container/atom a class derives from (None for plain ``object`` subclasses).

    Cached per class: a class's bases never change (``__bases__`` of a class with a builtin
    base cannot be reassigned to another layout).
    """
    try:
        return _BUILTIN_BASES[cls]
    except KeyError:
        pass
    found: type | None = None
    for base in cls.__mro__:
        if base in IMMUTABLE_BASES or base in MUTABLE_BASES:
            found = base
            break
        if not base.__flags__ & TPFLAGS_HEAPTYPE and base is not object:
            found = base  # some other C type: not supported
            break
    if len(_BUILTIN_BASES) >= _MAX_CACHED_CLASSES:
        _BUILTIN_BASES.clear()
    _BUILTIN_BASES[cls] = found
    return found


def _r_instance(enc: EncodeState, obj: Any) -> Any:
    cls = type(obj)
    state = obj.__getstate__()
    base = builtin_base(cls)
    if base is None:
        return (_OBJ, (cls, None), state, None, None, _STATE)
    if base in MUTABLE_BASES:
        return (_OBJ, (cls, None), (state, MUTABLE_BASES[base](obj)), None, None, _STATE)
    return (_OBJ, (cls, IMMUTABLE_BASES[base](obj)), state, None, None, _STATE)


# --- extensions -----------------------------------------------------------------------

_inert_cache: dict[type, bool] = {}
_PICKLE_TOUCHED = ("__call__", "__setstate__", "__setitem__", "append", "extend", "add")


def stack_inert(tp: type) -> bool:
    """Whether the pickle machine can do nothing with a ``tp`` instance but store it.

    True when the type has no ``__call__``, ``__setstate__``, item assignment,
    ``append``/``extend``/``add`` and no instance ``__dict__`` -- the only things
    REDUCE/BUILD/APPENDS/SETITEMS/ADDITEMS could use.
    """
    inert = _inert_cache.get(tp)
    if inert is None:
        touched = any(
            name in class_dict(base) for base in tp.__mro__ if base is not object for name in _PICKLE_TOUCHED
        )
        inert = _inert_cache[tp] = not touched and not getattr(tp, "__dictoffset__", 0)
    return inert


_inert_extensions: dict[str, bool] = {}


def extension_is_inert(ext: Extension) -> bool:
    inert = _inert_extensions.get(ext.name)
    if inert is None:
        inert = _inert_extensions[ext.name] = all(stack_inert(tp) for tp in ext.types)
    return inert


def reduce_extension(enc: EncodeState, ext: Extension, obj: Any) -> Any:
    try:
        args, state = ext.reduce(obj, enc)
    except Unresolvable as exc:
        fix = f"Its code {exc.reason}; agentrt can only resume code it can find again by module:qualname."
        raise Refused(obj, Refusal("AR111", type_name(type(obj)), fix)) from None
    if args is STORED_AS:  # a plain instance, as _r_instance writes one (memoised as ``obj``)
        return (_OBJ, (state[0], None), state[1], None, None, _STATE)
    if not extension_is_inert(ext):
        enc.flags |= FLAG_REFERENCING
    if type(state) is list:
        positions = _share_floats(enc, state, _alone_in(ext))
        if positions:
            return (_EXT, (ext.name, *args), (state, positions), None, None, _STATE)
    return (_EXT, (ext.name, *args), (state,), None, None, _STATE)


_alone_of: dict[str, int] = {}
#: ids of the float constants of every code object ``_codetable`` has named in a blob: it keeps
#: those codes alive for good, so an id here is one float that a code's constants hold
CONST_FLOAT_IDS: set[int] = set()


def _alone_in(ext: Extension) -> int:
    """The count ``_share_floats`` sees for a float of ``ext``'s state that nothing else in the process
    holds: the state list's reference, plus one if the object itself holds each item of its state
    (``Extension.state_items_held``: a frame holds its locals and stack values in its slots)."""
    alone = _alone_of.get(ext.name)
    if alone is None:
        held = getattr(ext, "state_items_held", False) is True
        alone = _alone_of[ext.name] = _HELD_BY_LIST_ONLY + held
    return alone


#: ``isdisjoint`` of this with the state's types finds a float by hash, with no ``==`` per value
_FLOAT_TYPE = frozenset((float,))


def _share_floats(enc: EncodeState, state: list[Any], alone: int) -> tuple[int, ...] | None:
    """Wrap each float of an extension's state that something else may hold in the encoder's one
    1-tuple for that float object.

    The C pickler writes floats without memoising them, so two locals bound to one float (in one
    frame, or a caller's and a callee's) would come back as two floats.  A tuple is memoised by C,
    at no Python cost: every occurrence of the float becomes the same tuple, and the positions of
    the wrapped floats travel beside the state, so the decoder unwraps them into one float
    (``_reconstruct._apply_extension``).  Returns those positions, or None if there are none.

    Only a float with a holder besides this list (and the object, see ``_alone_in``) can be bound
    to a second name, so only those are wrapped: the float's reference count shows that holder
    (``alone`` is the count of one without; ``_HELD_BY_LIST_ONLY`` measures it through this very
    function).  A holder the blob does not carry (a global, a list, a cell) makes a wrap unneeded,
    never wrong; the constants of a code object agentrt has named (``CONST_FLOAT_IDS``) are the
    one holder recognised as such.  An earlier wrap of a float holds it (its box), so a float
    wrapped once is wrapped at every later occurrence.

    Per checkpointed frame that holds floats, this is the one Python loop over its values, so it
    is written for speed (benchmarks/instructions.py): a C test for any float first (hashing the
    types: ``float in map(type, state)`` pays a failed ``==`` per value), one count per float.
    """
    if _FLOAT_TYPE.isdisjoint(map(type, state)):  # C speed: most frames hold no float
        return None
    positions = None
    i = -1
    for value in state:
        i += 1
        if type(value) is not float:
            continue
        held = getrefcount(value)
        if held <= alone or (held == alone + 1 and id(value) in CONST_FLOAT_IDS):
            continue  # nothing else holds it, or only a code object's constants do
        boxes = enc.shared_floats  # float id -> its box, for this blob (it keeps its float alive)
        if boxes is None:
            boxes = enc.shared_floats = {}
        state[i] = boxes.setdefault(id(value), (value,))
        if positions is None:
            positions = [i]
        else:
            positions.append(i)
    return tuple(positions) if positions is not None else None


class _Probe:
    shared_floats: dict[int, tuple[float]] | None = None


def _held_by_list_only() -> int:
    """The count ``_share_floats`` sees for a float only its state list holds: measured through the
    function itself (the interpreter's own temporary references are in it), never assumed."""
    for alone in range(64):
        if _share_floats(_Probe(), [float("0.5")], alone) is None:  # type: ignore[arg-type]  # a probe
            return alone
    raise RuntimeError("sys.getrefcount does not count references")  # pragma: no cover


_HELD_BY_LIST_ONLY = _held_by_list_only()


# --- dispatch -------------------------------------------------------------------------

REDUCERS: dict[type, Reducer] = {
    complex: _r_complex,
    range: _r_range,
    slice: _r_slice,
    re.Pattern: _r_pattern,
    type(Ellipsis): _r_const,
    type(NotImplemented): _r_const,
    enumerate: _r_enumerate,
    zip: _r_zip,
    map: _r_map,
    filter: _r_filter,
    types.FunctionType: _r_function,
    types.CellType: _r_cell,
    types.MethodType: _r_method,
    types.BuiltinFunctionType: _r_builtin,
    types.MethodWrapperType: _r_method_wrapper,
    types.MethodDescriptorType: _r_descriptor,
    types.WrapperDescriptorType: _r_descriptor,
    types.ClassMethodDescriptorType: _r_descriptor,
    types.ModuleType: _r_module,
    type: _r_class,
    functools.partial: _r_partial,
}
REDUCERS.update(dict.fromkeys(SEQ_ITER_KINDS, _r_seqiter))
REDUCERS.update(dict.fromkeys(DICT_ITER_KINDS, _r_dictiter))
REDUCERS[type(iter(set()))] = _r_setiter

#: Types in modules the codec does not import itself: (module, qualname) -> reducer.
_BY_NAME: dict[tuple[str, str], Reducer] = {
    ("datetime", "date"): _r_datetime_like("date"),
    ("datetime", "time"): _r_datetime_like("time"),
    ("datetime", "datetime"): _r_datetime_like("datetime"),
    ("datetime", "timedelta"): _r_timedelta,
    ("datetime", "timezone"): _r_timezone,
    ("decimal", "Decimal"): _r_decimal,
    ("uuid", "UUID"): _r_uuid,
    ("collections", "deque"): _r_deque,
    ("collections", "OrderedDict"): _r_odict,
    ("collections", "Counter"): _r_counter,
    ("collections", "defaultdict"): _r_defaultdict,
}


def _is_enum_member(obj: object) -> bool:
    enum = imported_module("enum")
    return enum is not None and isinstance(obj, module_dict(enum)["Enum"])


def reducer_for(tp: type, obj: Any) -> Reducer:
    """Work out (and remember) the reducer of a type met for the first time; raise Refused if none."""
    name_key = (getattr(tp, "__module__", None), getattr(tp, "__qualname__", None))
    reducer: Reducer | None = _BY_NAME.get(name_key)  # type: ignore[arg-type]  # None parts never match
    if reducer is not None and lookup_name(*name_key) is not tp:
        reducer = None
    if reducer is None:
        if isinstance(obj, type):
            reducer = _r_class
        elif _reopen.registration_for(tp) is not None:
            reducer = _r_reopen
        elif isinstance(obj, BaseException):
            reducer = _r_exception if _plain_exception(tp) else _r_pickled_exception
        elif _is_enum_member(obj):
            reducer = _r_enum
        elif is_serializable(tp):
            base = builtin_base(tp)
            if base is not None and base not in IMMUTABLE_BASES and base not in MUTABLE_BASES:
                fix = (
                    f"Class {tp.__qualname__} derives from the C type {type_name(base)}, which "
                    "@agentrt.serializable does not support; keep plain data instead."
                )
                raise Refused(obj, Refusal("AR111", type_name(tp), fix))
            reducer = _r_instance
    if reducer is None:
        refusal = classify(obj)
        if not refusal.generic:
            raise Refused(obj, refusal)
        reducer = _r_pickled
    REDUCERS[tp] = reducer
    return reducer


# --- signed blobs only: the pickle protocol, reopened clients ------------------------


def _r_pickled(enc: EncodeState, obj: Any) -> Any:
    """Any object with a working pickle reduction, in a signed blob (``_pickled``)."""
    if _reopen.registration_for(type(obj)) is not None:  # registered after its type was first met
        return _r_reopen(enc, obj)
    if not enc.signed:
        raise Refused(obj)  # classify: AR105 for an unmarked class, AR111 for the rest
    try:
        reduced = _pickled.reduce_pickled(enc, obj)
    except _pickled.PickleRefusal as refused:
        raise Refused(obj, refused.refusal) from None
    enc.flags |= FLAG_REFERENCING
    return reduced


def _plain_exception(cls: type) -> bool:
    """Whether ``_r_exception`` rebuilds ``cls``: no class below the builtin one has a compiled ``__new__``.

    pydantic-core's ``ValidationError`` is a compiled class with a ``__new__`` of its own, which
    ``BaseException.__new__`` cannot stand in for; such exceptions take the pickle protocol.  A
    ``__new__`` written in Python (a staticmethod in the class ``__dict__``) is never run by
    ``_r_exception`` and does not matter.
    """
    for base in cls.__mro__:
        if base.__module__ == "builtins":
            return True
        new = class_dict(base).get("__new__")
        if new is not None and not isinstance(new, staticmethod):
            return False
    return True


def _r_pickled_exception(enc: EncodeState, obj: Any) -> Any:
    if not enc.signed:
        fix = (
            f"Exceptions of {type_name(type(obj))} are built by their class's own __new__, which only a "
            "signed blob may call. Write the blob signed (the default), or keep str(exc) / its "
            "fields as plain data instead."
        )
        raise Refused(obj, Refusal("AR111", type_name(type(obj)), fix))
    return _r_pickled(enc, obj)


def _r_reopen(enc: EncodeState, obj: Any) -> Any:
    """A registered client (``agentrt.reopenable``): its saved configuration, reopened on restore."""
    registration = _reopen.registration_for(type(obj))
    name = type_name(type(obj))
    if registration is None:  # cannot happen: registrations are never removed
        raise Refused(obj)
    if not enc.signed:
        fix = (
            f"A {name} is reopened on restore (agentrt.reopenable), which only a signed blob may do. "
            "Write the blob signed (the default), or open the client inside a tool or after the await."
        )
        raise Refused(obj, Refusal("AR112", name, fix))
    try:
        state = _reopen.saved_state(registration, obj)
    except Exception as exc:
        fix = f"Saving it for reopening failed: {describe_error(exc)}. Fix its agentrt.reopenable save()."
        raise Refused(obj, Refusal("AR112", name, fix)) from None
    enc.flags |= FLAG_REFERENCING
    return (_REOPEN, (registration.name, state))


def reduce_value(enc: EncodeState, obj: Any) -> Any:
    """The reduce tuple for ``obj`` (NotImplemented for builtin atoms and containers).

    Records the reconstructors the tuple names in ``enc.reads``: those of ``_preset.TABLE``
    are in the pickler's memo from the start, so the pickler writes them without a call
    here, and the payload's preamble must define the ones the blob reads.  A reduce tuple
    names a reconstructor as its callable and, when it has one, as its state setter.
    """
    tp = type(obj)
    if tp in PASSTHROUGH:
        return NotImplemented
    ext = extension_for_type(tp)  # a dict's get: no Python call
    if ext is not None:
        reduced = reduce_extension(enc, ext, obj)
    else:
        reducer = REDUCERS.get(tp)
        if reducer is None:
            reducer = reducer_for(tp, obj)
        reduced = reducer(enc, obj)
        if reduced is NotImplemented:
            return reduced
    reads = enc.reads
    reads.add(reduced[0])
    if len(reduced) == 6:
        reads.add(reduced[5])
    return reduced
