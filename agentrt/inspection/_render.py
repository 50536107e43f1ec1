"""Text and JSON renderings of a :class:`Dump` (``agentrt dump`` and ``agentrt dump --json``)."""

from __future__ import annotations

import dis
import inspect
from typing import Any  # Any: JSON documents; code objects of any frame

from agentrt._frames import InstrRef
from agentrt.inspection._model import Dump, FrameView, HeaderView, StackEntry, UpgradeView, Variable
from agentrt.inspection._values import ValueView

__all__ = ["DUMP_SCHEMA_VERSION", "disassembly", "render_text", "to_json", "upgrade_json"]

#: Bumped when a key of the JSON dump changes meaning or disappears (new keys may appear).
DUMP_SCHEMA_VERSION = 1
DISASM_BEFORE = 12  # instructions shown before the suspended one
DISASM_AFTER = 6
# 3.13 hides byte offsets unless asked (and only 3.13 has the option).
_DIS_HAS_SHOW_OFFSETS = "show_offsets" in inspect.signature(dis.Bytecode).parameters


# --------------------------------------------------------------------------- text


def render_text(dump: Dump, *, disasm: bool = False) -> str:
    out: list[str] = [f"agentrt dump of {dump.source.describe()}"]
    if dump.source.agent:
        out.append(f"agent: {dump.source.agent}")
    if dump.header is not None:
        out.extend(_header_lines(dump.header))
    if dump.upgrades:
        out.extend(_upgrade_lines(dump.upgrades, dump.source.run_id))
    if dump.frames is None:
        out.append("")
        out.append(f"frames cannot be shown: {dump.frames_error}")
        return "\n".join(out) + "\n"
    if dump.value is not None:
        out.append("")
        out.append(f"the blob holds a value, not a suspended chain: {dump.value.repr}")
        return "\n".join(out) + "\n"
    if dump.pending is not None:
        out.append(f"pending request: {dump.pending.repr}")
    if dump.context:
        out.append("context variables set inside the run:")
        out.extend(f"  {_variable(v)}" for v in dump.context)
    chain = dump.chain
    for frame in dump.frames:
        out.append("")
        out.extend(_frame_lines(frame, len(chain), disasm))
    return "\n".join(out) + "\n"


def _header_lines(header: HeaderView) -> list[str]:
    lines = [
        f"blob: format {header.format_version}, written by Python {header.python}, "
        f"codec {header.codec}, payload {header.payload_size_bytes} bytes",
        "code table:",
    ]
    for n, code in enumerate(header.codes):
        lines.append(f"  [{n}] {code.module}:{code.qualname}  digest {code.digest}")
    if not header.codes:
        lines.append("  (empty)")
    return lines


def _upgrade_lines(upgrades: tuple[UpgradeView, ...], run_id: str | None) -> list[str]:
    """The run's upgrade history: which frames moved, from which code and site to which, and how."""
    lines = [f"upgrades ({len(upgrades)}, recorded by agentrt upgrade):"]
    for u in upgrades:
        if u.how == "restarted" and u.restart is not None:
            r = u.restart
            lines.append(
                f"  checkpoint {u.seq}: restarted {r.get('function')} at checkpoint {r.get('safe_point')} "
                f"(it waited at {r.get('from_site')} in checkpoint {r.get('from_seq')}, "
                "an await the new code does not have)"
            )
            withdrawn = [
                f"seq {w.get('seq')} ({(w.get('request') or {}).get('kind', '?')})"
                for w in r.get("withdrawn", ())
            ]
            if withdrawn:
                lines.append(f"    withdrawn: {', '.join(withdrawn)}")
        else:
            diff = (
                f"; before and after: agentrt diff {run_id} {u.seq} {u.seq}" if u.kept_blob and run_id else ""
            )
            lines.append(f"  checkpoint {u.seq}: moved to the new code{diff}")
        for f in u.frames:
            lines.append(f"    {f.function}  {f.old_digest[:8] or '?'} -> {f.new_digest[:8] or '?'}")
            if f.old_site or f.new_site:
                lines.append(f"      site {f.old_site or '-'} -> {f.new_site or '-'}")
            how = [
                f"{label} {', '.join(names)}"
                for label, names in (
                    ("carried", f.mapped),
                    ("supplied by the migration", f.supplied),
                    ("dropped", f.dropped),
                )
                if names
            ]
            if how:
                lines.append(f"      locals: {'; '.join(how)}")
    return lines


