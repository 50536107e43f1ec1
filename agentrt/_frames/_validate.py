"""What a restored frame's value stack may hold, from the bytecode, not from the blob.

A frame record names a suspension site and lists the value-stack entries, with a
mask of the NULL ones.  The interpreter trusts its stack completely: an int where
a ``for`` loop keeps its iterator, or a NULL moved to another slot of a half-built
call, crashes the process at the next step, and whatever sits in the awaited slot
is sent into when the chain is primed.  So before a restored frame is built:

* **NULL positions** come from the analysis: a slot may be NULL only if the
  instruction that pushed it can push NULL (``PUSH_NULL`` must; the NULL half of
  ``LOAD_GLOBAL`` / ``LOAD_ATTR`` / ``LOAD_METHOD`` / ``LOAD_SUPER_ATTR`` and
  ``LOAD_FAST_AND_CLEAR`` may); every other slot must hold a value
  (:func:`slot_checks`, once per frame shape, cached with the plan);

and before the restored chain is primed (:func:`check_values`, per restore):

* the **awaited** slot holds a stored trap (``suspend()``, see :mod:`._trap`) or an object this load restored
  (a coroutine, generator or async generator step of the chain) -- never an
  arbitrary object the priming ``send`` would run;
* a **for** loop's iterator is an iterator of an allowed kind: the builtin
  iterators over builtin containers, ranges and dicts, ``enumerate`` / ``zip`` /
  ``reversed`` over allowed iterators, restored generators, ``@serializable``
  iterators; ``map`` / ``filter`` (which call a function on the next step) only in
  a signed blob;
* a **with** block's exit is the bound ``__exit__`` / ``__aexit__`` of its object,
  looked up on the object's class.

When the analysis cannot name a slot (it gives up on unusual control flow), the
slot is left unchecked: see "Residual risks" in docs/blob-format.md.
"""

from __future__ import annotations

import gc
import types
from typing import Any  # Any: restored frame state holds any Python object

from agentrt._codec import class_dict, is_serializable
from agentrt._frames import _stack  # imported with the engine: on a first restore it cost 2-3 ms
from agentrt._frames._agen import ANEXT_TYPE, ASEND_TYPE, _agen_of
from agentrt._frames._capture import Kind
from agentrt._frames._records import AnextRecord, FrameRecord, StepRecord, record_owner
from agentrt._frames._trap import STORED_TYPES
from agentrt.exceptions import CorruptBlob

__all__ = ["check_values", "slot_checks"]

_MAY_PUSH_NULL = frozenset({"LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"})
_MAX_NESTED_ITERATORS = 64


def _corrupt(code: Any, what: str) -> CorruptBlob:
    return CorruptBlob(f"malformed frame record of {code.co_qualname}: {what}")


def slot_checks(
    code: Any, yield_offset: int, null_mask: tuple[bool, ...], awaiting: bool, first_stack_index: int
) -> tuple[tuple[int, str], ...]:
    """Check ``null_mask`` against the bytecode; return (state index, role) of the slots to check later.

    ``first_stack_index`` is where the stack's non-NULL values start in the frame state list.
    """
    info = _stack._code(code)
    yield_index = info.index_of.get(yield_offset)
    producers = _stack._producers(info, yield_index) if yield_index is not None else None
    depth = len(null_mask)
    if producers is not None and len(producers) == depth + 1:
        for position, is_null in enumerate(null_mask):
            allowed = _null_allowed(info, producers[position], _stack._CALLABLE_FIRST)
            if is_null and allowed is False:
                raise _corrupt(
                    code, f"value-stack slot {position} is NULL, but the code pushes a value there"
                )
            if not is_null and allowed == "must":
                raise _corrupt(code, f"value-stack slot {position} holds a value where the code pushes NULL")
    roles = _stack.describe_slots(code, yield_offset, depth, null_mask, awaiting, [None] * depth)
    checks = []
    index = first_stack_index
    for position, is_null in enumerate(null_mask):
        if is_null:
            continue
        role = roles[position].role if position < len(roles) else "value"
        if position == depth - 1 and awaiting:
            role = "awaited"
        if role in ("awaited", "for_iterator", "with_exit", "async_with_exit"):
            checks.append((index, role))
        index += 1
    return tuple(checks)


