"""Per-suspension facts about a code object: where it can suspend, what is live there.

One analysis serves two masters.  The checkpoint engine uses it to leave dead
locals out of a blob (so a lock or ``re.Match`` used only before an await never
blocks a checkpoint) and to validate a blob's frame against the code it names.
The static validator uses the same :func:`analyze` so that a value it reports
is exactly a value the runtime would have to checkpoint.

Liveness is the classic backward data-flow over the instruction-level control
flow graph, built from :mod:`dis` (so this module touches no frame internals),
with an edge from every instruction covered by an exception-table entry to its
handler.  A local is *live* at a suspension when some path from the resumption
point -- normal resumption or an exception thrown in at the await -- reads it
before writing it.
"""

from __future__ import annotations

import dis
import enum
from collections.abc import Callable
from types import CodeType

import attrs

from agentrt._frames import _diskcache
from agentrt._frames import _layout as L
from agentrt._percode import PerCode

_UNCONDITIONAL = frozenset(
    name
    for name in (
        "JUMP_FORWARD",
        "JUMP_BACKWARD",
        "JUMP_BACKWARD_NO_INTERRUPT",
        "JUMP",
        "JUMP_NO_INTERRUPT",
        "RETURN_VALUE",
        "RETURN_CONST",
        "RAISE_VARARGS",
        "RERAISE",
        "RETURN_GENERATOR_NOT_USED",
    )
)
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_USE_ONE = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST"})
_DEF_ONE = frozenset({"STORE_FAST"})
# Accesses that raise UnboundLocalError on an unbound local instead of reading NULL (3.12+).
_CHECKED = frozenset({"LOAD_FAST_CHECK", "DELETE_FAST"})
# Names whose presence means the function can read any local by name at run time.
_INTROSPECTION = frozenset({"locals", "vars", "eval", "exec", "dir"})


class SiteKind(enum.Enum):
    AWAIT = "await"  # SEND/YIELD_VALUE pair: await, yield from, async for/with
    YIELD = "yield"  # a plain yield in a generator
    ASYNC_YIELD = "async-yield"  # a plain yield in an async generator (value wrapped first)


@attrs.frozen
class Site:
    """One place a frame of this code can be suspended."""

    yield_offset: int  # byte offset of the YIELD_VALUE the frame sits at
    kind: SiteKind
    resume_offset: int  # byte offset the resume code jumps to
    stack_depth: int  # value-stack entries while suspended (the delegate included)
    live_locals: tuple[int, ...]  # localsplus indices of plain locals live after resumption
    lineno: int | None
    # Live locals the code will read with an unchecked load (3.12+): a restored frame
    # must have them bound, or the interpreter would dereference NULL.
    must_bind: tuple[int, ...] = ()


@attrs.frozen
class Analysis:
    code: CodeType
    sites: dict[int, Site]


def _successors(instructions: list[dis.Instruction], index: int) -> list[int]:
    instr = instructions[index]
    targets: list[int] = []
    if instr.opcode in _JUMPS and instr.opname != "SEND_GEN":
        targets.append(instr.argval)
    if instr.opname not in _UNCONDITIONAL and index + 1 < len(instructions):
        targets.append(instructions[index + 1].offset)
    return targets


def _uses_defs(instr: dis.Instruction) -> tuple[tuple[int, ...], tuple[int, ...]]:
    name = instr.opname
    arg = instr.arg
    if name in _USE_ONE:
        return (arg,), ()  # type: ignore[return-value]  # these opcodes always have an int arg
    if name in _DEF_ONE:
        return (), (arg,)  # type: ignore[return-value]  # these opcodes always have an int arg
    if name == "LOAD_FAST_LOAD_FAST":
        return (arg >> 4, arg & 15), ()  # type: ignore[operator]  # these opcodes always have an int arg
    if name == "STORE_FAST_LOAD_FAST":
        # stores first, then loads: a load of the local just stored is not a use from above
        stored, loaded = arg >> 4, arg & 15  # type: ignore[operator]  # these opcodes always have an int arg
        return (() if loaded == stored else (loaded,)), (stored,)
    if name == "STORE_FAST_STORE_FAST":
        return (), (arg >> 4, arg & 15)  # type: ignore[operator]  # these opcodes always have an int arg
    return (), ()


#: Each code's analysis (which holds its code: kept until the bound evicts it).
_ANALYSES: PerCode[Analysis] = PerCode("analyses")