def _frame_title(frame: FrameView, chain_length: int) -> str:
    if frame.held_by is not None:
        where = f"held by the chain at {frame.held_by}"
    elif chain_length == 1:
        where = "the only frame"
    elif frame.index == 0:
        where = "outermost"
    elif frame.index == chain_length - 1:
        where = "innermost"
    else:
        where = "awaited by frame " + str(frame.index - 1)
    name = f"{frame.module}.{frame.qualname}" if frame.module else frame.qualname
    return f"frame {frame.index} ({where}): {frame.kind} {name}"


def _frame_lines(frame: FrameView, chain_length: int, disasm: bool) -> list[str]:
    lines = [_frame_title(frame, chain_length)]
    if frame.error is not None:
        lines.append(f"  cannot read this frame: {frame.error}")
        lines.append(f"  file {frame.filename}")
        return lines
    if frame.state == "finished":
        lines.append("  finished (nothing to resume)")
        return lines
    where = f"  {frame.filename}:{frame.lineno}"
    if frame.state == "not started":
        lines.append(where + ", not started yet")
    else:
        lines.append(where + f", suspended at {_site_words(frame.site_kind)}")
    width = len(str(max((s.lineno for s in frame.source), default=0)))
    for src in frame.source:
        marker = "-->" if src.current else "   "
        lines.append(f"  {marker} {src.lineno:>{width}} | {src.text}".rstrip())
    lines.append("  locals:" if frame.locals else "  locals: none stored")
    lines.extend(f"    {_variable(v)}" for v in frame.locals)
    if frame.dead:
        lines.append(f"  not in the checkpoint (dead at this point): {', '.join(frame.dead)}")
    if frame.unbound:
        lines.append(f"  unbound: {', '.join(frame.unbound)}")
    if frame.cells:
        lines.append("  closure cells:")
        lines.extend(f"    {_variable(v)}" for v in frame.cells)
    if frame.stack:
        lines.append("  value stack (bottom first):")
        lines.extend(f"    {_stack_entry(e)}" for e in frame.stack)
    elif frame.state == "suspended":
        lines.append("  value stack: empty")
    lines.append(f"  exception being handled: {frame.exception.repr if frame.exception else 'none'}")
    if frame.awaiting:
        lines.append(f"  awaiting: {frame.awaiting}")
    if disasm and frame.code is not None and frame.yield_offset_bytes is not None:
        lines.append(
            "  bytecode around the suspension (--> marks the instruction the frame is suspended at):"
        )
        lines.extend(f"    {text}".rstrip() for text in disassembly(frame.code, frame.yield_offset_bytes))
    return lines


def _site_words(kind: str | None) -> str:
    return {
        "await": "an await",
        "yield": "a yield",
        "async-yield": "a yield (async generator)",
    }.get(kind or "", "an unknown point")


def _variable(v: Variable) -> str:
    if v.value is None:
        return f"{v.name} = <empty cell>"
    return f"{v.name} = {v.value.repr}"


def _stack_entry(e: StackEntry) -> str:
    text = f"[{e.position}] {e.label}"
    if e.value is not None:
        text += f": {e.value.repr}"
    return text


def disassembly(code: Any, yield_offset_bytes: int) -> list[str]:
    """``dis`` output of ``code`` around ``yield_offset_bytes``, the suspended instruction marked ``-->``."""
    options = {"show_offsets": True} if _DIS_HAS_SHOW_OFFSETS else {}
    text = dis.Bytecode(code, current_offset=yield_offset_bytes, **options).dis()
    lines = text.splitlines()
    marked = next((n for n, line in enumerate(lines) if "-->" in line), None)
    if marked is None:
        return lines
    start = max(0, marked - DISASM_BEFORE)
    end = min(len(lines), marked + DISASM_AFTER + 1)
    window = lines[start:end]
    if start > 0:
        window.insert(0, "...")
    if end < len(lines):
        window.append("...")
    return window


