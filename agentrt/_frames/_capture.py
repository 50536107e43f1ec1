"""Suspended generator-like object -> :class:`FrameState` (plain data plus live values).

Reads only frames that are suspended (or not yet started), only the slots below
``stacktop``, and tests NULL slots before touching them (see ``_layout``).  Dead
locals are left out, using the same liveness analysis as the validator.

Everything that depends only on the code object -- which slot holds which
original local, where the cells are, the liveness per site -- is computed once
per code object and cached (:class:`CodeView`), so a checkpoint costs a read of
the slots plus a few tuple builds per frame.
"""

from __future__ import annotations

import dis
import enum
import operator
import types
from collections.abc import Callable, Iterator
from types import CodeType
from typing import Any, NamedTuple  # Any: frame locals and stack entries are any value

import attrs

from agentrt._codec import Location
from agentrt._frames import _layout as L
from agentrt._frames._errors import inconsistency, unsupported
from agentrt._frames._liveness import Analysis, Site, SiteKind, analyze
from agentrt._frames._resume import HIDDEN_CELL, STATE_ARG, as_original
from agentrt._percode import PerCode


class Kind(enum.IntEnum):
    COROUTINE = 0
    GENERATOR = 1
    ASYNC_GENERATOR = 2


KIND_OF_TYPE = {
    types.CoroutineType: Kind.COROUTINE,
    types.GeneratorType: Kind.GENERATOR,
    types.AsyncGeneratorType: Kind.ASYNC_GENERATOR,
}
NOT_STARTED = -1
FINISHED = -2


class FrameState(NamedTuple):
    """One captured frame.  A NamedTuple: built once per frame per checkpoint, so cheap."""

    kind: Kind
    code: CodeType  # the agent's own code (never resume code)
    module: str
    site: Site | None  # None when not started or finished
    status: int  # yield offset, NOT_STARTED or FINISHED
    bound_locals: tuple[int, ...]
    local_values: tuple[object, ...]
    null_mask: tuple[bool, ...]
    stack_values: tuple[object, ...]  # non-NULL stack entries, bottom first
    exc: BaseException | None
    cells: tuple[object, ...]  # cell objects for co_freevars + co_cellvars, in that order


@attrs.frozen
class CodeView:
    """How to read frames running ``actual`` (the agent's code or a resume code of it)."""

    code: CodeType  # the agent's own code
    original_offset: dict[int, int] | None  # resume-code byte offset -> original, if resumed
    resumed_bound: tuple[int, ...] | None  # if resumed: the locals its state list restores
    state_slot: int  # if resumed: the slot of the state argument
    slot_limit: int
    nslots: int  # locals + cells + free vars of ``actual``
    local_slot: tuple[int, ...]  # original co_varnames index -> slot in ``actual`` (-1: none)
    cell_slots: tuple[int, ...]  # slots of original co_freevars + co_cellvars
    # before the first resume: where the cells are (resume code keeps its cell variables' original
    # cells in hidden free variables until its prologue stores them into their slots)
    created_cell_slots: tuple[int, ...]
    cell_local: tuple[int, ...]  # per cell of ``cell_slots``: its co_varnames index, -1 if none
    analysis: Analysis
    site_slots: dict[int, tuple[tuple[int, int], ...]]  # yield offset -> ((local index, slot), ...)
    site_fast: dict[
        int, tuple[tuple[int, ...], Callable[[list[object]], tuple[object, ...]], tuple[bool, ...]]
    ]
    # yield offset -> (live local indices, getter of their values from the slots, all-False NULL mask):
    # the path for frames without NULL slots, where every tuple is built in C
    site_dead: dict[int, tuple[tuple[int, int], ...]]  # yield offset -> dead (local index, slot)
    # yield offset -> getter of the dead locals' slot values (None: no dead local there)
    site_dead_values: dict[int, Callable[[list[object]], tuple[object, ...]] | None]
    # yield offset -> (getter of the live locals' slots, then the cells', then the stack's, all at
    # once; how many live locals; the slots of the dead locals): the path that reads only what is kept
    site_pick: dict[int, tuple[Callable[[Any], tuple[object, ...]], int, tuple[int, ...]]]
    cleanup_sites: frozenset[int]  # yield offsets inside a try with a handler (finally, with, except)


