"""Moving a suspended frame to the new version of its function.

:func:`plan_move` judges one frame record (read from a blob without building it)
against the code now loaded, and says whether the frame resumes unchanged,
migrates, needs a user migration, or is blocked -- and why.  The rules:

* the old site is found in the new code by the source of the suspending
  expression (and its occurrence among identical ones); a site whose source
  changed is matched by control-flow position only when the function still has
  the same number of suspension sites, and then only a user migration may use it;
* the value stack beneath the awaited object must have the same shape (the same
  enclosing ``for`` / ``with`` / ``except`` entries, the same pending operands),
  because its entries are carried over as they are;
* every local live at the new site must be bound in the old frame (by name), or
  be supplied by a user migration; closure variables must keep their names.

:class:`MigratingFrames` then performs the move while a blob is decoded: it
rewrites each frame record to the new code's site and locals and hands it to the
ordinary frame extension, whose resume-code synthesis builds the new frame.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from types import CodeType
from typing import Any  # Any: frame records hold any Python object

import attrs

from agentrt._codec import DecodeContext, Location
from agentrt._frames._capture import FINISHED, NOT_STARTED
from agentrt._frames._engine import FrameObjects
from agentrt._frames._liveness import Site, analyze
from agentrt._frames._shape import record_fields
from agentrt._frames._sites import RecordInfo, SiteRef, normalized, site_refs
from agentrt.exceptions import IncompatibleBlob

__all__ = ["FrameRecord", "MigratingFrames", "Move", "MovedFrame", "Verdict", "plan_move"]


class Verdict(enum.IntEnum):
    """Ordered from best to worst: a run's verdict is its worst frame's."""

    UNCHANGED = 0
    MIGRATES = 1
    NEEDS_MIGRATION = 2
    BLOCKED = 3

    @property
    def text(self) -> str:
        return self.name.lower().replace("_", "-")


@attrs.frozen
class FrameRecord:
    """The plain-data fields of one frame record in a blob (nothing built)."""

    kind: int
    code_index: int
    status: int
    bound: tuple[int, ...]
    null_mask: tuple[bool, ...]
    has_exc: bool
    ncells: int
    info: RecordInfo | None

    @classmethod
    def parse(cls, args: tuple[Any, ...]) -> FrameRecord | None:
        """None for a finished frame or a record this agentrt cannot read (format 1 or 2)."""
        fields = record_fields(args)
        if fields is None or fields[2] == FINISHED:
            return None
        kind, index, status, bound, null_mask, has_exc, cells, raw_info = fields
        if not (type(kind) is int and type(index) is int and type(status) is int and type(has_exc) is bool):
            return None
        if type(bound) is not tuple or not all(type(i) is int for i in bound):
            return None
        if type(null_mask) is not tuple or not all(type(b) is bool for b in null_mask):
            return None
        if type(cells) is not tuple:
            return None
        info = RecordInfo.from_record(raw_info) if raw_info is not None else None
        return cls(kind, index, status, bound, null_mask, has_exc, len(cells), info)

    def bound_names(self) -> tuple[str, ...]:
        assert self.info is not None
        names = self.info.varnames
        return tuple(names[i] for i in self.bound if 0 <= i < len(names))


@attrs.frozen
class Move:
    """The verdict on one frame, and how to move it when it moves."""

    verdict: Verdict
    reason: str
    site: str  # the old site's label ("" for a frame that has not started)
    target: Site | None = None  # the site in the new code
    new_bound: tuple[int, ...] = ()  # new code's local indices the moved frame binds
    cell_order: tuple[int, ...] = ()  # for each new cell, its index among the record's cells
    needs_user_migration: bool = False  # only a matching @agentrt.migrate may perform it


def plan_move(
    record: FrameRecord, old_digest: str, new_code: CodeType, new_digest: str, has_migration: bool
) -> Move:
    """Judge one frame record against ``new_code`` (the code of the same module:qualname now).

    ``has_migration``: a user migration is registered for this frame (function, digest, site).
    """
    info = record.info
    site_label = info.site.label() if info is not None and info.site is not None else ""
    if old_digest == new_digest:
        return Move(Verdict.UNCHANGED, "code unchanged", site_label)
    if info is None:
        return Move(
            Verdict.BLOCKED,
            "the checkpoint was written before agentrt recorded await sites and local names; "
            "finish this run with the code that started it",
            site_label,
        )
    blocked = _cells_blocker(info, new_code)
    if blocked:
        return Move(Verdict.BLOCKED, blocked, site_label)
    cell_order = tuple(info.cellnames.index(name) for name in new_code.co_freevars + new_code.co_cellvars)
    if record.status == NOT_STARTED:
        return _plan_unstarted(record, info, new_code, cell_order)
    assert info.site is not None
    old = info.site
    target, how = _find_site(old, new_code)
    if target is None:
        return Move(Verdict.BLOCKED, how, site_label)
    new_ref = site_refs(new_code)[target.yield_offset]
    if new_ref.stack != old.stack:
        return Move(
            Verdict.BLOCKED,
            f"the value stack at the {old.kind} differs: it held [{', '.join(old.stack)}] and the new code "
            f"holds [{', '.join(new_ref.stack)}] (an enclosing for/with block or a pending operand was "
            "added or removed); finish this run with the old code",
            site_label,
        )
    by_position = how.startswith("matched by position")
    old_bound = dict(zip(record.bound_names(), record.bound, strict=False))
    live_names = [new_code.co_varnames[i] for i in target.live_locals if i < new_code.co_nlocals]
    missing = [name for name in live_names if name not in old_bound]
    where = f", now at line {target.lineno}" if target.lineno is not None else ""
    if has_migration:
        return Move(
            Verdict.MIGRATES,
            f"by the registered migration ({how}); "
            + (f"it must supply {', '.join(missing)}" if missing else "the old frame has every live local"),
            site_label,
            target,
            tuple(i for i in target.live_locals if i < new_code.co_nlocals),
            cell_order,
            needs_user_migration=True,
        )
    problems = []
    if by_position:
        problems.append(how)
    if missing:
        problems.append(
            f"local(s) {', '.join(missing)} live at the new site are not in the old frame"
            f" (it has {', '.join(sorted(old_bound)) or 'none'})"
        )
    if problems:
        return Move(
            Verdict.NEEDS_MIGRATION,
            "; ".join(problems)
            + f"; add @agentrt.migrate({new_code.co_qualname}, from_digest={old_digest[:12]!r}, "
            f"site={old.ordinal + 1}) returning the new locals",
            site_label,
            target,
            needs_user_migration=True,
        )
    # every must-bind local is live, and every live one is bound: the restore's own checks will pass
    new_bound = tuple(i for i in target.live_locals if i < new_code.co_nlocals)
    return Move(Verdict.MIGRATES, f"automatically ({how}{where})", site_label, target, new_bound, cell_order)


def _plan_unstarted(
    record: FrameRecord, info: RecordInfo, new_code: CodeType, cell_order: tuple[int, ...]
) -> Move:
    names = set(record.bound_names())
    nparams = new_code.co_argcount + new_code.co_kwonlyargcount
    nparams += bool(new_code.co_flags & 0x04) + bool(new_code.co_flags & 0x08)  # *args, **kwargs
    params = new_code.co_varnames[:nparams]
    missing = [p for p in params if p not in names]
    if missing:
        return Move(
            Verdict.BLOCKED,
            f"a call not started yet lacks the new parameter(s) {', '.join(missing)}",
            "",
        )
    return Move(
        Verdict.MIGRATES,
        "not started yet: starts the new code with the same arguments",
        "",
        None,
        tuple(range(nparams)),
        cell_order,
    )


def _cells_blocker(info: RecordInfo, new_code: CodeType) -> str:
    old, new = set(info.cellnames), set(new_code.co_freevars + new_code.co_cellvars)
    if old == new and len(info.cellnames) == len(new_code.co_freevars + new_code.co_cellvars):
        return ""
    before, after = ", ".join(sorted(old)) or "none", ", ".join(sorted(new)) or "none"
    return (
        f"its closure variables changed ({before} -> {after}): "
        "cells shared with inner functions cannot be remapped"
    )


def _find_site(old: SiteRef, new_code: CodeType) -> tuple[Site | None, str]:
    """The new code's site for ``old``, and how it was found (or why none was)."""
    sites = analyze(new_code).sites
    refs = site_refs(new_code)
    same_kind = [refs[o] for o in sorted(refs) if refs[o].kind == old.kind]
    if old.source:
        key = normalized(old.source)
        same = [r for r in same_kind if r.source and normalized(r.source) == key]
        if len(same) > old.occurrence:
            ref = same[old.occurrence]
            offset = next(o for o, r in refs.items() if r is ref)
            return sites[offset], f"matched by source and position: {old.kind} #{ref.ordinal + 1}"
    if len(refs) == old.count and old.ordinal < len(refs):
        offset = sorted(refs)[old.ordinal]
        ref = refs[offset]
        if ref.kind == old.kind:
            return sites[offset], (
                f"matched by position only: the {old.kind} there now reads {ref.source!r}, "
                "so a migration must confirm it"
            )
    return None, (
        f"the {old.kind} it is suspended at ({old.source or 'source unknown'}) no longer exists in the new "
        "code (removed, or changed while other awaits were added or removed); finish this run with the "
        "old code"
    )


