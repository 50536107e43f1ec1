"""Handoff receipts: the ``guild.handoff_receipt.v1`` Markdown wrapper around one envelope block.

The front matter and the five sections are for a human reviewer; the machine truth is exactly one
fenced JSON block holding a ``guild.handoff.v2`` envelope.  A receipt with none is invalid and one
with two or more is a duplicate-block defect.  Lanes write receipts as files; the lead reads the
files, never chat.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any  # Any: parsed JSON/YAML envelopes

from agentrt.exceptions import ContractError
from agentrt.teams import _yaml
from agentrt.teams.contracts import HANDOFF_SCHEMA, Handoff, validate_handoff
from agentrt.teams.names import check_name, confined

__all__ = [
    "RECEIPT_SCHEMA",
    "SECTIONS",
    "parse_receipt",
    "receipt_path",
    "render_receipt",
    "status_line",
]

RECEIPT_SCHEMA = "guild.handoff_receipt.v1"
SECTIONS = ("changed_files", "opens_for", "assumptions", "evidence", "followups")
_FENCE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
_WHERE = "handoff receipt"


def receipt_path(project: str | Path, run_id: str, specialist: str, task_id: str) -> Path:
    """``.agentrt/runs/<run>/handoffs/<specialist>-<task>.md`` under the project."""
    for key, name in (("run_id", run_id), ("specialist", specialist), ("task_id", task_id)):
        check_name(name, _WHERE, key)
    return confined(project, ".agentrt", "runs", run_id, "handoffs", f"{specialist}-{task_id}.md")


def render_receipt(
    handoff: Handoff,
    *,
    run_id: str,
    specialist: str,
    sections: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """A receipt: front matter, the five sections, and exactly one envelope block."""
    validate_handoff(handoff.to_dict())  # never write an envelope the lead would refuse
    header = {
        "schema_version": RECEIPT_SCHEMA,
        "run_id": run_id,
        "specialist": specialist,
        "task_id": handoff.task_id,
        "status": handoff.status,
        "artifact_category": "handoff",
    }
    parts = ["---\n", _yaml.dump(header), "---\n\n", f"# Handoff: {specialist} · {handoff.task_id}\n"]
    sections = sections or {}
    for name in SECTIONS:
        items = list(sections.get(name, ())) or ["(none)"]
        parts.append(f"\n## {name}\n\n" + "".join(f"- {item}\n" for item in items))
    envelope = json.dumps(handoff.to_dict(), indent=2, ensure_ascii=False)
    parts.append(f"\n## envelope\n\n```json\n{envelope}\n```\n")
    return "".join(parts)


def _envelope_blocks(text: str) -> list[tuple[int, Any]]:
    """The fenced blocks that are envelopes: (line, parsed JSON or the decode error)."""
    found: list[tuple[int, Any]] = []
    for match in _FENCE.finditer(text):
        body = match.group("body")
        if HANDOFF_SCHEMA not in body:
            continue
        line = text.count("\n", 0, match.start()) + 1
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            found.append((line, exc))
            continue
        if isinstance(value, dict) and value.get("schema_version") == HANDOFF_SCHEMA:
            found.append((line, value))
    return found


def parse_receipt(text: str) -> Handoff:
    """The validated envelope of a receipt; refuses none and refuses two or more blocks."""
    blocks = _envelope_blocks(text)
    if not blocks:
        raise ContractError(
            _WHERE,
            None,
            f'has no fenced envelope block (a ```json block with "schema_version": "{HANDOFF_SCHEMA}")',
        )
    if len(blocks) > 1:
        lines = ", ".join(str(line) for line, _ in blocks)
        raise ContractError(
            _WHERE, None, f"duplicate envelope block: {len(blocks)} blocks (lines {lines}); keep exactly one"
        )
    line, value = blocks[0]
    if isinstance(value, json.JSONDecodeError):
        raise ContractError(_WHERE, None, f"envelope block at line {line} is not valid JSON: {value}")
    return validate_handoff(value)


def status_line(handoff: Handoff, path: str | Path) -> str:
    """The one liveness line a lane may send the lead (never the envelope itself)."""
    return f"done · {handoff.task_id} · status:{handoff.status} · receipt:{Path(path).resolve()}"