#: The view of each code that runs in a captured frame (resume code too: it is cached with a bound
#: in _resume, and a view must not keep an evicted one alive -- PerCode holds codes weakly).
_VIEWS: PerCode[CodeView] = PerCode("code views")


def view_of(actual: CodeType) -> CodeView:
    view = _VIEWS.get(actual)
    if view is None:
        view = _VIEWS.put(actual, _build_view(actual))
    return view


def _build_view(actual: CodeType) -> CodeView:
    resumed = as_original(actual)
    code = resumed.original if resumed else actual
    names = L.localsplus_names(actual)
    slot_of = {name: index for index, name in enumerate(names)}
    local_slot = tuple(slot_of.get(name, -1) for name in code.co_varnames)
    cell_slots = tuple(slot_of[name] for name in code.co_freevars + code.co_cellvars)
    created_cell_slots = cell_slots
    if resumed:
        hidden = tuple(HIDDEN_CELL + name for name in code.co_cellvars)
        created_cell_slots = tuple(slot_of[name] for name in code.co_freevars + hidden)
    analysis = analyze(code)
    # A local that is also a cell (a captured argument, an inlined comprehension's captured loop
    # variable) holds its cell object in its slot: the cell travels in ``cells``, never as a local.
    cell_slot_set = set(cell_slots)
    site_slots = {
        offset: tuple(
            (i, local_slot[i])
            for i in site.live_locals
            if local_slot[i] >= 0 and local_slot[i] not in cell_slot_set
        )
        for offset, site in analysis.sites.items()
    }
    site_fast = {
        offset: (
            tuple(i for i, _ in pairs),
            _tuple_getter([slot for _, slot in pairs]),
            (False,) * analysis.sites[offset].stack_depth,
        )
        for offset, pairs in site_slots.items()
    }
    plain = {i for i, slot in enumerate(local_slot) if slot >= 0 and slot not in cell_slot_set}
    site_dead = {
        offset: tuple((i, local_slot[i]) for i in sorted(plain - set(site.live_locals)))
        for offset, site in analysis.sites.items()
    }
    site_dead_values = {
        offset: _tuple_getter([slot for _, slot in dead]) if dead else None
        for offset, dead in site_dead.items()
    }
    nslots = len(names)
    site_pick = {
        offset: (
            _tuple_getter(
                [slot for _, slot in pairs]
                + list(cell_slots)
                + list(range(nslots, nslots + analysis.sites[offset].stack_depth))
            ),
            len(pairs),
            tuple(slot for _, slot in site_dead[offset]),
        )
        for offset, pairs in site_slots.items()
    }
    return CodeView(
        code=code,
        original_offset=resumed.original_offset if resumed else None,
        resumed_bound=resumed.shape.bound_locals if resumed else None,
        state_slot=slot_of.get(STATE_ARG, -1),
        slot_limit=L.slot_limit(actual),
        nslots=nslots,
        local_slot=local_slot,
        cell_slots=cell_slots,
        created_cell_slots=created_cell_slots,
        cell_local=tuple(
            code.co_varnames.index(name) if name in code.co_varnames else -1
            for name in code.co_freevars + code.co_cellvars
        ),
        analysis=analysis,
        site_slots=site_slots,
        site_fast=site_fast,
        site_dead=site_dead,
        site_dead_values=site_dead_values,
        site_pick=site_pick,
        cleanup_sites=_cleanup_sites(code, analysis),
    )


def _cleanup_sites(code: CodeType, analysis: Analysis) -> frozenset[int]:
    """Sites where closing the frame would run code of its own: the point it resumes at is inside
    a ``try`` (``finally``, ``with``, ``except``), not only the implicit handler 3.12+ wraps every
    generator body in (which turns a StopIteration into RuntimeError)."""
    entries = dis.Bytecode(code).exception_entries  # type: ignore[attr-defined]  # exception_entries is not in typeshed
    implicit = {
        instr.offset
        for instr in dis.get_instructions(code)
        if instr.opname == "CALL_INTRINSIC_1" and instr.argrepr == "INTRINSIC_STOPITERATION_ERROR"
    }
    return frozenset(
        site.yield_offset
        for site in analysis.sites.values()
        if any(e.start <= site.resume_offset < e.end and e.target not in implicit for e in entries)
    )


