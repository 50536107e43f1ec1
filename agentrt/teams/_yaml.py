"""YAML through PyYAML (extra ``agentrt[teams]``), loaded on first use with an error that names the fix."""

from __future__ import annotations

from typing import Any  # Any: PyYAML is untyped and loads any shape

from agentrt.teams.errors import ContractError

__all__ = ["dump", "load", "split_front_matter"]


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:  # pragma: no cover - the test extra installs it
        raise ImportError(
            "agentrt.teams reads and writes YAML front matter with PyYAML: pip install 'agentrt[teams]'"
        ) from None
    return yaml


def load(text: str, where: str) -> Any:
    yaml = _yaml()
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ContractError(where, None, f"is not valid YAML: {exc}") from None


def dump(value: Any) -> str:
    return str(_yaml().safe_dump(value, sort_keys=False, allow_unicode=True))


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    """``---\\nYAML\\n---\\nbody`` -> (mapping, body); a missing or non-mapping header is an error."""
    if not text.startswith("---\n"):
        raise ContractError(where, None, "must start with YAML front matter between '---' lines")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ContractError(where, None, "front matter is not closed by a '---' line")
    header = load(text[4:end], where)
    if not isinstance(header, dict):
        raise ContractError(where, None, "front matter must be a YAML mapping")
    return header, text[end + 5 :]
