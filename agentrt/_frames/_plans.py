"""Frame shapes: a frame record checked against its code once, and what a shape costs to write.

A *plan* is a validated frame shape (the code, the suspension site, which locals are bound, the
value stack's NULL mask) with its synthesized resume code; every restore of that shape reuses it
(:data:`PLANS`, least recently used out).  On the way out, :func:`record_parts` gives the parts of a
frame record that depend on its shape only.  Checks raise ``CorruptBlob`` (a malformed record) or
``IncompatibleBlob`` (the code changed); a failure to build resume code for a valid record is
agentrt's bug (AR199).
"""

from __future__ import annotations

import collections
import inspect
import types
from typing import Any  # Any: a record's fields are unpickled values until checked

import attrs

from agentrt._frames import _validate
from agentrt._frames._capture import NOT_STARTED, Kind
from agentrt._frames._errors import inconsistency
from agentrt._frames._liveness import Site, SiteKind, analyze
from agentrt._frames._resume import ResumeShape, resume_code
from agentrt._frames._shape import pack_shape, unpack_shape
from agentrt._frames._sites import record_info_text
from agentrt.exceptions import AgentrtError, CorruptBlob, IncompatibleBlob

__all__ = [
    "MAX_NEW_PLANS_PER_LOAD",
    "PLANS",
    "Plan",
    "check",
    "check_cells",
    "plan",
    "plan_fields",
    "record_parts",
    "shape_bytes",
]


CODE_FLAG_OF_KIND = {
    Kind.COROUTINE: inspect.CO_COROUTINE,
    Kind.GENERATOR: inspect.CO_GENERATOR,
    Kind.ASYNC_GENERATOR: inspect.CO_ASYNC_GENERATOR,
}


@attrs.frozen
class Plan:
    """A validated frame shape and its resume code: checked once, reused by every restore."""

    code: Any
    kind: Kind
    site: Site | None
    resumed: Any
    expected_len: int
    ncells: int
    has_exc: bool
    checks: tuple[tuple[int, str], ...] = ()  # value-stack slots to check per restore (_validate)
    dead_positions: tuple[int, ...] = ()  # state indices of dead locals (generators pending a finally)
    bound: tuple[int, ...] = ()
    null_mask: tuple[bool, ...] = ()
    awaits: bool = False  # suspended at an await: the last stack value is what it awaits
    status: int = NOT_STARTED  # the record's status: the yield offset of ``site``, or NOT_STARTED


#: validated frame shapes, least recently used first out (a plan holds its resume code, so this
#: bound is also one on the resume code kept alive; see _resume.MAX_RESUME_CODES)
PLANS: collections.OrderedDict[tuple[Any, ...], Plan] = collections.OrderedDict()
MAX_PLANS = 1024
#: a blob of a real chain has a handful of frame shapes; a forged one may list hundreds, each of
#: which would synthesize (and cache) resume code
MAX_NEW_PLANS_PER_LOAD = 256


