"""What changed between two checkpoints of a run (``agentrt diff ID A B``).

Frames are matched outermost first while they run the same function; from the
first frame that differs, the rest of each chain is reported as removed / added.
Values are compared by their short reprs (what the dump shows), so a change deep
inside a truncated container can go unnoticed -- the dump of each side shows all
that is stored.
"""

from __future__ import annotations

from typing import Any  # Any: JSON documents

import attrs

from agentrt.inspection._model import Dump, FrameView, Variable

__all__ = ["FrameDiff", "RunDiff", "diff_dumps", "diff_to_json", "render_diff"]


@attrs.frozen
class Change:
    name: str
    before: str | None  # None: added
    after: str | None  # None: removed, or no longer stored because it became dead (``dead``)
    #: the variable still exists in the later frame but is not live at its suspension, so the
    #: checkpoint leaves it out: not a removal, and its last stored value is ``before``
    dead: bool = False

    @property
    def removed(self) -> bool:
        return self.after is None and self.before is not None and not self.dead


@attrs.frozen
class FrameDiff:
    index: int
    function: str
    status: str  # "changed", "unchanged", "added", "removed"
    position_before: tuple[int | None, str | None] | None = None  # (line, site kind)
    position_after: tuple[int | None, str | None] | None = None
    locals: tuple[Change, ...] = ()
    stack: tuple[Change, ...] = ()
    exception: Change | None = None

    @property
    def moved(self) -> bool:
        return self.position_before != self.position_after


@attrs.frozen
class RunDiff:
    before: Dump
    after: Dump
    frames: tuple[FrameDiff, ...]
    pending: Change | None


def _position(frame: FrameView) -> tuple[int | None, str | None]:
    return (frame.lineno, frame.site_kind)


def _values(variables: tuple[Variable, ...]) -> dict[str, str]:
    return {v.name: "<empty cell>" if v.value is None else v.value.repr for v in variables}


def _changes(
    before: dict[str, str], after: dict[str, str], dead_after: tuple[str, ...] = ()
) -> tuple[Change, ...]:
    out = []
    for name, value in before.items():
        if name not in after:
            out.append(Change(name, value, None, dead=name in dead_after))
        elif after[name] != value:
            out.append(Change(name, value, after[name]))
    out.extend(Change(name, None, value) for name, value in after.items() if name not in before)
    return tuple(out)


def _stack_values(frame: FrameView) -> dict[str, str]:
    return {f"[{e.position}] {e.label}": ("NULL" if e.value is None else e.value.repr) for e in frame.stack}


def _same_frame(a: FrameView, b: FrameView) -> bool:
    return (a.module, a.qualname, a.filename) == (b.module, b.qualname, b.filename)


def diff_dumps(before: Dump, after: Dump) -> RunDiff:
    """Compare two dumps of one run (``before`` usually the earlier checkpoint)."""
    a, b = before.chain, after.chain
    frames: list[FrameDiff] = []
    n = 0
    while n < min(len(a), len(b)) and _same_frame(a[n], b[n]):
        fa, fb = a[n], b[n]
        locals_ = _changes(_values(fa.locals + fa.cells), _values(fb.locals + fb.cells), fb.dead)
        stack = _changes(_stack_values(fa), _stack_values(fb))
        exc_a = fa.exception.repr if fa.exception else None
        exc_b = fb.exception.repr if fb.exception else None
        exception = Change("exception", exc_a, exc_b) if exc_a != exc_b else None
        moved = _position(fa) != _position(fb) or fa.yield_offset_bytes != fb.yield_offset_bytes
        status = "changed" if moved or locals_ or stack or exception else "unchanged"
        frames.append(
            FrameDiff(n, fa.qualname, status, _position(fa), _position(fb), locals_, stack, exception)
        )
        n += 1
    frames.extend(FrameDiff(f.index, f.qualname, "removed", _position(f), None) for f in a[n:])
    frames.extend(FrameDiff(f.index, f.qualname, "added", None, _position(f)) for f in b[n:])
    pa = before.pending.repr if before.pending else None
    pb = after.pending.repr if after.pending else None
    return RunDiff(before, after, tuple(frames), Change("pending", pa, pb))


