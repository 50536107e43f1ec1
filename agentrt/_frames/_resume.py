"""Frame states -> resume code objects -> fresh coroutines and generators.

A suspended frame cannot be rebuilt by writing into a new frame's memory safely,
so agentrt synthesizes, per suspension site, a *resume code object*: the original
code with

* one argument (the frame state list) instead of the original parameters,
* the original cell objects of its cell variables handed in through the closure
  (under hidden free-variable names) and stored into the cell variables' slots by
  the prologue, so the restored function stays shared with its closures while its
  cell variables stay cell variables (an inlined comprehension's ``MAKE_CELL`` /
  ``LOAD_FAST_AND_CLEAR`` on them, and ``UnboundLocalError`` for an empty one,
  behave as in the original),
* a prologue right after ``RESUME 0`` that restores the exception being handled,
  the live locals and the value stack (NULL slots included), then jumps to the
  instruction that re-enters the suspended ``await`` / ``yield``.

Calling the resume function yields a new, unstarted coroutine (or generator);
its first ``send(None)`` runs only the prologue and suspends again at the same
place.  The code keeps the original name, qualname, filename and line table, so
tracebacks and pdb show the agent's own source.  Resume code is cached per
(code, site, which locals are bound, which stack slots are NULL, exception) and
remembers how its byte offsets map back to the original code, so a restored
frame can be checkpointed again.
"""

from __future__ import annotations

import collections
import dis
import inspect
import marshal
import threading
import types
from types import CodeType

import attrs
from bytecode import Bytecode, CellVar, FreeVar, Instr, Label

from agentrt._frames import _diskcache
from agentrt._frames import _layout as L
from agentrt._frames._errors import inconsistency
from agentrt._frames._liveness import Site, SiteKind
from agentrt._percode import PerCode

STATE_ARG = ".agentrt_state"
HIDDEN_CELL = ".agentrt_cell "  # closure name under which a cell variable's original cell comes in
_VARARGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


@attrs.frozen
class ResumeShape:
    """Everything that changes the synthesized code for one restored frame."""

    code: CodeType
    site: Site | None  # None: the frame never started
    bound_locals: tuple[int, ...]  # original co_varnames indices restored from the state
    null_mask: tuple[bool, ...]  # one entry per value-stack slot, True for NULL
    has_exc: bool  # an exception is being handled at the suspension


@attrs.frozen
class ResumeCode:
    code: CodeType  # the synthesized code object
    original: CodeType
    closure_names: tuple[str, ...]  # co_freevars of ``code``: original free vars then hidden cell vars
    original_offset: dict[int, int]  # byte offset in ``code`` -> byte offset in ``original``
    shape: ResumeShape


# Code objects compare and hash by value (deeply); these caches key on identity instead.
# ``_CACHE`` holds its resume codes (so an id in its keys is never reused while the entry
# exists) and is bounded, least recently used first out: a forged blob can name many
# shapes, and so can many blobs.  ``_BY_CODE`` maps a resume code back to the agent's code
# for as long as the code object lives -- a frame running it may outlive its cache entry --
# and holds it only weakly, so it never keeps one alive.
MAX_RESUME_CODES = 1024
_CACHE: collections.OrderedDict[tuple[object, ...], ResumeCode] = collections.OrderedDict()
_BY_CODE: PerCode[tuple[CodeType, tuple[str, ...], dict[int, int], ResumeShape]] = PerCode("resume codes")
_LOCK = threading.Lock()


def resume_code(shape: ResumeShape) -> ResumeCode:
    """The (cached) resume code for ``shape``."""
    site = shape.site.yield_offset if shape.site is not None else None
    key = (id(shape.code), site, shape.bound_locals, shape.null_mask, shape.has_exc)
    cached = _CACHE.get(key)
    if cached is not None and cached.original is shape.code:
        with _LOCK:
            if key in _CACHE:
                _CACHE.move_to_end(key)
        return cached
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is None or cached.original is not shape.code:
            cached = _from_disk(shape, key[1:])
            if cached is None:
                cached = _synthesize(shape)
                offsets = tuple(sorted(cached.original_offset.items()))
                _diskcache.store(shape.code, "resume", key[1:], (cached.code, cached.closure_names, offsets))
            _CACHE[key] = cached
            while len(_CACHE) > MAX_RESUME_CODES:
                _CACHE.popitem(last=False)
            _remember(cached)
    return cached


