"""Suspended generator-like object -> :class:`FrameState` (plain data plus live values).

Reads only frames that are suspended (or not yet started), only the slots below
``stacktop``, and tests NULL slots before touching them (see ``_layout``).  Dead
locals are left out, using the same liveness analysis as the validator.
"""

from __future__ import annotations

import enum
import types
from types import CodeType

import attrs

from agentrt._frames import _layout as L
from agentrt._frames._liveness import Analysis, Site, analyze
from agentrt._frames._resume import ResumeShape, as_original
from agentrt.exceptions import UnsupportedSuspension


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


@attrs.frozen
class FrameState:
    kind: Kind
    code: CodeType                  # the agent's own code (never resume code)
    module: str
    site: Site | None               # None when not started or finished
    status: int                     # yield offset, NOT_STARTED or FINISHED
    bound_locals: tuple[int, ...]
    local_values: tuple[object, ...]
    null_mask: tuple[bool, ...]
    stack_values: tuple[object, ...]  # non-NULL stack entries, bottom first
    exc: BaseException | None
    cells: tuple[object, ...]       # cell objects for co_freevars + co_cellvars, in that order

    def shape(self) -> ResumeShape:
        return ResumeShape(self.code, self.site, self.bound_locals, self.null_mask, self.exc is not None)


def capture(obj: object) -> FrameState:
    """Read the state of a suspended, unstarted or finished coroutine / generator / async generator."""
    kind = KIND_OF_TYPE[type(obj)]
    state = L.lifecycle(obj)
    actual_code = L.gen_code(obj)
    resumed = as_original(actual_code)
    code = resumed.original if resumed else actual_code
    if state == "CLOSED":
        return FrameState(kind, code, "", None, FINISHED, (), (), (), (), None, ())
    if state == "RUNNING":
        raise UnsupportedSuspension(
            f"{code.co_qualname} is running: a checkpoint can only be taken while the agent is suspended "
            "(call Machine.get() from the driver, not from inside the agent)"
        )
    frame = L.gen_frame(obj)
    module = frame.f_globals.get("__name__") or "__main__"
    slots = L.read_slots(obj, actual_code)
    names = L.localsplus_names(actual_code)
    nslots = len(names)
    by_name = dict(zip(names, slots[:nslots], strict=False))
    analysis = analyze(code)
    cells = tuple(by_name.get(name, L.NULL) for name in code.co_freevars + code.co_cellvars)
    if any(cell is L.NULL or type(cell) is not types.CellType for cell in cells):
        raise UnsupportedSuspension(f"{code.co_qualname}: a closure cell slot does not hold a cell")

    if state == "CREATED":
        bound = tuple(i for i in range(code.co_nlocals) if by_name.get(code.co_varnames[i], L.NULL) is not L.NULL)
        values = tuple(by_name[code.co_varnames[i]] for i in bound)
        return FrameState(kind, code, module, None, NOT_STARTED, bound, values, (), (), None, cells)

    lasti = L.lasti_bytes(obj)
    if resumed is not None:
        lasti = resumed.original_offset[lasti]
    site = _site(analysis, lasti, code)
    stack = slots[nslots:]
    if len(stack) != site.stack_depth:
        raise UnsupportedSuspension(
            f"{code.co_qualname} line {site.lineno}: value stack holds {len(stack)} entries, "
            f"analysis expects {site.stack_depth}"
        )
    bound = tuple(i for i in site.live_locals if by_name.get(code.co_varnames[i], L.NULL) is not L.NULL)
    values = tuple(by_name[code.co_varnames[i]] for i in bound)
    null_mask = tuple(value is L.NULL for value in stack)
    stack_values = tuple(value for value in stack if value is not L.NULL)
    exc = L.exception_being_handled(obj)
    return FrameState(kind, code, module, site, lasti, bound, values, null_mask, stack_values, exc, cells)


def _site(analysis: Analysis, lasti: int, code: CodeType) -> Site:
    try:
        return analysis.site(lasti)
    except LookupError:
        raise UnsupportedSuspension(
            f"{code.co_qualname} is suspended at byte {lasti}, which is not an await or yield agentrt "
            "knows how to resume"
        ) from None


def describe_stack_slot(state: FrameState, position: int) -> str:
    """A human label for value-stack entry ``position`` (error messages and dumps)."""
    depth = len(state.null_mask)
    if state.site is not None and position == depth - 1 and state.site.kind.value == "await":
        return "<awaited object>"
    return f"<stack slot {position}>"