def _null_allowed(info: Any, origin: tuple[str, int, int], callable_first: bool) -> bool | str:
    """False: never NULL; True: may be NULL; "must": always NULL."""
    kind, index, push = origin
    if kind != "instr":
        return False
    instr = info.instructions[index]
    name = instr.opname
    if name == "PUSH_NULL":
        return "must"
    if name == "LOAD_FAST_AND_CLEAR":
        return True
    if name in _MAY_PUSH_NULL:
        # the NULL-or-self half of a call-forming load: first on 3.11/3.12, second on 3.13
        return push == (1 if callable_first else 0)
    return False


def check_values(
    code: Any, checks: tuple[tuple[int, str], ...], state: list[Any], restored: set[int], signed: bool
) -> None:
    """Check the values of the slots :func:`slot_checks` picked (``restored``: ids this load built)."""
    for index, role in checks:
        value = state[index]
        if role == "awaited":
            # a stored trap becomes a fresh trap generator before priming (_trap, _LoadSession._prime)
            if type(value) not in STORED_TYPES and id(_owner(value)) not in restored:
                raise _corrupt(
                    code,
                    f"the awaited object is a {type(value).__name__}, not a suspend() or a restored "
                    "member of the chain",
                )
        elif role == "for_iterator":
            if not _allowed_iterator(value, restored, signed, 0):
                raise _corrupt(code, f"the 'for' loop's iterator is a {type(value).__name__}")
        elif not _is_bound_exit(value, "__exit__" if role == "with_exit" else "__aexit__"):
            raise _corrupt(
                code, f"the 'with' block's exit is a {type(value).__name__}, not a bound exit method"
            )


def _owner(value: Any) -> Any:
    """An async generator step stands for its generator, and ``anext(..., default)`` for what it wraps."""
    if type(value) in (StepRecord, AnextRecord):  # the same, decoded for a dump
        return record_owner(value)
    if type(value) is ANEXT_TYPE:
        referents = gc.get_referents(value)  # (the wrapped awaitable, the default)
        if len(referents) != 2:
            return None
        value = referents[0]
    if type(value) is ASEND_TYPE:
        try:
            return _agen_of(value)
        except CorruptBlob:
            return None
    return value


_ITERATOR_SAMPLES: tuple[object, ...] = (
    iter([]),
    reversed([]),
    iter(()),
    iter(""),
    iter("\u0100"),
    iter(b""),
    iter(bytearray()),
    iter(range(0)),
    iter(range(2**64)),
    iter({}),
    iter({}.values()),
    iter({}.items()),
    reversed({}),
    reversed({}.values()),
    reversed({}.items()),
    iter(set()),
)
_BUILTIN_ITERATORS: frozenset[type] = frozenset(type(sample) for sample in _ITERATOR_SAMPLES)
_FRAME_TYPES = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


def _allowed_iterator(value: Any, restored: set[int], signed: bool, depth: int) -> bool:
    tp = type(value)
    if tp in _BUILTIN_ITERATORS:
        return True
    if tp is types.GeneratorType:
        return True  # a generator in a blob is one the codec restored (or a finished one)
    if tp is FrameRecord:
        return value.kind is Kind.GENERATOR  # the same, decoded for a dump
    if depth >= _MAX_NESTED_ITERATORS:
        return False
    if tp in (enumerate, zip, reversed):
        reduced: Any = value.__reduce__()  # C code of the builtin type: the arguments it was built from
        args = reduced[1] if type(reduced) is tuple and len(reduced) > 1 else ()
        inner = args[:1] if tp is enumerate else args if tp is zip else ()
        return all(_allowed_iterator(it, restored, signed, depth + 1) for it in inner)
    if tp in (map, filter):
        return signed
    return is_serializable(tp) and any("__next__" in class_dict(base) for base in tp.__mro__)


def _is_bound_exit(value: Any, name: str) -> bool:
    owner = getattr(value, "__self__", None) if type(value) in _BOUND_TYPES else None
    if owner is None or getattr(value, "__name__", None) != name:
        return False
    descriptor = next(
        (class_dict(base)[name] for base in type(owner).__mro__ if name in class_dict(base)), None
    )
    if descriptor is None:
        return False
    if type(value) is types.MethodType:
        return value.__func__ is descriptor
    return True  # a C method bound by name to its own object (the codec's "bmethod")


_BOUND_TYPES = (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)
