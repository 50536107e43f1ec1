"""Build a :class:`Dump` from a blob or a live chain, without stepping anything.

A blob is decoded with ``agentrt._codec.loads(..., describe=True)``: each frame it
holds is validated exactly as a restore would validate it, and comes back as a
:class:`FrameRecord` -- the record's code, site, locals and value stack as data.
No resume code is built, no coroutine is made, nothing is primed or run: a dump
renders from the decoded records only.  A live chain (``Machine``) is read with
the checkpoint engine's own ``capture``.  Either way the chain is followed through
its delegates -- the awaited object on top of the value stack at an ``await`` --
down to the innermost ``suspend`` trap, whose payload is the pending request.
"""

from __future__ import annotations

import linecache
import types
from collections.abc import Iterable
from typing import Any  # Any: a checkpoint holds any Python value

from agentrt import _codec
from agentrt._codec import Requirement, extension_for_type, unsigned_allowed
from agentrt._context import labelled, split_root
from agentrt._frames import (
    FINISHED,
    NOT_STARTED,
    AnextRecord,
    FrameRecord,
    FrameState,
    Kind,
    SiteKind,
    StepRecord,
    capture,
    describe_slots,
    is_stored_trap,
    is_trap,
    record_owner,
    trap_payload,
)
from agentrt.exceptions import IncompatibleBlob
from agentrt.inspection._model import (
    CodeEntry,
    Dump,
    FrameView,
    HeaderView,
    Source,
    SourceLine,
    StackEntry,
    Variable,
)
from agentrt.inspection._values import Limits, ValueRenderer, ValueView, iterator_position, type_name
from agentrt.keys import Keyring, project_keyring
from agentrt.lowlevel import _Trap as _Trap  # a blob names the stored trap agentrt.lowlevel:_Trap

__all__ = ["dump_blob", "dump_chain", "header_view"]

LIVE_FRAME_TYPES = (types.CoroutineType, types.GeneratorType, types.AsyncGeneratorType)
FRAME_TYPES = (*LIVE_FRAME_TYPES, FrameRecord)
_KIND_NAMES = {
    Kind.COROUTINE: "coroutine",
    Kind.GENERATOR: "generator",
    Kind.ASYNC_GENERATOR: "async generator",
}
CONTEXT_LINES = 2


def header_view(blob: bytes) -> HeaderView:
    """The blob's header (``CorruptBlob`` / ``IncompatibleBlob`` if even that cannot be read)."""
    header = _codec.read_header(blob)
    return HeaderView(
        header.format_version,
        header.python,
        header.codec,
        header.payload_size,
        tuple(CodeEntry(c.module, c.qualname, c.digest) for c in header.codes),
    )


def dump_blob(
    blob: bytes,
    source: Source | None = None,
    *,
    allow_modules: Iterable[str] = (),
    limits: Limits | None = None,
    allow_unsigned: bool = False,
    keyring: Keyring | None = None,
    bind: tuple[str | None, str | None, int | None] | None = None,
) -> Dump:
    """Decode ``blob`` and describe it.

    ``CorruptBlob`` propagates; it is also what an unsigned blob gets unless
    ``allow_unsigned`` (or ``AGENTRT_ALLOW_UNSIGNED=1``).  The blob is verified with
    ``keyring`` (default: the project's keys); ``bind`` (kind, run id, sequence) is
    what it must have been signed for.  When the blob is genuine but cannot be
    decoded here (another Python minor, changed code, a module that is not
    imported) the dump has the header and ``frames_error`` saying why.
    """
    source = source or Source("bytes")
    header = header_view(blob)
    ring = keyring if keyring is not None else project_keyring()
    kind, run_id, seq = bind if bind is not None else (None, None, None)
    require = Requirement(
        signed=not unsigned_allowed(allow_unsigned),
        kind=kind,
        run_id=run_id,
        seq=seq,
        unsigned_hint="agentrt dump --allow-unsigned",
    )
    session: list[Any] = []
    try:
        obj = _codec.loads(
            blob,
            allow_modules=tuple(allow_modules),
            keys=ring.read if ring is not None else (),
            key_source=ring.source if ring is not None else "",
            require=require,
            session=session,
            describe=True,
        )
    except IncompatibleBlob as exc:
        return Dump(source, header, None, frames_error=str(exc))
    try:
        chain, carried = split_root(obj)  # the chain, and the context variables the run set, if any
        if isinstance(chain, FRAME_TYPES):
            context = labelled(carried) if carried is not None else ()
            return _attach(dump_chain(chain, source, limits=limits, context=context), header)
        renderer = _renderer(_FrameTable(), limits)
        return Dump(source, header, (), value=renderer.view(obj, "", "value"))
    finally:
        for ctx in session:
            ctx.refuse()  # a dump keeps nothing (and a described load built no frame to begin with)