@attrs.frozen
class FrameMigration:
    """What :class:`MigratingFrames` does to the records of one old code (one header entry)."""

    new_code: CodeType
    moves: dict[tuple[int, tuple[int, ...]], Move]  # (old status, old bound) -> move
    user_migration: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    describe: str = ""  # module:qualname, for errors


@attrs.define
class _Pending:
    move: Move
    record: FrameRecord
    migration: FrameMigration


@attrs.frozen
class MovedFrame:
    """What one move did to one frame (recorded in the run's history by ``agentrt upgrade``)."""

    function: str  # module:qualname
    old_site: str  # its site label in the old code ("" for a frame that had not started)
    new_site: str  # ... in the new code
    mapped: tuple[str, ...]  # live locals of the new site carried over by name
    supplied: tuple[str, ...]  # ... returned by the user migration
    dropped: tuple[str, ...]  # locals of the old frame the new site does not keep

    def as_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "old_site": self.old_site,
            "new_site": self.new_site,
            "locals": {
                "mapped": list(self.mapped),
                "supplied": list(self.supplied),
                "dropped": list(self.dropped),
            },
        }


class MigratingFrames:
    """The frame extension for one migrating decode: rewrites records of changed code, then
    delegates to :class:`FrameObjects` (which validates and builds them like any other).
    ``moved`` lists what each move did, in decode order (outermost frame first)."""

    name = "frame"

    def __init__(self, migrations: dict[int, FrameMigration]) -> None:
        self._base = FrameObjects()
        self._migrations = migrations  # header code index -> migration
        self._pending: dict[int, _Pending] = {}
        self.types = self._base.types
        self.moved: list[MovedFrame] = []

    def create(self, ctx: DecodeContext, *args: Any) -> Any:
        fields = record_fields(args)
        index = fields[1] if fields is not None else None
        migration = self._migrations.get(index) if type(index) is int else None
        record = FrameRecord.parse(args) if migration is not None else None
        if fields is None or migration is None or record is None:
            return self._base.create(ctx, *args)
        move = migration.moves.get((record.status, record.bound))
        if move is None or move.verdict not in (Verdict.MIGRATES, Verdict.UNCHANGED):
            raise IncompatibleBlob(f"{migration.describe}: this frame cannot move to the new code")
        cells = fields[6]
        new_cells = tuple(cells[i] for i in move.cell_order)
        status = move.target.yield_offset if move.target is not None else NOT_STARTED
        obj = self._base.create(
            ctx, fields[0], index, status, move.new_bound, record.null_mask, record.has_exc, new_cells
        )
        self._pending[id(obj)] = _Pending(move, record, migration)
        return obj

    def set_state(self, ctx: DecodeContext, obj: Any, state: Any) -> None:
        pending = self._pending.pop(id(obj), None)
        if pending is not None and type(state) is list:
            state, moved = self._translate(pending, state)
            self.moved.append(moved)
        self._base.set_state(ctx, obj, state)

    def reduce(self, obj: Any, ctx: Any) -> tuple[tuple[Any, ...], Any]:
        return self._base.reduce(obj, ctx)

    def children(self, obj: Any) -> Iterator[tuple[str, Any, Location | None]]:
        return self._base.children(obj)

    @staticmethod
    def _translate(pending: _Pending, state: list[Any]) -> tuple[list[Any], MovedFrame]:
        record, move, migration = pending.record, pending.move, pending.migration
        nlocals = len(record.bound)
        old_locals = dict(zip(record.bound_names(), state[1 : 1 + nlocals], strict=True))
        code = migration.new_code
        new_names = [code.co_varnames[i] for i in move.new_bound]
        values = {name: old_locals[name] for name in new_names if name in old_locals}
        supplied: list[str] = []
        if move.needs_user_migration:
            fn = migration.user_migration
            if fn is None:
                raise IncompatibleBlob(f"{migration.describe}: no migration is registered for this frame")
            returned = fn(dict(old_locals))
            if not isinstance(returned, dict):
                raise IncompatibleBlob(
                    f"the migration of {migration.describe} returned {type(returned).__name__}; "
                    "it must return a dict of the new frame's locals by name"
                )
            unknown = sorted(set(returned) - set(code.co_varnames))
            if unknown:
                raise IncompatibleBlob(
                    f"the migration of {migration.describe} returned {', '.join(map(str, unknown))}, "
                    f"which are not locals of the new function (its locals: {', '.join(code.co_varnames)})"
                )
            values.update({k: v for k, v in returned.items() if k in new_names})
            supplied = [name for name in new_names if name in returned]
            lacking = [name for name in new_names if name not in values]
            if lacking:
                raise IncompatibleBlob(
                    f"the migration of {migration.describe} must return {', '.join(lacking)} "
                    "(live at the new site, and not in the old frame)"
                )
        target = move.target
        moved = MovedFrame(
            migration.describe,
            move.site,
            site_refs(code)[target.yield_offset].label() if target is not None else "",
            tuple(name for name in new_names if name not in supplied),
            tuple(supplied),
            tuple(name for name in old_locals if name not in new_names),
        )
        return [state[0], *(values[name] for name in new_names), *state[1 + nlocals :]], moved