def _finally_pending(obj: object) -> bool:
    """Whether a generator-like object is suspended where closing it runs its own cleanup code."""
    try:
        frame = L.frame_of(obj)
        if L.lifecycle_of_frame(obj, frame) != "SUSPENDED":
            return False
        view = view_of(L.gen_code(obj))
        lasti = L.lasti_bytes(obj, frame)
    except (RuntimeError, KeyError):
        return False
    if view.original_offset is not None:
        lasti = view.original_offset.get(lasti, -1)
    return lasti in view.cleanup_sites


def _keep_pending_finally(
    view: CodeView, lasti: int, slots: list[object], bound: tuple[int, ...], values: tuple[object, ...]
) -> tuple[tuple[int, ...], tuple[object, ...]]:
    """Add dead locals that hold a generator suspended inside try/finally or with: a plain run
    finalizes it when this frame ends (its ``finally`` / ``__exit__`` runs), so a restored run must
    hold it too.  Anything else dead stays out of the checkpoint."""
    extra = [
        (i, value)
        for i, slot in view.site_dead[lasti]
        if type(value := slots[slot]) in KIND_OF_TYPE and _finally_pending(value)
    ]
    if not extra:
        return bound, values
    merged = sorted([*zip(bound, values, strict=True), *extra], key=operator.itemgetter(0))
    return tuple(i for i, _ in merged), tuple(v for _, v in merged)


def _tuple_getter(indices: list[int]) -> Callable[[list[object]], tuple[object, ...]]:
    """``lambda seq: tuple(seq[i] for i in indices)``, done by operator.itemgetter in C."""
    if not indices:
        return lambda seq: ()
    if len(indices) == 1:
        only = indices[0]
        return lambda seq: (seq[only],)
    return operator.itemgetter(*indices)


_MODULES: dict[int, tuple[dict[str, object], str]] = {}


def _module_name(frame: types.FrameType) -> str:
    globals_ = frame.f_globals
    cached = _MODULES.get(id(globals_))
    if cached is not None and cached[0] is globals_:
        return cached[1]
    name = globals_.get("__name__") or "__main__"
    _MODULES[id(globals_)] = (globals_, name)
    return name


_GENERATOR_LIKE = frozenset(KIND_OF_TYPE)
#: What a generator suspended in ``yield from`` may delegate to: another frame a restore rebuilds
#: (a generator -- the trap among them -- or a ``@types.coroutine``'s coroutine), or a stored trap.
_GENERATOR_DELEGATES = frozenset({types.GeneratorType, types.CoroutineType})


def _check_delegate(code: CodeType, site: Site, delegate: object) -> None:
    """Refuse, at checkpoint time, a generator delegating to something no restore could rebuild.

    A generator in ``yield from range(n)`` (or ``yield from some_list``) waits inside a plain
    iterator: a restore would have to advance that iterator to put the frame back at its
    ``yield``, so it would be refused every time.  Saying so now, with the fix, beats writing a
    checkpoint that never restores.  (What a coroutine awaits is judged where it is stored.)"""
    if type(delegate) not in _GENERATOR_DELEGATES:
        from agentrt._frames._trap import STORED_TYPES

        if type(delegate) in STORED_TYPES:
            return
        raise unsupported(
            f"{code.co_qualname} ({code.co_filename}, line {site.lineno}) is suspended in "
            f"'yield from' a {type(delegate).__name__}, which a checkpoint cannot hold: "
            "restoring it would have to advance that iterator. Delegate to a generator instead "
            "(e.g. 'for x in range(n): yield x' rather than 'yield from range(n)')"
        )


