"""Everything agentrt knows about CPython's frame internals, in one table.

These are facts observed on CPython 3.11, 3.12 and 3.13 (x86_64 and other 64-bit
builds), not promises: :func:`self_check` re-verifies them at import against a
live suspended coroutine and refuses to run if any of them is wrong, so a wrong
guess becomes a ``RuntimeError`` instead of a crash.  No other module may contain
a ``sys.version_info`` check or a struct offset.
"""

from __future__ import annotations

import ctypes
import dis
import gc
import operator
import sys
import types
from typing import Any  # Any: ctypes views of CPython's frame structs

import attrs

PY_MINOR = sys.version_info[1]
PY311 = PY_MINOR == 11
PY312_PLUS = PY_MINOR >= 12
PY313_PLUS = PY_MINOR >= 13

SUPPORTED_MINORS = (11, 12, 13)
_POINTER = ctypes.sizeof(ctypes.c_void_p)


@attrs.frozen
class FrameLayout:
    """Byte offsets inside a generator-like object and its embedded ``_PyInterpreterFrame``."""

    iframe_in_gen: int  # where the frame lives inside the coroutine object
    code_in_iframe: int  # f_code / f_executable
    stacktop_in_iframe: int  # int stacktop (count of live localsplus slots)
    localsplus_in_iframe: int  # first localsplus slot
    frame_state_in_gen: int  # int8 gi_frame_state
    exc_value_in_gen: int  # gi_exc_state.exc_value (PyObject*)
    lasti_at_resume: bool  # frame.f_lasti names the RESUME after YIELD_VALUE (3.13)


_LAYOUTS = {
    11: FrameLayout(80, 32, 64, 72, 75, 48, False),
    12: FrameLayout(72, 0, 64, 72, 67, 40, False),
    13: FrameLayout(72, 0, 64, 72, 67, 40, True),
}

# Opcodes we rely on, derived from ``dis.opmap`` by name, never by number.
OP = dis.opmap
SEND = OP["SEND"]
YIELD_VALUE = OP["YIELD_VALUE"]
RESUME = OP["RESUME"]
EXTENDED_ARG = OP["EXTENDED_ARG"]
CACHE = OP.get("CACHE", -1)
LOAD_CONST = OP["LOAD_CONST"]
# 3.12+ wraps async-generator yields with CALL_INTRINSIC_1 INTRINSIC_ASYNC_GEN_WRAP (4).
ASYNC_GEN_WRAP = OP.get("ASYNC_GEN_WRAP")
CALL_INTRINSIC_1 = OP.get("CALL_INTRINSIC_1")
INTRINSIC_ASYNC_GEN_WRAP = 4
# gi_frame_state values.  3.13 split SUSPENDED into SUSPENDED (-2, a plain yield) and
# SUSPENDED_YIELD_FROM (-1, an await / yield from) and moved CREATED to -3.
FRAME_CREATED = -3 if PY313_PLUS else -2
FRAME_SUSPENDED_STATES = (-1, -2) if PY313_PLUS else (-1,)
FRAME_EXECUTING = 0
# 3.12 made LOAD_FAST unchecked (the compiler proves the local bound; a NULL crashes) and
# added LOAD_FAST_CHECK for the rest.  On 3.11 every LOAD_FAST raises UnboundLocalError.
UNCHECKED_LOADS = (
    frozenset({"LOAD_FAST", "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST"}) if PY312_PLUS else frozenset()
)
FRAME_COMPLETED = 1
#: the states in which :func:`mark_completed` marks an object (CREATED or SUSPENDED)
PAUSED_STATES = frozenset({FRAME_CREATED, *FRAME_SUSPENDED_STATES})
# 3.13's ``bytecode`` accepts a cell or free variable as the argument of a local-slot op
# (LOAD_FAST, STORE_FAST, LOAD_FAST_AND_CLEAR); 3.12's takes only a local's name.
LOCAL_OPS_TAKE_CELLS = PY313_PLUS