def _remember(resumed: ResumeCode) -> None:
    _BY_CODE.put(
        resumed.code, (resumed.original, resumed.closure_names, resumed.original_offset, resumed.shape)
    )


def _own_float(const: object) -> object:
    """A float constant as a new object of the same bits (marshal, as the disk cache loads it)."""
    return marshal.loads(marshal.dumps(const)) if type(const) is float else const


def forget(resumed: ResumeCode) -> None:
    """Drop ``resumed`` from the cache (its load was refused); frames running it still map back."""
    shape = resumed.shape
    site = shape.site.yield_offset if shape.site is not None else None
    key = (id(shape.code), site, shape.bound_locals, shape.null_mask, shape.has_exc)
    with _LOCK:
        if _CACHE.get(key) is resumed:
            del _CACHE[key]


def _from_disk(shape: ResumeShape, extra: tuple[object, ...]) -> ResumeCode | None:
    """A resume code synthesized by an earlier process, if it is there and looks like one of ours."""
    record = _diskcache.load(shape.code, "resume", extra)
    try:
        code, closure_names, offsets = record
    except (TypeError, ValueError):
        return None
    original = shape.code
    if not (
        type(code) is CodeType
        and (code.co_qualname, code.co_filename, code.co_firstlineno)
        == (original.co_qualname, original.co_filename, original.co_firstlineno)
        and code.co_varnames[:1] == (STATE_ARG,)
        and code.co_freevars == closure_names
        and type(offsets) is tuple
        and all(type(a) is int and type(b) is int for a, b in offsets)
    ):
        return None
    return ResumeCode(code, original, closure_names, dict(offsets), shape)


def as_original(code: CodeType) -> ResumeCode | None:
    """If ``code`` is synthesized resume code, how it maps back to the agent's code."""
    entry = _BY_CODE.get(code)
    if entry is None:
        return None
    return ResumeCode(code, *entry)


def _synthesize(shape: ResumeShape) -> ResumeCode:
    original = shape.code
    bc = Bytecode.from_code(original, conserve_exception_block_stackdepth=True)
    original_instrs = [ins for ins in bc if isinstance(ins, Instr)]
    original_dis = [i for i in dis.get_instructions(original) if i.opcode != L.EXTENDED_ARG]
    if [i.name for i in original_instrs] != [i.opname for i in original_dis]:
        raise inconsistency("the bytecode library disagrees with dis about its instructions", original)
    offset_of = {id(ins): d.offset for ins, d in zip(original_instrs, original_dis, strict=True)}
    target_instr = None
    if shape.site is not None:
        target_offset = shape.site.resume_offset
        target_instr = next(
            ins for ins, d in zip(original_instrs, original_dis, strict=True) if d.offset == target_offset
        )

    cell_names = tuple(original.co_cellvars)
    closure_names = tuple(original.co_freevars) + tuple(HIDDEN_CELL + name for name in cell_names)
    prelude_end = next(
        (
            n
            for n, item in enumerate(bc)
            if isinstance(item, Instr) and item.name == "RESUME" and item.arg == 0
        ),
        len(bc),
    )
    body: list[object] = []
    copy_free_vars_seen = False
    for n, item in enumerate(bc):
        if isinstance(item, Instr):
            if item.name == "MAKE_CELL" and n < prelude_end:
                continue  # the prologue puts the original cells in these slots
            if item.name == "COPY_FREE_VARS":
                item.arg = len(closure_names)
                copy_free_vars_seen = True
        body.append(item)
    if closure_names and not copy_free_vars_seen:
        body.insert(0, Instr("COPY_FREE_VARS", len(closure_names)))

    resume_at = next(
        (
            n
            for n, item in enumerate(body)
            if isinstance(item, Instr) and item.name == "RESUME" and item.arg == 0
        ),
        None,
    )
    if resume_at is None:
        raise inconsistency("the code has no RESUME 0 instruction to resume after", original)
    lineno = (shape.site.lineno if shape.site else None) or original.co_firstlineno
    prologue = _prologue(shape, lineno)
    if target_instr is not None:
        label = Label()
        prologue.append(Instr("JUMP_FORWARD", label, lineno=lineno))
        target_at = next(n for n, item in enumerate(body) if item is target_instr)
        if target_at <= resume_at:
            raise inconsistency("the resume target precedes RESUME 0", original, lineno)
        body.insert(target_at, label)
    body[resume_at + 1 : resume_at + 1] = prologue

    bc.clear()
    bc.extend(body)
    bc.argnames = [STATE_ARG]
    bc.argcount = 1
    bc.posonlyargcount = 0
    bc.kwonlyargcount = 0
    bc.cellvars = list(cell_names)
    bc.freevars = list(closure_names)
    bc.flags = bc.flags & ~_VARARGS
    extra = 4 + len(shape.null_mask)
    try:
        code = bc.to_code(stacksize=original.co_stacksize + extra, compute_exception_stack_depths=False)
    except Exception as error:  # the bytecode library raises assorted types here
        raise inconsistency(
            f"cannot assemble resume code ({type(error).__name__}: {error})", original, lineno
        ) from error
    if code.co_freevars != closure_names:
        raise inconsistency("the resume code reordered its free variables", original, lineno)
    # its own float constants, as code loaded from the disk cache has: the original's would count as
    # a second holder of each constant float a frame holds, which a checkpoint then wraps (_reduce)
    if any(type(const) is float for const in code.co_consts):
        code = code.replace(co_consts=tuple(map(_own_float, code.co_consts)))

    resumed_dis = [i for i in dis.get_instructions(code) if i.opcode != L.EXTENDED_ARG]
    resumed_instrs = [ins for ins in bc if isinstance(ins, Instr)]
    if len(resumed_dis) != len(resumed_instrs):
        raise inconsistency("the resume code does not line up with its source", original, lineno)
    original_offset = {
        d.offset: offset_of[id(ins)]
        for ins, d in zip(resumed_instrs, resumed_dis, strict=True)
        if id(ins) in offset_of
    }
    return ResumeCode(code, original, closure_names, original_offset, shape)


