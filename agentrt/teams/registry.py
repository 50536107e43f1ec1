"""Specialists: Markdown files with front matter in the project's ``.agentrt/agents/``.

An existing specialist is reused and never re-created.  The 15 shipped templates (package data under
``agentrt/teams/templates/``) become project specialists only when team composition mints them; a
brand-new role is minted only on an explicit request that passed the team gate (a ``guild.team_decision.v1``
``add`` with ``mint: true``).  Four machinery agents (advisor, context-manager, developer, team-lead)
run the machinery and are not domain roles.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any  # Any: JSON documents and gate decisions

import attrs

from agentrt.exceptions import ContractError
from agentrt.teams import _yaml
from agentrt.teams.contracts import TIERS
from agentrt.teams.names import check_name, confined

__all__ = [
    "MACHINERY",
    "Registry",
    "Specialist",
    "parse_specialist",
    "render_specialist",
    "template_names",
    "template_text",
]

_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
#: The machinery agents and their jobs (the reference's table); not domain roles, never minted.
MACHINERY: dict[str, str] = {
    "advisor": "Answers one escalated sub-question at the powerful tier. Never sees the raw project context.",
    "context-manager": "Assembles bounded context bundles and run-scoped evidence.",
    "developer": "The generic mid-tier implementer for lanes with no domain home.",
    "team-lead": "Owns one task cell: dispatches its specialists, reads their receipts, "
    "reports a goal status.",
}


@attrs.frozen
class Specialist:
    name: str
    purpose: str
    default_tier: str
    tools: tuple[str, ...]
    boundaries: tuple[str, ...]
    body: str = ""
    source: str = "project"  # project | template | machinery

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "purpose": self.purpose,
            "default_tier": self.default_tier,
            "tools": list(self.tools),
            "boundaries": list(self.boundaries),
        }


def parse_specialist(text: str, where: str = "specialist") -> Specialist:
    """A specialist file: front matter (name, purpose, default_tier, tools, boundaries) and a body."""
    header, body = _yaml.split_front_matter(text, where)
    for key in ("name", "purpose", "default_tier", "tools", "boundaries"):
        if key not in header:
            raise ContractError(where, key, "is required in the front matter")
    name = header["name"]
    if not isinstance(name, str) or not _NAME.match(name):
        raise ContractError(where, "name", f"must be a lower-case slug, got {name!r}")
    if header["default_tier"] not in TIERS:
        raise ContractError(
            where, "default_tier", f"must be one of {', '.join(TIERS)}; got {header['default_tier']!r}"
        )
    for key in ("tools", "boundaries"):
        if not isinstance(header[key], list) or not all(isinstance(v, str) for v in header[key]):
            raise ContractError(where, key, "must be a list of strings")
    if not isinstance(header["purpose"], str) or not header["purpose"]:
        raise ContractError(where, "purpose", "must be a non-empty string")
    return Specialist(
        name=name,
        purpose=header["purpose"],
        default_tier=header["default_tier"],
        tools=tuple(header["tools"]),
        boundaries=tuple(header["boundaries"]),
        body=body.strip(),
    )


def render_specialist(spec: Specialist) -> str:
    return f"---\n{_yaml.dump(spec.to_dict())}---\n\n{spec.body}\n"


def template_names() -> list[str]:
    """The shipped templates' names."""
    root = resources.files("agentrt.teams") / "templates"
    return sorted(p.name[:-3] for p in root.iterdir() if p.name.endswith(".md"))


def template_text(name: str) -> str:
    if name not in template_names():
        raise ContractError(
            "specialist template", name, f"is not shipped; templates are: {', '.join(template_names())}"
        )
    return (resources.files("agentrt.teams") / "templates" / f"{name}.md").read_text(encoding="utf-8")


class Registry:
    """The specialists of one project directory."""

    def __init__(self, project: str | os.PathLike[str]) -> None:
        self.project = Path(project)
        self.root = self.project / ".agentrt" / "agents"

    def path(self, name: str) -> Path:
        """``.agentrt/agents/<name>.md``; ``name`` must be a plain name (it comes from a gate decision)."""
        return confined(self.root, f"{check_name(name, 'specialist', 'name')}.md")

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.stem for p in self.root.glob("*.md"))

    def get(self, name: str) -> Specialist | None:
        path = self.path(name)
        if not path.is_file():
            return None
        return parse_specialist(path.read_text(encoding="utf-8"), str(path))

    def resolve(self, name: str) -> Specialist | None:
        """The project's specialist, else the shipped template (not minted), else a machinery agent."""
        found = self.get(name)
        if found is not None:
            return found
        if name in template_names():
            return attrs.evolve(parse_specialist(template_text(name), f"template {name}"), source="template")
        if name in MACHINERY:
            tier = "powerful" if name == "advisor" else "mid"
            return Specialist(name, "machinery", tier, (), (), MACHINERY[name], source="machinery")
        return None

    def _write_new(self, spec: Specialist) -> Path:
        """Write a specialist file that must not exist yet (``O_EXCL``: never overwrite)."""
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.path(spec.name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(render_specialist(spec))
        return path

    def mint_from_template(self, name: str) -> Specialist:
        """Team composition's mint: reuse the project's specialist if it exists, else copy the template."""
        existing = self.get(name)
        if existing is not None:
            return existing
        spec = parse_specialist(template_text(name), f"template {name}")
        try:
            self._write_new(spec)
        except FileExistsError:  # minted concurrently: reuse, never re-create
            return self.get(name) or spec
        return spec

    def mint_new(self, spec: Specialist, decision: Mapping[str, Any]) -> Specialist:
        """Mint a role that has no template; only with a gate decision ``add`` ``mint: true`` naming it."""
        asked = isinstance(decision, Mapping) and decision.get("specialist") == spec.name
        added = asked and decision.get("verb") == "add" and decision.get("mint") is True
        option_a = asked and decision.get("verb") == "option" and decision.get("choice") == "A"
        if not (added or option_a):
            raise ContractError(
                "specialist registry",
                spec.name,
                "a new role is minted only on an explicit request through the team gate: "
                f'a decision {{"verb": "add", "specialist": "{spec.name}", "mint": true, "reason": ...}}, '
                "or option A for the missing roles",
            )
        existing = self.get(spec.name)
        if existing is not None:
            return existing
        self._write_new(spec)
        return spec

    def catalogue(self) -> dict[str, dict[str, Any]]:
        """Every specialist a team of this project could use: name -> ``{source, default_tier,
        purpose}`` (the project's own, then the templates, then the machinery agents)."""
        out: dict[str, dict[str, Any]] = {}
        for name in [*self.names(), *template_names(), *MACHINERY]:
            if name not in out:
                found = self.resolve(name)
                if found is not None:
                    source = {"project": "existing"}.get(found.source, found.source)
                    out[name] = {
                        "source": source,
                        "default_tier": found.default_tier,
                        "purpose": found.purpose,
                    }
        return out

    def compose(self, needed: Sequence[str]) -> dict[str, list[str]]:
        """Match the needed roles: ``existing`` (reused), ``template`` (to mint), ``missing``."""
        out: dict[str, list[str]] = {"existing": [], "template": [], "machinery": [], "missing": []}
        templates = set(template_names())
        for name in needed:
            if self.get(name) is not None:
                out["existing"].append(name)
            elif name in templates:
                out["template"].append(name)
            elif name in MACHINERY:
                out["machinery"].append(name)
            else:
                out["missing"].append(name)
        return out