def plan(
    code: Any,
    kind_value: Any,
    status: Any,
    bound: Any,
    null_mask: Any,
    has_exc: Any,
    *,
    synthesize: bool = True,
) -> Plan:
    """Validate one frame record against the code it names (CorruptBlob / IncompatibleBlob).

    ``synthesize=False`` (a dump) validates the same and builds no resume code (``resumed`` is None).
    """
    check(type(kind_value) is int and kind_value in (0, 1, 2), "unknown kind")
    kind = Kind(kind_value)
    check(type(status) is int and (status == NOT_STARTED or status >= 0), "status is not a yield offset")
    check(bool(code.co_flags & CODE_FLAG_OF_KIND[kind]), f"{code.co_qualname} is not a {kind.name.lower()}")
    check(type(bound) is tuple and all(type(i) is int for i in bound), "bound locals")
    check(list(bound) == sorted(set(bound)), "bound locals are not sorted")
    check(type(null_mask) is tuple and all(type(b) is bool for b in null_mask), "stack NULL mask")
    check(type(has_exc) is bool, "exception flag")
    site: Site | None = None
    dead_positions: tuple[int, ...] = ()
    if status == NOT_STARTED:
        check(not null_mask and not has_exc, "an unstarted frame has no stack")
        check(all(0 <= i < code.co_nlocals for i in bound), "local index out of range")
        check(set(range(parameter_count(code))) <= set(bound), "an unstarted frame misses an argument")
    else:
        site = analyze(code).sites.get(status)
        if site is None:
            raise IncompatibleBlob(
                f"{code.co_qualname} has no suspension point at byte {status}: the code changed "
                "since the checkpoint"
            )
        dead = set(bound) - set(site.live_locals)
        check(all(0 <= i < code.co_nlocals for i in dead), "local index out of range")
        # A dead local is restored only when it holds a generator with a pending finally (checked
        # in set_state): the capture keeps those so that it is finalized when the frame ends.
        dead_positions = tuple(1 + n for n, i in enumerate(bound) if i in dead)
        check(set(site.must_bind) <= set(bound), "a local the code reads unchecked is missing")
        check(len(null_mask) == site.stack_depth, "value stack depth does not match the code")
        check(site.kind is not SiteKind.AWAIT or not null_mask[-1], "the awaited object is NULL")
    checks: tuple[tuple[int, str], ...] = ()
    if site is not None:
        checks = _validate.slot_checks(
            code, site.yield_offset, null_mask, site.kind is SiteKind.AWAIT, 1 + len(bound)
        )
    try:
        resumed = resume_code(ResumeShape(code, site, bound, null_mask, has_exc)) if synthesize else None
    except AgentrtError:
        raise
    except Exception as error:  # the record was valid: failing to build its code is our bug
        raise inconsistency(
            f"building resume code failed ({type(error).__name__}: {error})",
            code,
            site.lineno if site else None,
        ) from error
    expected = 1 + len(bound) + null_mask.count(False)
    ncells = len(code.co_freevars) + len(code.co_cellvars)
    return Plan(
        code,
        kind,
        site,
        resumed,
        expected,
        ncells,
        has_exc,
        checks=checks,
        dead_positions=dead_positions,
        bound=bound,
        null_mask=null_mask,
        awaits=site is not None and site.kind is SiteKind.AWAIT,
        status=status,
    )


def parameter_count(code: types.CodeType) -> int:
    """How many leading locals are parameters (bound by the call before the frame starts)."""
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return count


def check(condition: bool, what: str) -> None:
    if not condition:
        raise CorruptBlob(f"malformed frame record: {what}")


def check_cells(cells: Any, ncells: int) -> None:
    check(type(cells) is tuple and len(cells) == ncells, "closure cell count")
    for cell in cells:
        check(type(cell) is types.CellType, "closure cells")


def plan_fields(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """(kind, status, bound, null_mask, has_exc) of a plan key: format 1 holds them, format 2 packs them."""
    if len(key) == 2:
        fields = unpack_shape(key[1])
        check(fields is not None, "shape")
        assert fields is not None
        return fields
    return key[1:]


SHAPES: dict[tuple[Any, ...], bytes] = {}
MAX_SHAPES = 4096


def shape_bytes(
    kind: int, status: int, bound: tuple[int, ...], null_mask: tuple[bool, ...], has_exc: bool
) -> bytes:
    """The format-2 shape of a captured frame (cached: a run checkpoints the same shapes again)."""
    key = (kind, status, bound, null_mask, has_exc)
    shape = SHAPES.get(key)
    if shape is None:
        if len(SHAPES) >= MAX_SHAPES:
            SHAPES.clear()
        shape = SHAPES[key] = pack_shape(kind, status, bound, null_mask, has_exc)
    return shape


#: (id(code), kind, status, bound, null_mask, has_exc) -> (code, shape, record info text): the
#: parts of a frame record that depend only on its shape, one lookup per checkpointed frame
RECORDS: dict[tuple[Any, ...], tuple[Any, bytes, str]] = {}


def record_parts(key: tuple[Any, ...], code: Any) -> tuple[Any, bytes, str]:
    _, kind, status, bound, null_mask, has_exc = key
    if len(RECORDS) >= MAX_SHAPES:
        RECORDS.clear()
    parts = RECORDS[key] = (
        code,
        shape_bytes(int(kind), status, bound, null_mask, has_exc),
        record_info_text(code, status),
    )
    return parts