def _prologue(shape: ResumeShape, lineno: int) -> list[Instr]:
    varnames = shape.code.co_varnames

    def item(index: int) -> list[Instr]:
        return [
            Instr("LOAD_FAST", STATE_ARG, lineno=lineno),
            Instr("LOAD_CONST", index, lineno=lineno),
            Instr("BINARY_SUBSCR", lineno=lineno),
        ]

    out: list[Instr] = []
    for name in shape.code.co_cellvars:
        # The original cell object, handed in through the closure under a hidden name, goes into
        # the cell variable's own slot: the code keeps its cell variables (an empty one raises
        # UnboundLocalError, as in the original, not NameError as a free variable would).
        hidden = FreeVar(HIDDEN_CELL + name)
        if L.LOCAL_OPS_TAKE_CELLS:
            out += [
                Instr("LOAD_FAST", hidden, lineno=lineno),
                Instr("STORE_FAST", CellVar(name), lineno=lineno),
            ]
        else:
            out += [Instr("LOAD_CLOSURE", hidden, lineno=lineno), Instr("STORE_FAST", name, lineno=lineno)]
    if shape.has_exc:
        # Make the restored exception "the one being handled" (sys.exc_info(), bare raise).
        out += item(0)
        out += [
            Instr("PUSH_EXC_INFO", lineno=lineno),
            Instr("POP_TOP", lineno=lineno),
            Instr("POP_TOP", lineno=lineno),
        ]
    index = 1
    for local in shape.bound_locals:
        out += item(index)
        out.append(Instr("STORE_FAST", varnames[local], lineno=lineno))
        index += 1
    for is_null in shape.null_mask:
        if is_null:
            out.append(Instr("PUSH_NULL", lineno=lineno))
        else:
            out += item(index)
            index += 1
    out += [Instr("LOAD_CONST", None, lineno=lineno), Instr("STORE_FAST", STATE_ARG, lineno=lineno)]  # type: ignore[arg-type]  # bytecode's stubs leave out None, a valid LOAD_CONST arg
    if shape.site is not None and shape.site.kind is not SiteKind.AWAIT:
        out.append(Instr("LOAD_CONST", None, lineno=lineno))  # type: ignore[arg-type]  # as above; the value already yielded
    return out


def new_frame_object(
    resumed: ResumeCode,
    module_globals: dict[str, object],
    closure: tuple[types.CellType, ...],
    state: list[object],
) -> object:
    """Call the resume function: a fresh, unstarted coroutine / generator / async generator."""
    function = types.FunctionType(resumed.code, module_globals, resumed.original.co_name, None, closure)
    function.__qualname__ = resumed.original.co_qualname
    return function(state)