_FRAME_ATTR = {
    types.CoroutineType: operator.attrgetter("cr_frame"),
    types.GeneratorType: operator.attrgetter("gi_frame"),
    types.AsyncGeneratorType: operator.attrgetter("ag_frame"),
}
_CODE_ATTR = {
    types.CoroutineType: operator.attrgetter("cr_code"),
    types.GeneratorType: operator.attrgetter("gi_code"),
    types.AsyncGeneratorType: operator.attrgetter("ag_code"),
}


def _unsupported(reason: str, version: str | None = None, implementation: str | None = None) -> RuntimeError:
    version = version or ".".join(map(str, sys.version_info[:3]))
    implementation = implementation or sys.implementation.name
    return RuntimeError(
        f"agentrt does not support this interpreter ({implementation} {version}): {reason}. "
        "Supported: CPython 3.11, 3.12 and 3.13 on 64-bit builds with the GIL."
    )


def pick_layout(
    minor: int = PY_MINOR,
    implementation: str = sys.implementation.name,
    pointer_size: int = _POINTER,
    gil_enabled: bool = getattr(sys, "_is_gil_enabled", lambda: True)(),
) -> FrameLayout:
    """The verified layout for this interpreter, or a RuntimeError saying why there is none."""
    version = f"3.{minor}"
    if implementation != "cpython":
        raise _unsupported("it reads CPython frame internals", version, implementation)
    if pointer_size != 8:
        raise _unsupported("only 64-bit builds have been verified", version, implementation)
    if minor not in _LAYOUTS:
        raise _unsupported("no verified frame layout for this version", version, implementation)
    if not gil_enabled:
        raise _unsupported("free-threaded builds have a different frame layout", version, implementation)
    return _LAYOUTS[minor]


LAYOUT = pick_layout()
_IFRAME_IN_GEN = LAYOUT.iframe_in_gen
_STACKTOP_IN_IFRAME = LAYOUT.stacktop_in_iframe
_LOCALSPLUS_IN_IFRAME = LAYOUT.localsplus_in_iframe
_EXC_VALUE_IN_GEN = LAYOUT.exc_value_in_gen


def localsplus_names(code: types.CodeType) -> tuple[str, ...]:
    """Names of ``localsplus`` slots in order: locals, cells that are not arguments, free vars.

    A cell variable that is also a local (an argument captured by a closure) shares
    the local's slot, so it is not repeated.
    """
    varnames = code.co_varnames
    extra_cells = tuple(name for name in code.co_cellvars if name not in varnames)
    return varnames + extra_cells + code.co_freevars


def _iframe_address(gen: object) -> int:
    return id(gen) + LAYOUT.iframe_in_gen


def frame_state(gen: object) -> int:
    """``gi_frame_state`` of a generator-like object."""
    return ctypes.c_int8.from_address(id(gen) + LAYOUT.frame_state_in_gen).value


def state_word(gen: object) -> ctypes.c_int8:
    """``gi_frame_state`` of a generator-like object as a ctypes view: read it, and write it with
    :data:`FRAME_COMPLETED` where :func:`mark_completed` would (only while it is in
    :data:`PAUSED_STATES`).  The view does not keep ``gen`` alive."""
    return ctypes.c_int8.from_address(id(gen) + LAYOUT.frame_state_in_gen)


# (frame, suspended, running) of a generator-like object, read by C getters: a suspended or
# running object costs no ctypes object then.  Neither (CREATED, or on 3.11 a COMPLETED object,
# whose frame getter does not say None yet) is read from the state word.  ``ag_suspended`` is
# 3.12+; a 3.11 async generator reads the state word.  self_check() verifies that both agree.
_STATE_ATTRS: dict[type, Any] = {
    types.CoroutineType: operator.attrgetter("cr_frame", "cr_suspended", "cr_running"),
    types.GeneratorType: operator.attrgetter("gi_frame", "gi_suspended", "gi_running"),
}
if PY312_PLUS:
    _STATE_ATTRS[types.AsyncGeneratorType] = operator.attrgetter("ag_frame", "ag_suspended", "ag_running")
