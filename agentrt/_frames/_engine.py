"""The frame engine: how the unsafe core plugs into the codec, captures, restores and primes.

It plugs into the codec as two extensions.  ``frame`` handles coroutines,
generators and async generators: on encode it captures the suspended frame
(:mod:`._capture`); on decode it synthesizes resume code (:mod:`._resume`) and
calls it, producing an unstarted object whose state list is filled once the
whole graph is decoded.  ``asend`` handles the awaitable of an in-progress
``async for`` step.  After a load, every restored chain is *primed*: its
outermost object is sent ``None`` once, which runs only the synthesized prologues
down the chain and suspends again exactly where the original was -- the
innermost ``suspend`` re-yields its payload, which becomes ``Machine.pending``.

A load made to *describe* (``agentrt dump``) validates every record the same way
but builds no resume code and no frame, and primes nothing: frames come back as
:class:`._records.FrameRecord` data (see :mod:`._records`).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import sys
import types
import weakref
from collections.abc import Iterator
from typing import Any  # Any: frames hold any Python object

import attrs

from agentrt._codec import (
    STORED_AS,
    DecodeContext,
    EncodeContext,
    Location,
    describe_error,
    register_extension,
)
from agentrt._frames import _diskcache, _plans, _validate
from agentrt._frames import _layout as L
from agentrt._frames._agen import ANEXT_TYPE, ASEND_TYPE, _agen_of
from agentrt._frames._capture import (
    FINISHED,
    KIND_OF_TYPE,
    FrameState,
    Kind,
    capture,
    frame_children,
)
from agentrt._frames._errors import unsupported
from agentrt._frames._liveness import SiteKind
from agentrt._frames._plans import Plan as _Plan
from agentrt._frames._plans import check as _check
from agentrt._frames._plans import check_cells as _check_cells
from agentrt._frames._plans import plan as _plan
from agentrt._frames._plans import plan_fields as _plan_fields
from agentrt._frames._plans import record_parts as _record_parts
from agentrt._frames._plans import shape_bytes as _shape_bytes
from agentrt._frames._records import AnextRecord, FrameRecord, StepRecord, record_owner
from agentrt._frames._resume import forget as forget_resume_code
from agentrt._frames._resume import new_frame_object
from agentrt._frames._shape import FINISHED_SHAPE_INDEX, record_fields, unpack_shape
from agentrt._frames._trap import STORED_TYPES, fresh_trap, is_trap, stored_trap, trap_payload
from agentrt.exceptions import (
    CorruptBlob,
    IncompatibleBlob,
    InternalInconsistency,
    UnsupportedSuspension,
)

__all__ = ["AnextObjects", "AsendObjects", "FrameObjects", "abandon", "install", "restored_pending"]

#: what a primed chain yielded, by id, while the load that primed it is open (plain dict: the hot
#: path of Machine.set); an open load's entries move to the weak ``_PRIMED`` when it ends
_LIVE_PRIMED: dict[int, tuple[Any, Any]] = {}
_PRIMED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


class _GiveAwaitable:
    """An async iterator whose ``__anext__`` hands back one given awaitable: the only way to build
    an ``anext_awaitable`` (which has no constructor) around a restored awaitable."""

    __slots__ = ("awaitable",)

    def __init__(self, awaitable: Any) -> None:
        self.awaitable = awaitable

    def __aiter__(self) -> _GiveAwaitable:
        return self

    def __anext__(self) -> Any:
        return self.awaitable


def _anext_parts(awaitable: Any) -> tuple[Any, Any]:
    """(wrapped awaitable, default) of an ``anext_awaitable``: its two references, in that order."""
    referents = gc.get_referents(awaitable)
    if len(referents) != 2:
        raise unsupported(
            f"an anext(..., default) awaitable holds {len(referents)} references, not 2: "
            "this Python's anext() is not the one agentrt knows how to checkpoint"
        )
    return referents[0], referents[1]


def _delegate_of(awaitable: Any) -> Any:
    """The generator-like object an awaited object runs (itself if it is one)."""
    if type(awaitable) in (StepRecord, AnextRecord):
        return record_owner(awaitable)
    if type(awaitable) is ANEXT_TYPE:
        awaitable = _anext_parts(awaitable)[0]
    if type(awaitable) is ASEND_TYPE:
        awaitable = _agen_of(awaitable)
    return awaitable


@attrs.define
class _Restored:
    obj: Any
    plan: _Plan
    state: list[Any]


class _LoadSession:
    """Frame objects restored by one decode, primed together once the graph is complete."""

    __slots__ = (
        "built",
        "defer_writes",
        "describe",
        "disk_writes",
        "new_keys",
        "new_plans",
        "primed",
        "restored",
        "shapes",
        "signed",
    )

    def __init__(self, signed: bool, describe: bool, defer_writes: bool) -> None:
        self.restored: dict[int, _Restored] = {}
        self.built: list[Any] = []  # every object this load made, primed or not
        self.signed = signed  # the blob was signed with a key of this process
        self.describe = describe  # decoded for a dump: records, no resume code, no frame, no priming
        self.new_plans = 0  # frame shapes this load validated for the first time
        self.shapes: dict[tuple[Any, ...], Any] = {}  # a dump's validated shapes (no resume code)
        self.new_keys: list[tuple[Any, Any]] = []  # (key, plan) this load added to _plans.PLANS
        # resume code held back until the load is accepted: begun at this load's first new shape
        self.defer_writes = defer_writes
        self.disk_writes: list[Any] | None = None
        self.primed: list[int] = []  # ids this load put in _LIVE_PRIMED

    def new_shape(self) -> None:
        """Count a frame shape met for the first time, and hold back the resume code it may write."""
        self.new_plans += 1
        _check(
            self.new_plans <= _plans.MAX_NEW_PLANS_PER_LOAD,
            f"more than {_plans.MAX_NEW_PLANS_PER_LOAD} distinct frame shapes in one blob",
        )
        if self.defer_writes and self.disk_writes is None:
            self.disk_writes = _diskcache.begin_deferred()

    def _end_primed(self, keep: bool) -> None:
        primed, self.primed = self.primed, []
        for key in primed:
            entry = _LIVE_PRIMED.pop(key, None)
            if entry is not None and keep:
                _PRIMED[entry[0]] = entry[1]

    def accept(self) -> None:
        """The caller kept the result: resume code synthesized for it may now go to the disk cache."""
        if self.disk_writes is not None:
            _diskcache.end_deferred(self.disk_writes, write=True)
            self.disk_writes = None
        if self.primed:
            self._end_primed(keep=True)

    def abandon_all(self) -> None:
        """The load was refused: drop every frame it built without running ``finally`` / ``__exit__``."""
        if self.disk_writes is not None:
            _diskcache.end_deferred(self.disk_writes, write=False)
            self.disk_writes = None
        if self.primed:
            self._end_primed(keep=False)
        new_keys, self.new_keys = self.new_keys, []
        for key, plan in new_keys:  # a refused blob leaves no shape of its own in memory either
            if _plans.PLANS.get(key) is plan:
                del _plans.PLANS[key]
            if plan.resumed is not None:
                forget_resume_code(plan.resumed)
        built, self.built = self.built, []
        self.restored = {}
        for obj in built:
            with contextlib.suppress(Exception):
                abandon(obj)

    def prime(self) -> None:
        entries = list(self.restored.values())
        try:
            delegated, on_traps = self._check(entries)
            if self.describe:
                for entry in entries:
                    entry.obj.state = _record_state(entry)
            else:
                self._prime(entries, delegated, on_traps)
        except BaseException:
            if not self.describe:
                for entry in entries:
                    L.mark_completed(entry.obj)
            raise
        finally:
            self.restored = {}

    def _check(self, entries: list[_Restored]) -> tuple[set[int], list[_Restored]]:
        """Check the complete graph before anything runs; return the ids of awaited restored objects
        and the frames that await a stored ``suspend()`` trap.  (One pass: an entry's awaited object
        is looked at only after that entry's own value checks passed.)"""
        built: set[int] | None = None
        delegated: set[int] = set()
        on_traps: list[_Restored] = []
        for entry in entries:
            plan = entry.plan
            if len(entry.state) != plan.expected_len:
                raise CorruptBlob(f"frame state of {_describe(entry)} was never filled in")
            if plan.checks:
                if built is None:
                    built = {id(obj) for obj in self.built}
                _validate.check_values(plan.code, plan.checks, entry.state, built, self.signed)
            if plan.awaits:  # its awaited slot passed the checks above (a stored trap or a restored frame)
                awaited = entry.state[-1]
                if type(awaited) in STORED_TYPES:
                    on_traps.append(entry)
                else:
                    delegated.add(id(_delegate_of(awaited)))
        for entry in entries:
            if id(entry.obj) in delegated and entry.plan.site is None:
                # Priming sends into the awaited object: an unstarted one would run its body from
                # the top.  A real chain never awaits an unstarted frame (the await starts it).
                raise CorruptBlob(
                    f"a frame of the blob awaits {_describe(entry)}, which has not started: priming "
                    "would run it; a checkpoint never holds that, so the blob was forged"
                )
        return delegated, on_traps

    def _prime(self, entries: list[_Restored], delegated: set[int], on_traps: list[_Restored]) -> None:
        for entry in on_traps:  # a stored trap becomes a trap generator again, which priming starts (_trap)
            entry.state[-1] = fresh_trap(entry.state[-1].payload)
        for entry in entries:
            if entry.plan.site is None or id(entry.obj) in delegated:
                continue
            try:
                _prime_one(entry, self.primed)
            except (CorruptBlob, IncompatibleBlob, InternalInconsistency):
                raise
            except BaseException as error:
                raise CorruptBlob(f"restoring {_describe(entry)} failed: {describe_error(error)}") from error

    def __del__(self) -> None:
        # A load that failed before priming leaves unstarted objects behind; let them
        # go quietly instead of warning "coroutine ... was never awaited".
        if self.primed:
            self._end_primed(keep=True)
        if self.describe:
            return  # records are plain data
        for entry in self.restored.values():
            L.mark_completed(entry.obj)


def _record_state(entry: _Restored) -> FrameState:
    """The :class:`FrameState` a frame record holds, as ``capture`` would give it for the live frame."""
    record: FrameRecord = entry.obj
    plan = entry.plan
    state = entry.state
    nbound = len(plan.bound)
    return FrameState(
        plan.kind,
        plan.code,
        record.module,
        plan.site,
        record.status,
        plan.bound,
        tuple(state[1 : 1 + nbound]),
        plan.null_mask,
        tuple(state[1 + nbound :]),
        state[0],
        record.cells,
    )


def _describe(entry: _Restored) -> str:
    code = entry.plan.code
    line = f" line {entry.plan.site.lineno}" if entry.plan.site else ""
    return f"{code.co_qualname} ({code.co_filename}{line})"


def _prime_one(entry: _Restored, primed: list[int]) -> None:
    obj = entry.obj
    if entry.plan.kind is Kind.ASYNC_GENERATOR:
        try:
            result = obj.asend(None).send(None)
        except StopIteration:
            return
        if entry.plan.site is not None and entry.plan.site.kind is SiteKind.ASYNC_YIELD:
            raise CorruptBlob(f"async generator {_describe(entry)} did not stop at its yield")
    else:
        result = obj.send(None)
    _LIVE_PRIMED[id(obj)] = (obj, result)
    primed.append(id(obj))


def restored_pending(obj: Any) -> Any:
    """What a primed, restored chain yielded when it re-suspended (its innermost payload object)."""
    entry = _LIVE_PRIMED.pop(id(obj), None)
    if entry is not None and entry[0] is obj:
        return entry[1]
    if entry is not None:  # pragma: no cover - an id reused while its load is open cannot happen
        _LIVE_PRIMED[id(obj)] = entry
    try:
        return _PRIMED.pop(obj)
    except (KeyError, TypeError):
        raise CorruptBlob("the blob's top-level object was not a suspended chain") from None


def abandon(obj: Any) -> None:
    """Drop a suspended chain without running any ``finally`` block (see ``mark_completed``).

    Covers the chain itself and the coroutines / generators its frames hold
    directly in locals, cells and the value stack; the objects are collected first
    and marked afterwards, because a marked frame can no longer be read.
    """
    # id -> (object, its state word): the object is kept so that ids stay unique during the walk;
    # the word (one ctypes view per object) is read for the lifecycle and written to mark it
    found: dict[int, tuple[Any, Any]] = {}
    paused = L.PAUSED_STATES
    todo = [obj]
    while todo:
        current = todo.pop()
        tp = type(current)
        if tp not in _FRAME_TYPES:
            current = _delegate_of(current)
            tp = type(current)
            if tp not in _FRAME_TYPES:
                continue
        if id(current) in found:
            continue
        if tp is types.GeneratorType and is_trap(current):
            continue  # it holds only its payload, and closing it runs nothing but the trap's own code
        word = L.state_word(current)
        found[id(current)] = (current, word)
        if word.value not in paused:  # running, finished: nothing to follow, nothing to mark
            continue
        # its slots and a few more objects (code, function, names), by its own traverse in C
        # (L.held_objects; self_check verifies that every slot is among them)
        held = gc.get_referents(current)
        # only the generator-like objects and cells among them, picked in C (most slots are neither)
        for value in itertools.compress(held, map(_HELD_TYPES.__contains__, map(type, held))):
            if type(value) is types.CellType:
                value = value.cell_contents if _cell_is_full(value) else None
            tp = type(value)
            if tp in _ABANDON_FOLLOWS and not (tp is types.GeneratorType and is_trap(value)):
                todo.append(value)
    completed = L.FRAME_COMPLETED
    for _current, word in found.values():
        if word.value in paused:  # as mark_completed: only a suspended or created object
            word.value = completed


_FRAME_TYPES = frozenset(KIND_OF_TYPE)
#: what ``abandon`` follows from a frame's slots (a suspend() trap excepted: see there)
_ABANDON_FOLLOWS = frozenset({*KIND_OF_TYPE, ASEND_TYPE, ANEXT_TYPE})


def _cell_is_full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - probing whether the cell is empty
    except ValueError:
        return False
    return True


def _session(ctx: Any) -> _LoadSession:
    session: _LoadSession | None = getattr(ctx, "frame_session", None)
    if session is None:
        describe = bool(getattr(ctx, "describe", False))
        on_refuse = getattr(ctx, "on_refuse", None)
        session = _LoadSession(
            bool(getattr(ctx, "signed", False)), describe, on_refuse is not None and not describe
        )
        ctx.frame_session = session
        ctx.after_load(session.prime)
        if on_refuse is not None:
            on_refuse(session.abandon_all)
            ctx.on_accept(session.accept)
    return session


def _finished(kind: Kind) -> Any:
    if kind is Kind.COROUTINE:

        async def finished_coroutine() -> None:
            return None

        obj: Any = finished_coroutine()
        with contextlib.suppress(StopIteration):
            obj.send(None)
        return obj
    if kind is Kind.GENERATOR:
        obj = (x for x in ())  # type: ignore[var-annotated]  # an empty generator: no item type to infer
        obj.close()
        return obj

    async def finished_agen() -> Any:
        yield None

    obj = finished_agen()
    with contextlib.suppress(StopIteration):
        obj.aclose().send(None)
    return obj


def _new_plan(session: _LoadSession, code: Any, key: tuple[Any, ...]) -> _Plan:
    """Validate a frame shape met for the first time (and synthesize its resume code); cache it."""
    session.new_shape()
    plan = _plans.PLANS[key] = _plan(code, *_plan_fields(key))
    session.new_keys.append((key, plan))
    while len(_plans.PLANS) > _plans.MAX_PLANS:
        _plans.PLANS.popitem(last=False)  # a cache: a shape seen again is validated again
    return plan


class FrameObjects:
    """Codec extension for coroutines, generators and async generators."""

    name = "frame"
    types = tuple(KIND_OF_TYPE)
    state_items_held = True  # every item of the state list is held by the frame too (a slot)

    def reduce(self, obj: Any, ctx: EncodeContext) -> tuple[tuple[Any, ...], Any]:
        if type(obj) is types.GeneratorType:
            stored = stored_trap(obj)
            if stored is not None:  # a suspend() trap: a plain _Trap(payload), as blobs always held it
                return STORED_AS, stored
        # Pickle asks again for an object it has not memoised yet only while encoding that
        # object's own constructor arguments: here, its closure cells reach back to it.
        reducing: set[int] | None = ctx.__dict__.get("frames_reducing")
        if reducing is None:
            reducing = ctx.__dict__["frames_reducing"] = set()
        if id(obj) in reducing:
            code = L.gen_code(obj)
            raise UnsupportedSuspension(
                f"AR111: {code.co_qualname} ({code.co_filename}) is reachable from its own closure "
                "variables, so it cannot be rebuilt before them. Do not keep the coroutine or "
                "generator object in a variable its inner functions capture."
            )
        reducing.add(id(obj))
        state = capture(obj)
        if state.status == FINISHED:
            return (
                FINISHED_SHAPE_INDEX,
                _shape_bytes(int(state.kind), FINISHED, (), (), False),
                (),
                "",
            ), None
        code = state.code
        index = ctx.code_ref(code, state.module)
        key = (id(code), state.kind, state.status, state.bound_locals, state.null_mask, state.exc is not None)
        record = _plans.RECORDS.get(key)
        if record is None or record[0] is not code:
            record = _record_parts(key, code)
        # (code index, shape, cells, names and site for `agentrt upgrade` (_sites))
        args = (index, record[1], state.cells, record[2])
        return args, [state.exc, *state.local_values, *state.stack_values]

    def create(self, ctx: DecodeContext, *args: Any) -> Any:
        # The checks of this hot path are written out (no _check call): it runs once per frame.
        session = getattr(ctx, "frame_session", None) or _session(ctx)
        if len(args) == 4:  # format 2: (code index, shape, cells, info), see _shape
            index, shape, cells = args[:3]
            if type(index) is not int or type(shape) is not bytes:
                raise CorruptBlob("malformed frame record: code index or shape")
            if index == FINISHED_SHAPE_INDEX:
                return self._finished(unpack_shape(shape), cells, session)
            code = ctx.code(index)
            key: tuple[Any, ...] = (id(code), shape)
            plan = _plans.PLANS.get(key)
        else:
            fields = record_fields(args)  # format 1: one field per value (8th: RecordInfo, for upgrades)
            _check(fields is not None, "wrong number of fields")
            assert fields is not None
            kind_value, index, status, bound, null_mask, has_exc, cells = fields[:7]
            if type(status) is int and status == FINISHED:
                return self._finished((kind_value, status, (), (), False), cells, session)
            _check(type(index) is int, "code index is not an int")
            code = ctx.code(index)
            try:
                key = (id(code), kind_value, status, bound, null_mask, has_exc)
                plan = _plans.PLANS.get(key)
            except TypeError:  # unhashable garbage
                raise CorruptBlob("malformed frame record: unhashable fields") from None
        if session.describe:
            return self._record(ctx, session, index, code, key, plan, cells)
        if plan is None or plan.code is not code:
            plan = _new_plan(session, code, key)
        else:
            try:  # noqa: SIM105 - per restored frame: contextlib.suppress costs a microsecond
                _plans.PLANS.move_to_end(key)
            except KeyError:  # another thread evicted it meanwhile: it stays usable, uncached
                pass
        if type(cells) is not tuple or len(cells) != plan.ncells:
            raise CorruptBlob("malformed frame record: closure cell count")
        if cells:
            _check_cells(cells, plan.ncells)
        module = sys.modules.get(ctx.code_module(index))
        if module is None:
            raise CorruptBlob(
                f"malformed frame record: module {ctx.code_module(index)!r} vanished during the load"
            )
        state: list[Any] = []
        obj = new_frame_object(plan.resumed, module.__dict__, cells, state)
        session.restored[id(obj)] = _Restored(obj, plan, state)
        session.built.append(obj)
        return obj

    @staticmethod
    def _finished(fields: Any, cells: Any, session: _LoadSession) -> Any:
        """A finished frame's record: its kind only (it has no code, site or state)."""
        _check(fields is not None, "shape")
        kind_value, status = fields[0], fields[1]
        _check(type(status) is int and status == FINISHED, "a finished frame's record names code")
        _check(type(kind_value) is int and kind_value in (0, 1, 2), "unknown kind")
        _check(type(cells) is tuple and not cells, "a finished frame has no cells")
        return _finished(Kind(kind_value))  # an empty, finished object: it runs nothing, even in a dump

    def _record(
        self,
        ctx: DecodeContext,
        session: _LoadSession,
        index: int,
        code: Any,
        key: tuple[Any, ...],
        plan: _Plan | None,
        cells: Any,
    ) -> FrameRecord:
        """A dump's frame: the record validated as a restore would, with no resume code and no frame."""
        if plan is None or plan.code is not code:
            plan = session.shapes.get(key)
        if plan is None:
            session.new_shape()
            plan = session.shapes[key] = _plan(code, *_plan_fields(key), synthesize=False)
        _check_cells(cells, plan.ncells)
        record = FrameRecord(plan.kind, code, ctx.code_module(index), plan.status, cells)
        session.restored[id(record)] = _Restored(record, plan, [])
        session.built.append(record)
        return record

    def set_state(self, ctx: DecodeContext, obj: Any, state: Any) -> None:
        session = getattr(ctx, "frame_session", None) or _session(ctx)
        entry = session.restored.get(id(obj))
        if entry is None:  # a finished object has no state
            _check(state is None, "state for a finished frame")
            return
        plan = entry.plan
        if type(state) is not list or len(state) != plan.expected_len:
            raise CorruptBlob("malformed frame record: frame state length")
        exc = state[0]
        if not (isinstance(exc, BaseException) if plan.has_exc else exc is None):
            raise CorruptBlob("malformed frame record: exception being handled")
        if plan.dead_positions:
            held = (FrameRecord,) if session.describe else KIND_OF_TYPE
            for position in plan.dead_positions:
                _check(type(state[position]) in held, "a dead local that is not a suspended generator")
        entry.state[:] = state

    def children(self, obj: Any) -> Iterator[tuple[str, Any, Location | None]]:
        if is_trap(obj) and obj.gi_frame is not None:
            yield ".<state>", trap_payload(obj), None  # as the stored _Trap's state (codec paths)
            return
        state = capture(obj)
        if state.status == FINISHED:
            return
        yield from frame_children(state)


class AsendObjects:
    """Codec extension for the awaitable of one ``async for`` / ``__anext__`` / ``asend`` step."""

    name = "asend"
    types = (ASEND_TYPE,)

    def reduce(self, obj: Any, ctx: EncodeContext) -> tuple[tuple[Any, ...], Any]:
        return (_agen_of(obj),), None

    def create(self, ctx: DecodeContext, *args: Any) -> Any:
        if _session(ctx).describe:
            _check(
                len(args) == 1 and type(args[0]) is FrameRecord and args[0].kind is Kind.ASYNC_GENERATOR,
                "asend of a non-async-generator",
            )
            return StepRecord(args[0])
        _check(len(args) == 1 and type(args[0]) is types.AsyncGeneratorType, "asend of a non-async-generator")
        return args[0].asend(None)

    def set_state(self, ctx: DecodeContext, obj: Any, state: Any) -> None:
        _check(state is None, "asend state")

    def children(self, obj: Any) -> Iterator[tuple[str, Any, Location | None]]:
        yield "<async generator>", _agen_of(obj), None


class AnextObjects:
    """Codec extension for the awaitable of ``anext(aiterator, default)``: the awaitable it wraps
    (an async generator step, or a coroutine) and the default, rebuilt with ``anext`` itself."""

    name = "anext"
    types = (ANEXT_TYPE,)

    def reduce(self, obj: Any, ctx: EncodeContext) -> tuple[tuple[Any, ...], Any]:
        return _anext_parts(obj), None

    def create(self, ctx: DecodeContext, *args: Any) -> Any:
        _check(len(args) == 2, "anext awaitable fields")
        wrapped = args[0]
        if _session(ctx).describe:
            _check(
                type(wrapped) is StepRecord or type(wrapped) is FrameRecord,
                "anext awaitable around something that is not an async generator step or a coroutine",
            )
            return AnextRecord(wrapped, args[1])
        _check(
            type(wrapped) is ASEND_TYPE or type(wrapped) in FrameObjects.types,
            "anext awaitable around something that is not an async generator step or a coroutine",
        )
        return anext(_GiveAwaitable(wrapped), args[1])

    def set_state(self, ctx: DecodeContext, obj: Any, state: Any) -> None:
        _check(state is None, "anext awaitable state")

    def children(self, obj: Any) -> Iterator[tuple[str, Any, Location | None]]:
        wrapped, default = _anext_parts(obj)
        yield "<awaitable of anext()>", wrapped, None
        yield "<default of anext()>", default, None


#: what abandon() looks for in a frame's slots: generator-like objects, their steps, and the cells
#: that may hold one
_HELD_TYPES = frozenset({*FrameObjects.types, ASEND_TYPE, ANEXT_TYPE, types.CellType})
_installed = False


def install() -> None:
    """Register the frame extensions with the codec (idempotent)."""
    global _installed
    if not _installed:
        register_extension(FrameObjects())
        register_extension(AsendObjects())
        register_extension(AnextObjects())
        _installed = True