def _attach(dump: Dump, header: HeaderView) -> Dump:
    import attrs

    return attrs.evolve(dump, header=header)


def dump_chain(
    obj: object,
    source: Source | None = None,
    *,
    limits: Limits | None = None,
    context: Iterable[tuple[str, object]] = (),
) -> Dump:
    """Describe the suspended chain starting at coroutine (or generator) ``obj`` -- live or restored --
    and the ``context`` variables its checkpoint carries, as (name, value).

    Never raises for a frame it cannot read: that frame gets an ``error`` and the
    chain stops there ("as far as it can be read").
    """
    source = source or Source("machine")
    table = _FrameTable()
    chain: list[tuple[object, FrameState | None, str | None]] = []
    pending: object = _NO_PENDING
    awaiting_other: object = _NO_PENDING
    current: object = obj
    while isinstance(current, FRAME_TYPES) and id(current) not in table.index:
        table.add(current, None)
        try:
            state = _state_of(current)
        except Exception as exc:
            chain.append((current, None, f"{type(exc).__name__}: {exc}"))
            break
        chain.append((current, state, None))
        delegate = _delegate(state)
        if delegate is _NO_PENDING:
            break
        if _is_trap(delegate):
            pending = trap_payload(delegate)
            break
        if not isinstance(delegate, FRAME_TYPES):
            awaiting_other = delegate
            break
        current = delegate
    renderer = _renderer(table, limits)
    frames: list[FrameView] = []
    for n, (frame_obj, frame_state, error) in enumerate(chain):
        last = n == len(chain) - 1
        if last and pending is not _NO_PENDING:
            awaiting = "pending request"
        elif not last:
            awaiting = f"frame {n + 1}"
        elif awaiting_other is not _NO_PENDING:
            awaiting = (
                f"an object agentrt does not follow ({type_name(awaiting_other)}, top of the value stack)"
            )
        else:
            awaiting = None
        frames.append(_frame_view(n, frame_obj, frame_state, error, renderer, awaiting, None))
    pending_view = None
    summary = None
    if pending is not _NO_PENDING:
        pending_view = renderer.view(pending, "", "pending")
        summary = _summary(pending)
    variables = tuple(Variable(name, renderer.view(value, "context", name)) for name, value in context)
    # Frames the chain holds in locals or on stacks (a generator being iterated, ...).
    while table.queue:
        held, where = table.queue.pop(0)
        index = table.index[id(held)]
        held_state: FrameState | None = None
        error = None
        try:
            held_state = _state_of(held)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        awaiting = _held_awaiting(held_state, table)
        frames.append(_frame_view(index, held, held_state, error, renderer, awaiting, where))
    return Dump(source, None, tuple(frames), pending=pending_view, pending_summary=summary, context=variables)


_NO_PENDING = object()


def _state_of(obj: object) -> FrameState:
    """A frame record's decoded state, or a live frame's capture."""
    if type(obj) is FrameRecord:
        if obj.state is None:
            raise ValueError("the frame record's state was never decoded")
        return obj.state
    return capture(obj)


class _FrameTable:
    """Frame numbers: the chain first (0 = outermost), then held frames as they are met."""

    def __init__(self) -> None:
        self.index: dict[int, int] = {}
        self.objects: list[object] = []
        self.queue: list[tuple[object, str]] = []

    def add(self, obj: object, where: str | None) -> int:
        number = self.index.get(id(obj))
        if number is None:
            number = self.index[id(obj)] = len(self.objects)
            self.objects.append(obj)
            if where is not None:
                self.queue.append((obj, where))
        return number

    def ref(self, obj: object, where: str) -> str:
        number = self.add(obj, where)
        return f"<{_describe_object(obj)} → frame {number}>"