#: (frame, code, suspended) in one C call, for capture (same getters, same self_check)
GEN_PARTS: dict[type, Any] = {
    types.CoroutineType: operator.attrgetter("cr_frame", "cr_code", "cr_suspended"),
    types.GeneratorType: operator.attrgetter("gi_frame", "gi_code", "gi_suspended"),
}
if PY312_PLUS:
    GEN_PARTS[types.AsyncGeneratorType] = operator.attrgetter("ag_frame", "ag_code", "ag_suspended")


def lifecycle(gen: object) -> str:
    """ "CREATED", "SUSPENDED", "RUNNING" or "CLOSED" for any generator-like object."""
    getter = _STATE_ATTRS.get(type(gen))
    if getter is None:
        return lifecycle_of_frame(gen, frame_of(gen))
    frame, suspended, running = getter(gen)
    if frame is None:  # finished (the state word says COMPLETED or CLEARED)
        return "CLOSED"
    if suspended:
        return "SUSPENDED"
    if running:
        return "RUNNING"
    return lifecycle_of_frame(gen, frame)  # CREATED, or COMPLETED (3.11): the state word says which


def frame_of(gen: object) -> types.FrameType | None:
    """The frame object of a coroutine / generator / async generator (None once finished)."""
    return _FRAME_ATTR[type(gen)](gen)  # type: ignore[no-any-return]  # the getters are typed Callable[[Any], Any]


def lifecycle_of_frame(gen: object, frame: types.FrameType | None) -> str:
    """:func:`lifecycle` read from the state word (every type; ``self_check`` compares the two)."""
    if frame is None:
        return "CLOSED"
    state = frame_state(gen)
    if state == FRAME_CREATED:
        return "CREATED"
    if state in FRAME_SUSPENDED_STATES:
        return "SUSPENDED"
    if state < FRAME_EXECUTING:
        raise RuntimeError(f"unknown frame state {state} of {gen!r}")
    return "RUNNING" if state == FRAME_EXECUTING else "CLOSED"


_VOID_P = ctypes.c_void_p
_OBJECT = ctypes.py_object
_INT = ctypes.c_int


_ARRAY_TYPES: dict[tuple[type, int], Any] = {}
_OBJECT_ARRAYS: list[Any] = []  # n -> py_object * n, for the hot path of read_slots_flagged
_POINTER_ARRAYS: list[Any] = []  # n -> c_void_p * n, beside it (filled by read_picked)


def _array_type(item: type, length: int) -> Any:
    """``item * length``, kept alive here: ctypes caches array types only weakly, so a
    temporary one is rebuilt (a whole new type object) on every read otherwise."""
    array = _ARRAY_TYPES.get((item, length))
    if array is None:
        array = _ARRAY_TYPES[(item, length)] = item * length  # type: ignore[operator]  # ctypes types multiply into array types
    return array


def slot_limit(code: types.CodeType) -> int:
    """The most ``localsplus`` slots a frame of ``code`` can have in use (``len(localsplus_names)``
    plus the stack, counted without building the names when there are no cell variables)."""
    if code.co_cellvars:
        return len(localsplus_names(code)) + code.co_stacksize
    return code.co_nlocals + len(code.co_freevars) + code.co_stacksize


def read_slots(gen: object, limit: int) -> list[object]:
    return read_slots_flagged(gen, limit)[0]


def read_slots_flagged(gen: object, limit: int) -> tuple[list[object], bool]:
    """``localsplus[0:stacktop]`` of a *suspended* frame, with NULL slots as :data:`NULL`.

    Callers must have checked :func:`lifecycle`: a running frame's stacktop is -1
    and slots above it hold garbage.  Two array views over the same memory: raw
    pointers to find NULLs, then Python objects for everything else (ctypes takes
    a new reference for each).
    """
    base = id(gen) + _IFRAME_IN_GEN
    stacktop = _INT.from_address(base + _STACKTOP_IN_IFRAME).value
    if not 0 <= stacktop <= limit:
        raise RuntimeError(f"frame of {gen!r} reports stacktop {stacktop} (limit {limit}): not suspended")
    address = base + _LOCALSPLUS_IN_IFRAME
    if stacktop >= len(_OBJECT_ARRAYS):
        for n in range(len(_OBJECT_ARRAYS), stacktop + 1):
            _OBJECT_ARRAYS.append(_array_type(_OBJECT, n))
            _POINTER_ARRAYS.append(_array_type(_VOID_P, n))
    objects: Any = _OBJECT_ARRAYS[stacktop].from_address(address)
    try:
        return objects[:], False  # common case: no NULL slot (ctypes refuses to convert NULL)
    except ValueError:
        pointers = _array_type(_VOID_P, stacktop).from_address(address)[:]
        return [objects[i] if pointer else NULL for i, pointer in enumerate(pointers)], True


