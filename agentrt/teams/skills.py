"""Minting a skill: a missing capability rather than a missing role, through the same gate.

The reference's ``guild-create-skill`` mints a skill "the same gated way" as a specialist.  Here a
skill is a short Markdown file ``.agentrt/skills/<name>.md`` (front matter ``name``,
``description``, ``for``; the body is the instructions) that the lanes of the roles it is ``for``
carry in their bundles.  It comes only from a gate decision::

    {"verb": "add_skill", "proposal": SHA256, "skill": "csv-streaming", "reason": "...",
     "for": ["backend"], "description": "one line", "instructions": "what to do, how"}

The decision adds it to the proposal's ``skills`` (the gate asks again: not an approval); the lead
drafts it to ``.agentrt/skills/proposed/<name>.md`` and the gate's next question names any clash
(a live skill of that name, a role that is not on the team any more); on approval the draft goes
live, never overwriting a skill that exists.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any  # Any: proposals and decisions are JSON

from agentrt.exceptions import GateBlocked
from agentrt.teams.names import is_plain_name

__all__ = ["SKILL_KEYS", "add_skill", "render_skill", "skill_section"]

SKILL_KEYS = ("skill", "reason", "for", "description", "instructions")
_WHERE = "guild.team_decision.v1"


def add_skill(proposal: Mapping[str, Any], decision: Mapping[str, Any]) -> dict[str, Any]:
    """The proposal with the decision's skill added (see the module doc); blocks a bad decision."""
    name = decision.get("skill")
    if not is_plain_name(name):
        raise GateBlocked(_WHERE, "skill", f"{name!r} is not a plain name (letters, digits, '.', '_', '-')")
    for key in ("reason", "description", "instructions"):
        if not isinstance(decision.get(key), str) or not decision[key].strip():
            raise GateBlocked(_WHERE, key, f"an add_skill decision needs {key} (a non-empty string)")
    roles = [r["specialist"] for r in proposal["roles"]]
    wanted = decision.get("for")
    if not isinstance(wanted, list) or not wanted or not all(w in roles for w in wanted):
        raise GateBlocked(
            _WHERE, "for", f"must list roles of the team that get the skill ({', '.join(roles)})"
        )
    skills = list(proposal.get("skills") or [])
    if any(s["skill"] == name for s in skills):
        raise GateBlocked(_WHERE, "skill", f"{name!r} is already a skill of this proposal")
    new = copy.deepcopy(dict(proposal))
    new["skills"] = [
        *skills,
        {k: (list(decision[k]) if k == "for" else str(decision[k]).strip()) for k in SKILL_KEYS},
    ]
    return new


def render_skill(skill: Mapping[str, Any]) -> str:
    """A skill file: front matter and the instructions."""
    from agentrt.teams import _yaml

    header = {"name": skill["skill"], "description": skill["description"], "for": list(skill["for"])}
    body = f"{skill['instructions'].strip()}\n\nMinted through the team gate: {skill['reason']}\n"
    return f"---\n{_yaml.dump(header)}---\n\n{body}"


def skill_section(skills: list[Mapping[str, Any]], specialist: str) -> str | None:
    """The bundle section of the skills ``specialist`` carries, or None."""
    mine = [s for s in skills if specialist in s["for"]]
    if not mine:
        return None
    parts = ["# Skills"]
    for s in mine:
        parts += [f"## {s['skill']}: {s['description']}", s["instructions"].strip()]
    return "\n".join(parts)