def _where(position: tuple[int | None, str | None] | None) -> str:
    if position is None:
        return "-"
    line, kind = position
    return f"line {line}" + (f" ({kind})" if kind else "")


def render_diff(diff: RunDiff) -> str:
    before, after = diff.before.source, diff.after.source
    out = [f"agentrt diff of run {before.run_id}: checkpoint {before.seq} → checkpoint {after.seq}"]
    for frame in diff.frames:
        out.append("")
        if frame.status == "removed":
            out.append(
                f"frame {frame.index} {frame.function}: only in checkpoint {before.seq} (returned since)"
            )
            continue
        if frame.status == "added":
            out.append(
                f"frame {frame.index} {frame.function}: new in checkpoint {after.seq} "
                f"(at {_where(frame.position_after)})"
            )
            continue
        out.append(f"frame {frame.index} {frame.function}: {frame.status}")
        if frame.moved:
            out.append(f"  position: {_where(frame.position_before)} → {_where(frame.position_after)}")
        else:
            out.append(f"  position: {_where(frame.position_after)} (same)")
        if frame.locals:
            out.append("  locals:")
            out.extend(f"    {_change_line(c)}" for c in frame.locals)
        if frame.stack:
            out.append("  value stack:")
            out.extend(f"    {_change_line(c)}" for c in frame.stack)
        if frame.exception is not None:
            out.append(f"  exception being handled: {frame.exception.before} → {frame.exception.after}")
    out.append("")
    pending = diff.pending
    if pending is not None and pending.before == pending.after:
        out.append(f"pending request: {pending.after} (same)")
    elif pending is not None:
        out.append(f"pending request: {pending.before} → {pending.after}")
    return "\n".join(out) + "\n"


def _change_line(change: Change) -> str:
    if change.before is None:
        return f"+ {change.name} = {change.after}"
    if change.dead:
        return f"· {change.name}: dead here, so not stored (last stored value {change.before})"
    if change.after is None:
        return f"- {change.name} (was {change.before})"
    return f"~ {change.name}: {change.before} → {change.after}"


def _change_json(change: Change) -> dict[str, Any]:
    return {"name": change.name, "before": change.before, "after": change.after}


def _position_json(position: tuple[int | None, str | None] | None) -> dict[str, Any] | None:
    if position is None:
        return None
    return {"lineno": position[0], "site_kind": position[1]}


def diff_to_json(diff: RunDiff) -> dict[str, Any]:
    return {
        "run_id": diff.before.source.run_id,
        "before_seq": diff.before.source.seq,
        "after_seq": diff.after.source.seq,
        "frames": [
            {
                "index": f.index,
                "function": f.function,
                "status": f.status,
                "position_before": _position_json(f.position_before),
                "position_after": _position_json(f.position_after),
                "moved": f.moved if f.status in ("changed", "unchanged") else None,
                "locals": {
                    "added": [{"name": c.name, "value": c.after} for c in f.locals if c.before is None],
                    "removed": [{"name": c.name, "value": c.before} for c in f.locals if c.removed],
                    "dead": [{"name": c.name, "value": c.before} for c in f.locals if c.dead],
                    "changed": [
                        _change_json(c) for c in f.locals if c.before is not None and c.after is not None
                    ],
                },
                "stack": [_change_json(c) for c in f.stack],
                "exception": None if f.exception is None else _change_json(f.exception),
            }
            for f in diff.frames
        ],
        "pending": None
        if diff.pending is None
        else {
            "before": diff.pending.before,
            "after": diff.pending.after,
            "changed": diff.pending.before != diff.pending.after,
        },
    }
