"""Minting a new specialist: the interview, the ``proposed/`` draft and the boundary scan.

When a gate decision asks for a new role (``add`` with ``mint: true``, or option A), the lead does
what the reference's ``guild-create-specialist`` does before the role can go live:

1. **the interview**: a durable question (``agentrt.specialist_interview.v1``) asks the person
   for the role's ``purpose``, ``boundaries`` (what it does not do), ``default_tier``, ``tools``
   and a one-paragraph ``body``; an answer missing any of them is asked again, saying what is
   wrong;
2. **the draft**: the answers become ``.agentrt/agents/proposed/<name>.md`` (not live: a team
   reads only ``.agentrt/agents/*.md``);
3. **the boundary scan**: the draft's purpose and boundaries against each neighbour's (the
   team's other roles and the project's specialists).  Each overlap is shown, and a boundary edit
   is itself gated: the person replies ``{"verb": "boundaries", "boundaries": [...]}`` to change
   the draft's boundaries (scanned again) or ``{"verb": "keep"}`` to keep them as they are;
4. the role goes live only when the team is approved: the draft moves to ``.agentrt/agents/``.

The functions here are pure (the questions, checking the answers, the scan); the lead asks and
its tools write the files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any  # Any: answers are JSON from a person

from agentrt.exceptions import ContractError
from agentrt.teams.contracts import TIERS

__all__ = [
    "BOUNDARY_SCHEMA",
    "INTERVIEW_SCHEMA",
    "boundary_prompt",
    "boundary_scan",
    "draft_from_answers",
    "interview_prompt",
]

INTERVIEW_SCHEMA = "agentrt.specialist_interview.v1"
BOUNDARY_SCHEMA = "agentrt.boundary_scan.v1"
_WORD = re.compile(r"[a-z][a-z0-9-]{3,}")
#: Words too common in role descriptions to say two roles overlap.
_COMMON = frozenset(
    {
        "does", "doesn", "only", "owns", "with", "from", "that", "this", "into", "over", "under",
        "their", "them", "they", "lane", "lanes", "given", "work", "works", "code", "change",
        "changes", "touch", "other", "never", "always", "team", "role", "roles", "task", "tasks", "also",
    }
)  # fmt: skip


def interview_prompt(name: str, reason: str, blocked: str | None = None) -> dict[str, Any]:
    """The interview question for the new role ``name``."""
    return {
        "interview": INTERVIEW_SCHEMA,
        "role": name,
        "why": reason,
        "blocked": blocked,
        "question": f"Describe the new specialist {name!r} before it is drafted.",
        "answer_with": {
            "purpose": "one word or phrase: what the role is for (e.g. data-stewardship)",
            "boundaries": ["what it does not do, one per item (at least one)"],
            "default_tier": f"one of {', '.join(TIERS)}",
            "tools": ["the tools it needs, e.g. read, write_code"],
            "body": "one paragraph: what it does",
        },
    }


def draft_from_answers(name: str, reason: str, answers: Any) -> dict[str, Any]:
    """The draft specialist from the interview's answers; :class:`ContractError` says what to fix."""
    where = f"interview for the new specialist {name!r}"
    if not isinstance(answers, Mapping):
        raise ContractError(
            where, None, "answer with an object: purpose, boundaries, default_tier, tools, body"
        )
    for key in ("purpose", "body"):
        if not isinstance(answers.get(key), str) or not answers[key].strip():
            raise ContractError(where, key, "is required: a non-empty string")
    for key in ("boundaries", "tools"):
        value = answers.get(key)
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v.strip() for v in value)
        ):
            raise ContractError(where, key, "is required: a non-empty list of strings")
    if answers.get("default_tier") not in TIERS:
        raise ContractError(where, "default_tier", f"must be one of {', '.join(TIERS)}")
    unknown = sorted(set(answers) - {"purpose", "boundaries", "default_tier", "tools", "body"})
    if unknown:
        raise ContractError(where, unknown[0], "is not a question of the interview")
    return {
        "name": name,
        "purpose": answers["purpose"].strip(),
        "default_tier": answers["default_tier"],
        "tools": [t.strip() for t in answers["tools"]],
        "boundaries": [b.strip() for b in answers["boundaries"]],
        "body": f"{answers['body'].strip()}\n\nMinted through the team gate: {reason}",
    }


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON}


def boundary_scan(draft: Mapping[str, Any], neighbours: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Where the draft's purpose or boundaries overlap a neighbour's: one line per overlap.

    Two descriptions overlap when they share two or more significant words (a purpose, being
    short, when it is the same); the line names both sides and the shared words."""
    found = []
    mine = [("purpose", str(draft["purpose"])), *(("boundary", b) for b in draft["boundaries"])]
    for name, other in sorted(neighbours.items()):
        if name == draft["name"]:
            continue
        theirs = [
            ("purpose", str(other.get("purpose", ""))),
            *(("boundary", b) for b in other.get("boundaries") or []),
        ]
        if str(other.get("purpose", "")).strip().lower() == str(draft["purpose"]).strip().lower():
            found.append(f"purpose {draft['purpose']!r} is also {name}'s purpose")
            continue
        for kind, text in mine:
            for their_kind, their_text in theirs:
                shared = sorted(_words(text) & _words(their_text))
                if len(shared) >= 2:
                    found.append(
                        f"{kind} {text!r} overlaps {name}'s {their_kind} {their_text!r} "
                        f"(shared: {', '.join(shared)})"
                    )
    return found


def boundary_prompt(
    draft: Mapping[str, Any], overlaps: list[str], blocked: str | None = None
) -> dict[str, Any]:
    """The gated boundary edit: the scan's findings and the two replies."""
    return {
        "boundary_scan": BOUNDARY_SCHEMA,
        "role": draft["name"],
        "draft": dict(draft),
        "overlaps": list(overlaps),
        "blocked": blocked,
        "question": (
            f"The draft of {draft['name']!r} overlaps its neighbours. Edit its boundaries, or keep them?"
        ),
        "reply_with": [{"verb": "boundaries", "boundaries": list(draft["boundaries"])}, {"verb": "keep"}],
    }
