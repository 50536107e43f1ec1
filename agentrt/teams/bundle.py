"""Context bundles: one per lane, three layers (universal, role, task), capped at a token budget.

The universal layer is built once per run and reused byte-identical across lanes, so a provider's
prompt cache can match the shared prefix.  Tokens are estimated (``ceil(chars / 4)``, the usual
rule of thumb for English and code; no tokenizer download), so the cap is a guard, not a bill.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any  # Any: parsed YAML/JSON documents

from agentrt.exceptions import ContractError

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "UNIVERSAL_HEADER",
    "build_bundle",
    "estimate_tokens",
    "lint_bundle",
    "universal_layer",
]

DEFAULT_MAX_TOKENS = 6000
TARGET_TOKENS = 3000
UNIVERSAL_HEADER = "# Universal\n"
_RULES = (
    "You are one specialist lane of a team. Work only on your task, inside your boundaries.",
    "Never message the lead or other lanes. Report only through your handoff receipt, written as "
    "your final act: a Markdown file with one fenced guild.handoff.v2 JSON envelope.",
    "If something is above your tier, set status escalate with an escalate_reason; an advisor answers.",
)


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def universal_layer(run_id: str, task: str, project_facts: Sequence[str] = ()) -> str:
    """The run's universal layer (about 400 tokens): the same bytes for every lane of the run."""
    lines = [UNIVERSAL_HEADER, f"Run: {run_id}", f"Task: {task.strip()}", "", "Rules:"]
    lines += [f"- {rule}" for rule in _RULES]
    if project_facts:
        lines += ["", "Project facts:"] + [f"- {fact}" for fact in project_facts]
    return "\n".join(lines) + "\n"


def build_bundle(
    universal: str,
    specialist: Mapping[str, Any],
    lane: Mapping[str, Any],
    *,
    upstream: Sequence[str] = (),
    max_tokens: int = DEFAULT_MAX_TOKENS,
    sections: Sequence[str] = (),
) -> str:
    """Universal + role + task layers; raises :class:`ContractError` if over ``max_tokens``.

    ``sections`` are more of the task layer, each a Markdown section (``# heading`` and text): a
    reviewer's instructions, or the review findings a lane sent back must address."""
    role = [
        "# Role",
        f"Specialist: {specialist['name']} (purpose: {specialist.get('purpose', '')})",
        f"Boundaries: {'; '.join(specialist.get('boundaries') or []) or 'none'}",
        str(specialist.get("body", "")).strip(),
    ]
    task = [
        "# Task",
        f"Lane {lane['task_id']}: {lane.get('title', '')}",
        f"Work type: {lane['work_type']}",
        str(lane.get("brief", "")).strip(),
    ]
    if upstream:
        task += ["", "Upstream receipts (summaries):"] + [f"- {u}" for u in upstream]
    for section in sections:
        task += ["", section.strip()]
    text = universal + "\n" + "\n".join(role) + "\n\n" + "\n".join(task) + "\n"
    tokens = estimate_tokens(text)
    if tokens > max_tokens:
        raise ContractError(
            f"context bundle of lane {lane['task_id']}",
            None,
            f"is about {tokens} tokens, over the cap of {max_tokens}; "
            "shorten the task brief or upstream summaries",
        )
    return text


def lint_bundle(path: str | Path, max_tokens: int = DEFAULT_MAX_TOKENS) -> tuple[int, str]:
    """``(exit code, message)``: 0 within the cap, 2 over it (the reference's lint-context-bundle)."""
    text = Path(path).read_text(encoding="utf-8")
    tokens = estimate_tokens(text)
    if tokens > max_tokens:
        return 2, f"{path}: about {tokens} tokens, over the cap of {max_tokens}"
    return 0, f"{path}: about {tokens} tokens (cap {max_tokens})"