def capture(obj: object) -> FrameState:
    """Read the state of a suspended, unstarted or finished coroutine / generator / async generator."""
    tp = type(obj)
    kind = KIND_OF_TYPE[tp]
    parts = L.GEN_PARTS.get(tp)
    if parts is not None:  # frame, code and lifecycle in one C call
        frame, actual, suspended = parts(obj)
        if frame is None:
            state = "CLOSED"
        elif suspended:
            state = "SUSPENDED"
        else:  # RUNNING, CREATED or (3.11) COMPLETED: the state word tells (see _layout.lifecycle)
            state = L.lifecycle_of_frame(obj, frame)
    else:  # a 3.11 async generator: the lifecycle from its state word
        frame = L.frame_of(obj)
        state = L.lifecycle_of_frame(obj, frame)
        actual = L.gen_code(obj)
    if state == "CLOSED":
        return FrameState(kind, actual, "", None, FINISHED, (), (), (), (), None, ())
    view = view_of(actual)
    code = view.code
    if state == "RUNNING":
        raise unsupported(
            f"{code.co_qualname} is running: a checkpoint can only be taken while the agent is suspended "
            "(call Machine.get() from the driver, not from inside the agent)"
        )
    module = _module_name(frame)  # not None: a suspended generator has a frame
    if state == "SUSPENDED":
        fast = _capture_picked(obj, kind, view, frame, module)
        if fast is not None:
            return fast
    slots, has_null = L.read_slots_flagged(obj, view.slot_limit)
    cell_slots = view.created_cell_slots if state == "CREATED" else view.cell_slots
    cells = tuple([slots[i] for i in cell_slots]) if cell_slots else ()
    slot_locals: list[tuple[int, object]] = []  # cell variables' slots used as plain locals just now
    for j, cell in enumerate(cells):
        if type(cell) is not types.CellType:
            if state == "CREATED" or view.cell_local[j] < 0:
                raise inconsistency("a closure cell slot does not hold a cell", code)
            # An inlined comprehension (3.12+) whose loop variable is not captured, in a function
            # where that name is a cell: the comprehension saved the cell on the value stack and
            # uses the slot as a plain local.  The slot's value is restored as that local (the
            # cell passed for it is a placeholder the prologue overwrites).
            if cell is not L.NULL:
                slot_locals.append((view.cell_local[j], cell))
            cells = (*cells[:j], types.CellType(), *cells[j + 1 :])

    if state == "CREATED":
        if view.resumed_bound is not None:
            # A restored object that never ran: its locals are still in the state list the
            # prologue would have stored them from (slot 0 of that list is the exception).
            restored = slots[view.state_slot]
            if type(restored) is not list or len(restored) < 1 + len(view.resumed_bound):
                raise inconsistency("a restored frame's state is not filled in yet", code)
            bound = view.resumed_bound
            values = tuple(restored[1 : 1 + len(bound)])
        else:
            pairs = [
                (i, slots[s]) for i, s in enumerate(view.local_slot) if s >= 0 and slots[s] is not L.NULL
            ]
            bound = tuple(i for i, _ in pairs)
            values = tuple(v for _, v in pairs)
        return FrameState(kind, code, module, None, NOT_STARTED, bound, values, (), (), None, cells)

    lasti = frame.f_lasti - L.LASTI_ADJUST  # not None: the frame is suspended
    if view.original_offset is not None:
        lasti = view.original_offset[lasti]
    site = view.analysis.sites.get(lasti)
    if site is None:
        raise unsupported(
            f"{code.co_qualname} ({code.co_filename}) is suspended at byte {lasti}, which is not an "
            "await or yield agentrt knows how to resume"
        )
    stack = slots[view.nslots :]
    if len(stack) != site.stack_depth:
        raise inconsistency(
            f"the value stack holds {len(stack)} entries, the analysis expects {site.stack_depth}",
            code,
            site.lineno,
        )
    if has_null:
        pairs = [(i, slots[s]) for i, s in view.site_slots[lasti] if slots[s] is not L.NULL]
        missing = set(site.must_bind) - {i for i, _ in pairs}
        if missing:
            names = ", ".join(sorted(code.co_varnames[i] for i in missing))
            raise inconsistency(
                f"local(s) {names} are unbound although the liveness analysis says the code reads "
                "them unchecked; refusing to write a checkpoint that could not resume",
                code,
                site.lineno,
            )
        bound = tuple([i for i, _ in pairs])
        values = tuple([v for _, v in pairs])
        null_mask = tuple([value is L.NULL for value in stack])
        stack_values = tuple([value for value in stack if value is not L.NULL])
    else:
        bound, getter, null_mask = view.site_fast[lasti]
        values = getter(slots)
        stack_values = tuple(stack)
    if slot_locals:
        live = set(site.live_locals)
        merged = sorted(
            [*zip(bound, values, strict=True), *((i, v) for i, v in slot_locals if i in live)],
            key=operator.itemgetter(0),
        )
        bound, values = tuple(i for i, _ in merged), tuple(v for _, v in merged)
    if kind is Kind.GENERATOR and site.kind is SiteKind.AWAIT:
        _check_delegate(code, site, stack_values[-1])
    dead_values = view.site_dead_values[lasti]
    if dead_values is not None and not _GENERATOR_LIKE.isdisjoint(map(type, dead_values(slots))):
        bound, values = _keep_pending_finally(view, lasti, slots, bound, values)
    exc = L.exception_being_handled(obj)
    return FrameState(kind, code, module, site, lasti, bound, values, null_mask, stack_values, exc, cells)