def _renderer(table: _FrameTable, limits: Limits | None) -> ValueRenderer:
    def special(obj: object, where: str) -> str | None:
        if type(obj) is FrameRecord:
            return table.ref(obj, where)
        if type(obj) in (StepRecord, AnextRecord):
            owner = record_owner(obj)
            if type(obj) is StepRecord or type(obj.wrapped) is FrameRecord:  # type: ignore[attr-defined]  # AnextRecord has .wrapped; the `is StepRecord` test narrows nothing for mypy
                return f"<next step of {table.ref(owner, where)[1:-1]}>"
            return f"<{type_name(obj)} object>"
        # The awaitable of one ``async for`` step / ``asend``: show the generator it drives.
        extension = extension_for_type(type(obj))
        if extension is None:
            return None
        for _label, child, _location in extension.children(obj):
            if isinstance(child, FRAME_TYPES):
                return f"<next step of {table.ref(child, where)[1:-1]}>"
        return None

    return ValueRenderer(table.ref, _is_trap, limits, special)


def _is_trap(obj: object) -> bool:
    """A ``suspend()`` trap: live (a generator that has not finished) or as a blob stores it."""
    return is_stored_trap(obj) or (is_trap(obj) and obj.gi_frame is not None)  # type: ignore[attr-defined]  # is_trap(): a generator


def _describe_object(obj: object) -> str:
    code = _code_of(obj)
    kind_of = _kind_of(obj)
    kind = _KIND_NAMES[kind_of if kind_of is not None else Kind.ASYNC_GENERATOR]
    return f"{kind} {code.co_qualname}" if code is not None else kind


def _code_of(obj: object) -> types.CodeType | None:
    if type(obj) is FrameRecord:
        return obj.code
    for attr in ("cr_code", "gi_code", "ag_code"):
        code = getattr(obj, attr, None)
        if isinstance(code, types.CodeType):
            return code
    return None


def _delegate(state: FrameState) -> object:
    """The object a frame suspended at an ``await`` / ``yield from`` waits on (``_NO_PENDING`` if none)."""
    site = state.site
    if site is None or site.kind is not SiteKind.AWAIT or not state.stack_values or state.null_mask[-1]:
        return _NO_PENDING
    delegate = state.stack_values[-1]
    if type(delegate) is StepRecord or (
        type(delegate) is AnextRecord and type(delegate.wrapped) is FrameRecord
    ):
        return record_owner(delegate)  # as the live awaitables below are followed
    extension = extension_for_type(type(delegate))
    if extension is not None and not isinstance(delegate, FRAME_TYPES):
        # An async generator's asend/__anext__ awaitable: follow it to the generator.
        for _label, child, _location in extension.children(delegate):
            if isinstance(child, FRAME_TYPES):
                return child
    return delegate


def _held_awaiting(state: FrameState | None, table: _FrameTable) -> str | None:
    if state is None:
        return None
    delegate = _delegate(state)
    if delegate is _NO_PENDING:
        return None
    if _is_trap(delegate):
        return "a suspend() trap"
    if isinstance(delegate, FRAME_TYPES):
        return f"frame {table.index[id(delegate)]}" if id(delegate) in table.index else None
    return None


def _summary(payload: object) -> Any:
    """The runtime's JSON description of a request payload (None for plain ``suspend`` payloads)."""
    if not type(payload).__module__.startswith("agentrt."):
        return None
    try:
        from agentrt._runtime.pending import summarize
    except Exception:  # the runtime is optional for a dump
        return None
    try:
        summary = summarize(payload)
    except Exception:
        return None
    return None if summary.get("kind") == "unknown" else summary


def _source_lines(filename: str, lineno: int | None) -> tuple[SourceLine, ...]:
    if not lineno:
        return ()
    lines = []
    for n in range(max(1, lineno - CONTEXT_LINES), lineno + CONTEXT_LINES + 1):
        text = linecache.getline(filename, n)
        if not text and n > lineno:
            break
        lines.append(SourceLine(n, text.rstrip("\n"), n == lineno))
    return tuple(lines) if any(line.text for line in lines) else ()