def analyze(code: CodeType, *, persist: bool = True) -> Analysis:
    """Suspension sites of ``code`` with their stack depth, resume target and live locals (cached in
    memory, and with ``persist`` on disk across processes: :mod:`agentrt._frames._diskcache`; the
    validator passes False, since it reads code it must not leave files beside)."""
    cached = _ANALYSES.get(code)
    if cached is None:
        cached = _from_disk(code) if persist else None
        if cached is None:
            cached = _analyze(code)
            if persist:
                records = tuple(_site_record(s) for s in cached.sites.values())
                _diskcache.store(code, "sites", None, records)
        _ANALYSES.put(code, cached)
    return cached


def _site_record(site: Site) -> tuple[object, ...]:
    return (site.yield_offset, site.kind.value, site.resume_offset, site.stack_depth, site.live_locals,
            site.lineno, site.must_bind)  # fmt: skip


def _from_disk(code: CodeType) -> Analysis | None:
    records = _diskcache.load(code, "sites")
    if not isinstance(records, tuple):
        return None
    sites: dict[int, Site] = {}
    try:
        for yield_offset, kind, resume_offset, depth, live, lineno, must in records:
            ints = (yield_offset, resume_offset, depth, *live, *must)
            if not all(type(n) is int for n in ints) or not (lineno is None or type(lineno) is int):
                return None
            sites[yield_offset] = Site(yield_offset, SiteKind(kind), resume_offset, depth, live, lineno, must)
    except (TypeError, ValueError):
        return None
    return Analysis(code, sites)


def _analyze(code: CodeType) -> Analysis:
    instructions, by_offset = _instructions(code)
    handlers = [(e.start, e.end, e.target, e.depth, e.lasti) for e in dis.Bytecode(code).exception_entries]  # type: ignore[attr-defined]  # exception_entries is not in typeshed

    def handler_of(offset: int) -> tuple[int, int, bool] | None:
        for start, end, target, depth, lasti in handlers:
            if start <= offset < end:
                return target, depth, lasti
        return None

    depths = _stack_depths(instructions, by_offset, handler_of)
    live_in = _liveness(instructions, by_offset, handler_of, code.co_nlocals)
    unchecked_in = (
        _liveness(instructions, by_offset, handler_of, code.co_nlocals, unchecked_only=True)
        if L.UNCHECKED_LOADS
        else {}
    )

    # Locals that are also cells hold a cell object in their slot, restored through the closure.
    cell_locals = {i for i, name in enumerate(code.co_varnames) if name in code.co_cellvars}
    sites: dict[int, Site] = {}
    for n, instr in enumerate(instructions):
        if instr.opname != "YIELD_VALUE" or instr.offset not in depths:
            continue
        previous = instructions[n - 1] if n else None
        if previous is not None and previous.opname == "SEND":
            kind = SiteKind.AWAIT
            load_none = instructions[n - 2]
            if load_none.opname != "LOAD_CONST" or load_none.argval is not None:
                continue  # not the await shape we know how to resume; reported on capture
            resume_offset = load_none.offset
        elif previous is not None and _is_async_gen_wrap(previous):
            kind, resume_offset = SiteKind.ASYNC_YIELD, previous.offset
        else:
            kind, resume_offset = SiteKind.YIELD, instr.offset
        after: set[int] = set()
        must: set[int] = set()
        targets = [instructions[by_offset[successor]].offset for successor in _successors(instructions, n)]
        handler = handler_of(instr.offset)
        if handler is not None:
            targets.append(instructions[by_offset[handler[0]]].offset)
        for target in targets:
            after |= live_in.get(target, set())
            must |= unchecked_in.get(target, set())
        sites[instr.offset] = Site(
            yield_offset=instr.offset,
            kind=kind,
            resume_offset=resume_offset,
            stack_depth=depths[instr.offset] - 1,
            live_locals=tuple(sorted(after)),
            lineno=instr.positions.lineno if instr.positions else None,
            must_bind=tuple(sorted((must & after) - cell_locals)),
        )

    reads_by_name = bool(_INTROSPECTION & set(code.co_names))
    if reads_by_name or "super" in code.co_names:
        # locals()/vars()/eval() read any local; zero-argument super() reads the first one.
        everything = tuple(range(code.co_nlocals)) if reads_by_name else (0,)
        sites = {
            offset: attrs.evolve(site, live_locals=tuple(sorted(set(site.live_locals) | set(everything))))
            for offset, site in sites.items()
        }
    return Analysis(code, sites)


def _instructions(code: CodeType) -> tuple[list[dis.Instruction], dict[int, int]]:
    """Real instructions, and the index of the instruction at each byte offset.

    ``EXTENDED_ARG`` prefixes are folded into the instruction they extend; a jump
    may target the prefix, so its offset maps to that instruction as well.
    """
    instructions: list[dis.Instruction] = []
    by_offset: dict[int, int] = {}
    pending: list[int] = []
    for instr in dis.get_instructions(code):
        if instr.opcode == L.EXTENDED_ARG:
            pending.append(instr.offset)
            continue
        for offset in pending:
            by_offset[offset] = len(instructions)
        pending.clear()
        by_offset[instr.offset] = len(instructions)
        instructions.append(instr)
    return instructions, by_offset