def _capture_picked(obj: object, kind: Kind, view: CodeView, frame: Any, module: str) -> FrameState | None:
    """:func:`capture` of a suspended frame whose kept slots (live locals, cells, stack) are all
    set and whose cells are cells: those slots only, read in one C call.  None otherwise (an
    unbound live local, a NULL stack slot, a cell slot used as a plain local...): ``capture``
    then reads every slot, and says what is wrong if anything is."""
    lasti = frame.f_lasti - L.LASTI_ADJUST
    if view.original_offset is not None:
        lasti = view.original_offset.get(lasti, -1)
    pick = view.site_pick.get(lasti)
    if pick is None:
        return None
    getter, nlive, dead_slots = pick
    site = view.analysis.sites[lasti]
    read = L.read_picked(obj, view.nslots + site.stack_depth, getter, dead_slots)
    if read is None:
        return None
    picked, dead_values = read
    ncells = len(view.cell_slots)
    cells = picked[nlive : nlive + ncells]
    for cell in cells:
        if type(cell) is not types.CellType:
            return None
    bound, _, null_mask = view.site_fast[lasti]
    if kind is Kind.GENERATOR and site.kind is SiteKind.AWAIT:
        _check_delegate(view.code, site, picked[-1])
    values = picked[:nlive]
    if dead_values and not _GENERATOR_LIKE.isdisjoint(map(type, dead_values)):
        slots = L.read_slots_flagged(obj, view.slot_limit)[0]
        bound, values = _keep_pending_finally(view, lasti, slots, bound, values)
    exc = L.exception_being_handled(obj)
    return FrameState(
        kind, view.code, module, site, lasti, bound, values, null_mask, picked[nlive + ncells :], exc, cells
    )


def describe_stack_slot(state: FrameState, position: int) -> str:
    """A human label for value-stack entry ``position`` (error messages and dumps)."""
    depth = len(state.null_mask)
    if state.site is not None and position == depth - 1 and state.site.kind is SiteKind.AWAIT:
        return "<awaited object>"
    return f"<stack slot {position}>"


def frame_children(state: FrameState) -> Iterator[tuple[str, Any, Location | None]]:
    """Named values of a captured frame, for error paths and dumps."""
    code = state.code
    location = Location(
        code.co_qualname, code.co_filename, state.site.lineno if state.site else code.co_firstlineno
    )
    for index, value in zip(state.bound_locals, state.local_values, strict=True):
        yield code.co_varnames[index], value, location
    for name, cell in zip(code.co_freevars + code.co_cellvars, state.cells, strict=True):
        try:
            yield name, cell.cell_contents, location  # type: ignore[attr-defined]  # a types.CellType, typed object in FrameState
        except ValueError:
            continue  # empty cell
    values = iter(state.stack_values)
    labels = _slot_labels(state) if state.stack_values else {}
    for position, is_null in enumerate(state.null_mask):
        if not is_null:
            yield labels.get(position) or describe_stack_slot(state, position), next(values), location
    if state.exc is not None:
        yield "<exception being handled>", state.exc, location


def _slot_labels(state: FrameState) -> dict[int, str]:
    """What each value-stack entry is, read from the bytecode (``<iterator of the 'for' loop at line
    12>``), for error messages; only the error path and dumps pay for it.  Empty if unknown."""
    if state.site is None:
        return {}
    try:
        from agentrt._frames._stack import describe_slots

        values: list[object] = []
        stack = iter(state.stack_values)
        for is_null in state.null_mask:
            values.append(None if is_null else next(stack))
        infos = describe_slots(
            state.code,
            state.site.yield_offset,
            len(state.null_mask),
            state.null_mask,
            state.site.kind is SiteKind.AWAIT,
            values,
        )
    except Exception:  # a label is a nicety: never let it hide the real error
        return {}
    return {info.position: f"<{info.label}>" for info in infos if info.role != "value"}