def _frame_view(
    index: int,
    obj: object,
    state: FrameState | None,
    error: str | None,
    renderer: ValueRenderer,
    awaiting: str | None,
    held_by: str | None,
) -> FrameView:
    kind_of = _kind_of(obj)
    kind = _KIND_NAMES[kind_of] if kind_of is not None else "frame"
    if state is None:
        code = _code_of(obj)
        return FrameView(
            index,
            kind,
            "",
            code.co_qualname if code else "?",
            code.co_filename if code else "?",
            None,
            "unreadable",
            None,
            None,
            error=error,
            held_by=held_by,
            code=code,
        )
    code = state.code
    scope = f"frame {index}"
    if state.status == FINISHED:
        return FrameView(
            index, kind, state.module, code.co_qualname, code.co_filename, None, "finished", None, None,
            held_by=held_by, code=code,
        )  # fmt: skip
    site = state.site
    lineno = site.lineno if site is not None else code.co_firstlineno
    variables = [
        Variable(code.co_varnames[i], renderer.view(v, scope, f"locals[{code.co_varnames[i]!r}]"))
        for i, v in zip(state.bound_locals, state.local_values, strict=True)
    ]
    bound = set(state.bound_locals)
    cell_names = set(code.co_cellvars) | set(code.co_freevars)
    if site is not None:
        live = set(site.live_locals)
        dead = tuple(n for i, n in enumerate(code.co_varnames) if i not in live and n not in cell_names)
        unbound = tuple(n for i, n in enumerate(code.co_varnames) if i in live and i not in bound)
    else:
        dead = ()
        unbound = tuple(
            n
            for i, n in enumerate(code.co_varnames[: _argcount(code)])
            if i not in bound and n not in cell_names
        )
    cells = []
    for name, cell in zip(code.co_freevars + code.co_cellvars, state.cells, strict=False):
        try:
            contents = cell.cell_contents  # type: ignore[attr-defined]  # a types.CellType, typed object in FrameState
        except ValueError:
            cells.append(Variable(name, None))
            continue
        cells.append(Variable(name, renderer.view(contents, scope, f"cells[{name!r}]")))
    stack = _stack_entries(state, renderer, scope)
    exception = renderer.view(state.exc, scope, "exception") if state.exc is not None else None
    return FrameView(
        index,
        kind,
        state.module,
        code.co_qualname,
        code.co_filename,
        lineno,
        "not started" if state.status == NOT_STARTED else "suspended",
        site.kind.value if site is not None else None,
        site.yield_offset if site is not None else None,
        _source_lines(code.co_filename, lineno),
        tuple(variables),
        dead,
        unbound,
        tuple(cells),
        stack,
        exception,
        awaiting,
        held_by,
        None,
        code,
    )


def _argcount(code: types.CodeType) -> int:
    return code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)


def _kind_of(obj: object) -> Kind | None:
    if type(obj) is FrameRecord:
        return obj.kind
    return {
        types.CoroutineType: Kind.COROUTINE,
        types.GeneratorType: Kind.GENERATOR,
        types.AsyncGeneratorType: Kind.ASYNC_GENERATOR,
    }.get(type(obj))


def _stack_entries(state: FrameState, renderer: ValueRenderer, scope: str) -> tuple[StackEntry, ...]:
    site = state.site
    if site is None or not state.null_mask:
        return ()
    depth = len(state.null_mask)
    values_iter = iter(state.stack_values)
    by_position: list[object] = [None if null else next(values_iter) for null in state.null_mask]
    slots = describe_slots(
        state.code, site.yield_offset, depth, state.null_mask, site.kind is SiteKind.AWAIT, by_position
    )
    entries = []
    for slot in slots:
        null = state.null_mask[slot.position]
        value: ValueView | None = None
        iterator = None
        if not null:
            item = by_position[slot.position]
            value = renderer.view(item, scope, f"stack[{slot.position}]")
            if slot.role in ("for_iterator", "async_for_iterator"):
                iterator = iterator_position(item)
        label = slot.label
        if null and slot.role not in ("call_null",):
            label = f"NULL — {label}" if slot.role != "null" else label
        entries.append(
            StackEntry(slot.position, null, slot.role, label, value, slot.producer, slot.consumer, iterator)
        )
    return tuple(entries)