def _disasm_data(code: Any, yield_offset_bytes: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    instructions = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    position = next((n for n, i in enumerate(instructions) if i.offset == yield_offset_bytes), None)
    if position is None:
        return out
    for instr in instructions[max(0, position - DISASM_BEFORE) : position + DISASM_AFTER + 1]:
        out.append(
            {
                "offset_bytes": instr.offset,
                "opname": instr.opname,
                "argrepr": instr.argrepr,
                "lineno": instr.positions.lineno if instr.positions else None,
                "current": instr.offset == yield_offset_bytes,
            }
        )
    return out


# --------------------------------------------------------------------------- JSON


def to_json(dump: Dump, *, disasm: bool = False) -> dict[str, Any]:
    """The dump as JSON data.  Keys are stable (see ``DUMP_SCHEMA_VERSION``)."""
    source = dump.source
    data: dict[str, Any] = {
        "schema": DUMP_SCHEMA_VERSION,
        "source": {
            "kind": source.kind,
            "run_id": source.run_id,
            "seq": source.seq,
            "latest": source.latest,
            "path": source.path,
            "agent": source.agent,
        },
        "header": _header_json(dump.header),
        "frames": None if dump.frames is None else [_frame_json(f, disasm) for f in dump.frames],
        "frames_error": dump.frames_error,
        "pending": _value_json(dump.pending),
        "pending_summary": dump.pending_summary,
        "value": _value_json(dump.value),
    }
    if dump.context:  # the context variables the checkpoint carries (agentrt._context), when it has any
        data["context"] = [_variable_json(v) for v in dump.context]
    if source.kind == "run":  # a run's checkpoint: the run's upgrade history (agentrt upgrade)
        data["upgrades"] = [upgrade_json(u) for u in dump.upgrades]
    return data


def _header_json(header: HeaderView | None) -> dict[str, Any] | None:
    if header is None:
        return None
    return {
        "format_version": header.format_version,
        "python": header.python,
        "codec": header.codec,
        "payload_size_bytes": header.payload_size_bytes,
        "codes": [{"module": c.module, "qualname": c.qualname, "digest": c.digest} for c in header.codes],
    }


def _value_json(value: ValueView | None) -> dict[str, Any] | None:
    if value is None:
        return None
    return {"type": value.type, "repr": value.repr, "same_as": value.same_as}


def _instr_json(ref: InstrRef | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return {
        "opname": ref.opname,
        "argrepr": ref.argrepr,
        "offset_bytes": ref.offset_bytes,
        "lineno": ref.lineno,
    }


def _variable_json(v: Variable) -> dict[str, Any]:
    return {"name": v.name, "empty": v.value is None, "value": _value_json(v.value)}


def _frame_json(frame: FrameView, disasm: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "index": frame.index,
        "in_chain": frame.in_chain,
        "held_by": frame.held_by,
        "kind": frame.kind,
        "module": frame.module,
        "function": frame.qualname,
        "filename": frame.filename,
        "lineno": frame.lineno,
        "state": frame.state,
        "site": None
        if frame.site_kind is None
        else {"kind": frame.site_kind, "yield_offset_bytes": frame.yield_offset_bytes},
        "source": [{"lineno": s.lineno, "text": s.text, "current": s.current} for s in frame.source],
        "locals": [_variable_json(v) for v in frame.locals],
        "dead_locals": list(frame.dead),
        "unbound_locals": list(frame.unbound),
        "cells": [_variable_json(v) for v in frame.cells],
        "stack": [
            {
                "position": e.position,
                "null": e.null,
                "role": e.role,
                "label": e.label,
                "value": _value_json(e.value),
                "iterator": e.iterator,
                "produced_by": _instr_json(e.producer),
                "consumed_by": _instr_json(e.consumer),
            }
            for e in frame.stack
        ],
        "exception": _value_json(frame.exception),
        "awaiting": frame.awaiting,
        "error": frame.error,
    }
    if disasm:
        data["disasm"] = (
            _disasm_data(frame.code, frame.yield_offset_bytes)
            if frame.code is not None and frame.yield_offset_bytes is not None
            else []
        )
    return data


def upgrade_json(u: UpgradeView) -> dict[str, Any]:
    """One upgrade of the run's history as JSON (``agentrt dump --json``, ``agentrt diff ID N N --json``)."""
    return {
        "seq": u.seq,
        "n": u.n,
        "at": u.at,
        "how": u.how,
        "kept_blob": u.kept_blob,
        "restart": u.restart,
        "frames": [
            {
                "function": f.function,
                "old_digest": f.old_digest,
                "new_digest": f.new_digest,
                "old_site": f.old_site,
                "new_site": f.new_site,
                "locals": {
                    "mapped": list(f.mapped),
                    "supplied": list(f.supplied),
                    "dropped": list(f.dropped),
                },
            }
            for f in u.frames
        ],
    }