def read_picked(gen: object, top: int, pick: Any, also: tuple[int, ...]) -> Any:
    """``(pick(localsplus), [the non-NULL slots among also])`` of a *suspended* frame whose stack top
    is ``top``; None when the stack top is not ``top`` or a slot ``pick`` picks is NULL (the caller
    then reads every slot).  ``pick`` is an ``itemgetter`` of slot indices below ``top``: those
    slots are read in one C call; ``also`` may name NULL slots.

    Reads only what a checkpoint keeps, so a NULL slot it does not need (an unbound or dead local,
    which every restored frame has) costs nothing, where :func:`read_slots_flagged` must find it.
    """
    base = id(gen) + _IFRAME_IN_GEN
    if _INT.from_address(base + _STACKTOP_IN_IFRAME).value != top:
        return None
    if top >= len(_OBJECT_ARRAYS):
        for n in range(len(_OBJECT_ARRAYS), top + 1):
            _OBJECT_ARRAYS.append(_array_type(_OBJECT, n))
            _POINTER_ARRAYS.append(_array_type(_VOID_P, n))
    address = base + _LOCALSPLUS_IN_IFRAME
    objects = _OBJECT_ARRAYS[top].from_address(address)
    try:
        picked = pick(objects)
    except ValueError:  # ctypes refuses to convert a NULL slot
        return None
    if not also:
        return picked, ()
    pointers = _POINTER_ARRAYS[top].from_address(address)
    return picked, [objects[i] for i in also if pointers[i]]


def held_objects(gen: object) -> list[object]:
    """Every object a suspended or unstarted generator-like object references: its locals and
    value stack (NULL slots left out), and its code, function, names and exception.

    ``gc.get_referents`` runs the object's own traverse function, in C: what :func:`abandon
    <agentrt._frames.abandon>` needs to find the generators a frame holds, at a fraction of the
    cost of :func:`read_slots` (which keeps the slots' positions, for capture).
    ``self_check`` verifies that every slot is among them.
    """
    return gc.get_referents(gen)


def exception_being_handled(gen: object) -> BaseException | None:
    """``gi_exc_state.exc_value``: the exception an ``except`` block is handling, if any."""
    pointer = _VOID_P.from_address(id(gen) + _EXC_VALUE_IN_GEN).value
    if not pointer:
        return None
    value = ctypes.cast(pointer, ctypes.py_object).value
    return value if isinstance(value, BaseException) else None


def mark_completed(gen: object) -> bool:
    """Let a suspended or unstarted object be freed without running its frame again.

    CPython closes a suspended coroutine when it is garbage collected, which runs
    its ``finally`` blocks and ``__exit__`` methods.  A checkpointed run that a
    process merely stops holding must not do that: the run goes on elsewhere.  A
    frame marked COMPLETED is finalized without executing anything; deallocation
    then releases its locals and stack as usual.  Only frames we have verified to
    be suspended or created are touched.
    """
    if lifecycle(gen) not in ("SUSPENDED", "CREATED"):
        return False
    ctypes.c_int8.from_address(id(gen) + LAYOUT.frame_state_in_gen).value = FRAME_COMPLETED
    return True


#: what to take off ``frame.f_lasti`` for the YIELD_VALUE a suspended frame sits at: on 3.13 it
#: names the RESUME after it (YIELD_VALUE has no cache entries; RESUME follows it directly)
LASTI_ADJUST = 2 if LAYOUT.lasti_at_resume else 0


