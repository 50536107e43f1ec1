"""The composer's options A-D for missing roles, as gate replies that do what they say.

A role the spec wants but no project specialist, template or machinery agent fills is *missing*;
composition parks its lanes on the generic ``developer`` (``wanted_specialist`` remembers whom they
were for) and offers four options.  Each is a ``guild.team_decision.v1`` reply
``{"verb": "option", "choice": X, "proposal": SHA256, "reason": ..., ...}`` applied to every
missing role at once:

=====  =========================================================================================
A      mint a new specialist for each missing role; its lanes go to it in the same decision
       (minted on approval, through :meth:`Registry.mint_new`, which accepts this decision)
B      ``templates: {missing: template}``: each missing role's lanes go to the shipped template
       named for it (minted on approval, as every template of an approved team)
C      ``to: NAME`` (default ``developer``): the missing roles' lanes go to that specialist
D      proceed without them: their lanes are dropped and the roles listed as excluded; refused
       while another lane depends on a dropped one (``edit_dependencies`` first)
=====  =========================================================================================

Pure: the proposal and ``catalogue`` (name -> ``{source, default_tier, purpose}`` of every
specialist the project could use, from ``teams_plan``) in, a new proposal out.  None of the
options approves; the gate asks again with the new proposal.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any  # Any: proposals and decisions are JSON

from agentrt.exceptions import GateBlocked
from agentrt.teams.names import is_plain_name

__all__ = ["CHOICES", "OPTION_KEYS", "apply_option", "option_replies"]

CHOICES = ("A", "B", "C", "D")
OPTION_KEYS = ("choice", "reason", "to", "templates")
_WHERE = "guild.team_decision.v1"


def _plain(value: Any, key: str) -> str:
    """A name from a decision names files: a plain name, else the gate blocks (it never raises past it)."""
    if not is_plain_name(value):
        raise GateBlocked(_WHERE, key, f"{value!r} is not a plain name (letters, digits, '.', '_', '-')")
    return str(value)


def _lanes_for(proposal: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    return [lane for lane in proposal["lanes"] if lane.get("wanted_specialist") == name]


def _give(new: dict[str, Any], missing: str, to: str, role: dict[str, Any]) -> None:
    """Move the lanes parked for ``missing`` to ``to`` (adding its role once)."""
    if to not in [r["specialist"] for r in new["roles"]]:
        new["roles"].append(role)
    for lane in _lanes_for(new, missing):
        lane["specialist"] = to
        del lane["wanted_specialist"]


def _drop_idle_parking(new: dict[str, Any], parked_on: set[str]) -> None:
    """A machinery role added only to park lanes, with no lane left, leaves the team."""
    busy = {lane["specialist"] for lane in new["lanes"]}
    new["roles"] = [
        r
        for r in new["roles"]
        if r["specialist"] in busy or r["specialist"] not in parked_on or r.get("source") != "machinery"
    ]


def _catalogued(catalogue: Mapping[str, Any] | None, name: str, key: str, kinds: tuple[str, ...]) -> Any:
    entry = (catalogue or {}).get(name)
    if catalogue is not None and (entry is None or entry.get("source") not in kinds):
        known = sorted(n for n, e in catalogue.items() if e.get("source") in kinds)
        raise GateBlocked(
            _WHERE, key, f"{name!r} is not one of the {' or '.join(kinds)} specialists: {known}"
        )
    return entry or {}


def apply_option(
    proposal: Mapping[str, Any], decision: Mapping[str, Any], catalogue: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The proposal after option ``decision["choice"]`` for every missing role (see the module doc)."""
    choice = decision.get("choice")
    if choice not in CHOICES:
        raise GateBlocked(_WHERE, "choice", f"must be one of {', '.join(CHOICES)}; got {choice!r}")
    reason = decision.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise GateBlocked(_WHERE, "reason", f"option {choice} needs a reason")
    missing = list(proposal.get("missing") or [])
    if not missing:
        raise GateBlocked(_WHERE, "choice", "no role is missing: the options A-D have nothing to act on")
    for key in ("to", "templates"):
        if key in decision and (key, choice) not in (("to", "C"), ("templates", "B")):
            raise GateBlocked(_WHERE, key, f"is not an argument of option {choice}")
    new = copy.deepcopy(dict(proposal))
    parked_on = {lane["specialist"] for name in missing for lane in _lanes_for(new, name)}
    settled = {e.get("specialist") for e in new["excluded"]} - set(missing)
    if choice == "A":
        for name in missing:
            _plain(name, "specialist")
            role = {
                "specialist": name,
                "reason": reason,
                "source": "new",
                "default_tier": "mid",
                "purpose": "custom",
            }
            _give(new, name, name, role)
    elif choice == "B":
        templates = decision.get("templates")
        if not isinstance(templates, Mapping) or sorted(templates) != sorted(missing):
            pairs = ", ".join(f'"{m}": TEMPLATE' for m in missing)
            raise GateBlocked(
                _WHERE, "templates", f"option B names a shipped template for each missing role: {{{pairs}}}"
            )
        for name in missing:
            _plain(templates[name], "templates")
            entry = _catalogued(catalogue, templates[name], "templates", ("template", "existing"))
            role = {
                "specialist": templates[name],
                "reason": f"option B, for {name}: {reason}",
                "source": entry.get("source", "template"),
                "default_tier": entry.get("default_tier", "mid"),
                "purpose": entry.get("purpose"),
            }
            _give(new, name, templates[name], role)
    elif choice == "C":
        to = _plain(decision.get("to", "developer"), "to")
        entry = _catalogued(catalogue, to, "to", ("existing", "template", "machinery"))
        for name in missing:
            role = {
                "specialist": to,
                "reason": f"option C, takes the lanes of {name}: {reason}",
                "source": entry.get("source", "machinery"),
                "default_tier": entry.get("default_tier", "mid"),
                "purpose": entry.get("purpose"),
            }
            _give(new, name, to, role)
    else:  # D
        dropped = {lane["task_id"] for name in missing for lane in _lanes_for(new, name)}
        for lane in new["lanes"]:
            needs = [d for d in lane.get("depends_on") or [] if d in dropped]
            if lane["task_id"] not in dropped and needs:
                raise GateBlocked(
                    _WHERE,
                    "choice",
                    f"option D drops lane(s) {', '.join(sorted(needs))} that lane {lane['task_id']} depends "
                    "on; edit_dependencies first, or choose A, B or C",
                )
        new["lanes"] = [lane for lane in new["lanes"] if lane["task_id"] not in dropped]
    excluded = [e for e in new["excluded"] if e.get("specialist") in settled]
    if choice == "D":
        excluded += [{"specialist": name, "reason": f"option D: {reason}"} for name in missing]
    new["excluded"] = excluded
    _drop_idle_parking(new, parked_on)
    new["missing"] = []
    new.setdefault("decided_options", []).append({"choice": choice, "roles": missing, "reason": reason})
    return new


def option_replies(proposal: Mapping[str, Any], digest: str) -> dict[str, Any]:
    """The reply that takes each option for the proposal's missing roles (shown by the gate)."""
    missing = list(proposal.get("missing") or [])
    if not missing:
        return {}
    base = {"schema_version": _WHERE, "verb": "option", "proposal": digest, "reason": "WHY"}
    return {
        "A": {**base, "choice": "A"},
        "B": {**base, "choice": "B", "templates": dict.fromkeys(missing, "TEMPLATE")},
        "C": {**base, "choice": "C", "to": "developer"},
        "D": {**base, "choice": "D"},
    }