def _is_async_gen_wrap(instr: dis.Instruction) -> bool:
    if instr.opname == "ASYNC_GEN_WRAP":
        return True
    return instr.opname == "CALL_INTRINSIC_1" and instr.arg == L.INTRINSIC_ASYNC_GEN_WRAP


def _stack_depths(
    instructions: list[dis.Instruction],
    by_offset: dict[int, int],
    handler_of: Callable[[int], tuple[int, int, bool] | None],
) -> dict[int, int]:
    """Value-stack depth before each reachable instruction (abstract interpretation)."""
    real = {offset: instructions[n].offset for offset, n in by_offset.items()}

    def merge(offset: int, depth: int, source: dis.Instruction) -> None:
        offset = real[offset]
        known = depths.get(offset)
        if known is None:
            depths[offset] = depth
            work.append(offset)
        elif known != depth:
            raise ValueError(
                f"inconsistent stack depth at byte {offset} ({known} vs {depth} from {source.opname})"
            )

    depths: dict[int, int] = {instructions[0].offset: 0}
    work = [instructions[0].offset]
    while work:
        offset = work.pop()
        n = by_offset[offset]
        instr = instructions[n]
        depth = depths[offset]
        handler = handler_of(offset)
        if handler is not None:
            target, handler_depth, lasti = handler
            merge(target, handler_depth + 1 + int(lasti), instr)
        if instr.opname in _UNCONDITIONAL:
            if instr.opcode in _JUMPS:
                merge(instr.argval, depth + _effect(instr, True), instr)
            continue
        if instr.opcode in _JUMPS:
            merge(instr.argval, depth + _effect(instr, True), instr)
        if n + 1 < len(instructions):
            merge(instructions[n + 1].offset, depth + _effect(instr, False), instr)
    return depths


def _effect(instr: dis.Instruction, jump: bool) -> int:
    if instr.opname == "RETURN_GENERATOR":
        # The frame is re-entered with the first sent value on the stack (popped by the
        # POP_TOP that follows); dis reports 0 on 3.11/3.12, which is off by one.
        return 1
    arg = instr.arg if instr.opcode >= dis.HAVE_ARGUMENT else None
    return dis.stack_effect(instr.opcode, arg, jump=jump)


def _liveness(
    instructions: list[dis.Instruction],
    by_offset: dict[int, int],
    handler_of: Callable[[int], tuple[int, int, bool] | None],
    nlocals: int,
    unchecked_only: bool = False,
) -> dict[int, set[int]]:
    """Backward data-flow: the plain locals live on entry to each instruction.

    With ``unchecked_only``, only unchecked loads count as uses: the result is the
    set of locals some path will read without a NULL check before writing them.
    A *checked* access (``LOAD_FAST_CHECK``, ``DELETE_FAST``) ends such a path as a
    store does: past it the local is bound, or it raised ``UnboundLocalError``
    (and the raise goes on to the handler, which is why the exception edge of the
    checking instruction itself is not cut).  This is the compiler's own rule for
    emitting ``LOAD_FAST`` after a ``LOAD_FAST_CHECK`` of the same local, so a
    local may be unbound at an await and still be read twice afterwards.
    """
    uses_defs = [
        _uses_defs(i) if not unchecked_only or i.opname in L.UNCHECKED_LOADS else ((), _uses_defs(i)[1])
        for i in instructions
    ]
    checks: list[frozenset[int]] = [
        frozenset((i.arg,)) if unchecked_only and i.opname in _CHECKED and i.arg is not None else frozenset()
        for i in instructions
    ]
    successors = []
    handlers: list[int | None] = []
    for n, instr in enumerate(instructions):
        succ = _successors(instructions, n)
        successors.append([by_offset[s] for s in succ if s in by_offset])
        handler = handler_of(instr.offset)
        handlers.append(by_offset.get(handler[0]) if handler is not None else None)
    live_in: list[set[int]] = [set() for _ in instructions]
    changed = True
    while changed:
        changed = False
        for n in range(len(instructions) - 1, -1, -1):
            out: set[int] = set()
            for s in successors[n]:
                out |= live_in[s]
            uses, defs = uses_defs[n]
            if checks[n]:
                out -= checks[n]
            handler_at = handlers[n]
            if handler_at is not None:
                out |= live_in[handler_at]
            new = (out - set(defs)) | {u for u in uses if u < nlocals}
            if new != live_in[n]:
                live_in[n] = new
                changed = True
    return {instr.offset: live_in[n] for n, instr in enumerate(instructions)}