def lasti_bytes(gen: object, frame: types.FrameType | None = None) -> int:
    """Byte offset of the YIELD_VALUE a suspended frame sits at (normalised across versions)."""
    return (frame or gen_frame(gen)).f_lasti - LASTI_ADJUST


def gen_frame(gen: object) -> types.FrameType:
    frame = frame_of(gen)
    if frame is None:
        raise RuntimeError(f"{gen!r} has no frame (it has finished)")
    return frame


def gen_code(gen: object) -> types.CodeType:
    return _CODE_ATTR[type(gen)](gen)  # type: ignore[no-any-return]  # the getters are typed Callable[[Any], Any]


class _Null:
    """A NULL slot of the value stack or an unbound local."""

    _instance: _Null | None = None

    def __new__(cls) -> _Null:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NULL"

    def __reduce__(self) -> str:
        return "NULL"


NULL = _Null()


def self_check() -> None:
    """Verify the layout against a live suspended coroutine; raise RuntimeError if anything is off."""

    class _Probe:
        def __await__(self):  # type: ignore[no-untyped-def]  # a probe awaitable; only its shape matters
            yield "probe"

    sentinel = object()

    async def probe(a: object) -> object:
        b = [a]
        try:
            raise KeyError("probe")
        except KeyError:
            await _Probe()
        return b

    def both(gen: object) -> str:
        """The lifecycle read by the C getters, which must agree with the state word."""
        state = lifecycle(gen)
        if state != lifecycle_of_frame(gen, frame_of(gen)):
            raise _unsupported(
                f"the frame state word {frame_state(gen)} disagrees with the getters ({state})"
            )
        return state

    def gen_probe() -> Any:
        yield

    generator: Any = gen_probe()
    if both(generator) != "CREATED" or (next(generator), both(generator))[1] != "SUSPENDED":
        raise _unsupported("a generator's lifecycle is not where expected")
    generator.close()
    if both(generator) != "CLOSED":
        raise _unsupported("a closed generator's lifecycle is not where expected")
    abandoned: Any = gen_probe()
    next(abandoned)
    mark_completed(abandoned)  # what abandon() leaves: on 3.11 its frame getter still gives a frame
    if both(abandoned) != "CLOSED":
        raise _unsupported("a generator marked completed is not closed")
    coro: Any = probe(sentinel)
    try:
        code = coro.cr_code
        if both(coro) != "CREATED":
            raise _unsupported(f"a new coroutine's frame state reads {frame_state(coro)}")
        expected_basic = LAYOUT.iframe_in_gen + LAYOUT.localsplus_in_iframe
        if type(coro).__basicsize__ != expected_basic:
            raise _unsupported(f"coroutine basicsize {type(coro).__basicsize__} != {expected_basic}")
        if coro.send(None) != "probe":
            raise _unsupported("probe coroutine did not suspend")
        code_pointer = ctypes.c_void_p.from_address(_iframe_address(coro) + LAYOUT.code_in_iframe).value
        if code_pointer != id(code):
            raise _unsupported("frame code pointer does not match cr_code")
        if both(coro) != "SUSPENDED":
            raise _unsupported(f"suspended frame state reads {frame_state(coro)}")
        slots = read_slots(coro, slot_limit(code))
        if slots[0] is not sentinel or not (isinstance(slots[1], list) and slots[1][0] is sentinel):
            raise _unsupported("locals are not where expected")
        held = {id(value) for value in held_objects(coro)}
        if not all(id(value) in held for value in slots if value is not NULL):
            raise _unsupported("the traverse function of a coroutine does not visit its locals and stack")
        if slots[-1] is not coro.cr_await:
            raise _unsupported("the awaited object is not on top of the value stack")
        exc = exception_being_handled(coro)
        if not isinstance(exc, KeyError):
            raise _unsupported("the exception being handled is not where expected")
        lasti = lasti_bytes(coro)
        if code.co_code[lasti] != YIELD_VALUE:
            raise _unsupported("f_lasti does not point at the YIELD_VALUE of the await")
    finally:
        coro.close()


self_check()
