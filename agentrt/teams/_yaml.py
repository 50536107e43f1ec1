"""YAML through PyYAML (extra ``agentrt[teams]``), loaded on first use with an error that names the fix.

Specs, specialist files and configs may come from anyone who can open a pull request, so YAML is
loaded with limits: at most :data:`MAX_YAML_CHARS` of text, :data:`MAX_ALIASES` alias uses, and
:data:`MAX_EXPANDED_NODES` nodes once every alias is expanded.  A "billion laughs" tree (nine
levels of nine aliases: 81 aliases, 9**9 leaves) loads as a small shared graph, and whatever walks
it next (the plan, a dump, a hash) expands it to gigabytes; counting the expansion before returning
refuses it in microseconds.  Real front matter uses a handful of aliases at most.
"""

from __future__ import annotations

from typing import Any  # Any: PyYAML is untyped and loads any shape

from agentrt.exceptions import ContractError

__all__ = ["MAX_ALIASES", "MAX_EXPANDED_NODES", "MAX_YAML_CHARS", "dump", "load", "split_front_matter"]

MAX_YAML_CHARS = 1_000_000
MAX_ALIASES = 100
MAX_EXPANDED_NODES = 100_000
_LOADERS: dict[str, Any] = {}


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:  # pragma: no cover - the test extra installs it
        raise ImportError(
            "agentrt.teams reads and writes YAML front matter with PyYAML: pip install 'agentrt[teams]'"
        ) from None
    return yaml


def _limited_loader() -> Any:
    """A SafeLoader subclass that counts alias uses and refuses more than :data:`MAX_ALIASES`."""
    if "limited" in _LOADERS:
        return _LOADERS["limited"]
    yaml = _yaml()

    class LimitedLoader(yaml.SafeLoader):  # type: ignore[misc,name-defined]  # yaml: an untyped local
        aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_ALIASES:
                    mark = self.peek_event().start_mark
                    raise yaml.YAMLError(
                        f"more than {MAX_ALIASES} aliases ({mark}); expand them, or split the document"
                    )
            return super().compose_node(parent, index)

        def compose_document(self) -> Any:
            node = super().compose_document()
            _check_expansion(yaml, node)
            return node

    _LOADERS["limited"] = LimitedLoader
    return LimitedLoader


def _check_expansion(yaml: Any, root: Any) -> None:
    """Refuse a node graph that expands (aliases followed) to more than :data:`MAX_EXPANDED_NODES`,
    or that refers to itself; sizes are memoized per node, so the check is linear in the graph."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise yaml.YAMLError(f"a recursive alias ({node.start_mark}); YAML here must be a tree")
        open_nodes.add(key)
        total = 1
        if isinstance(node.value, list):
            for child in node.value:
                for part in child if isinstance(child, tuple) else (child,):
                    total += size(part)
                    if total > MAX_EXPANDED_NODES:
                        raise yaml.YAMLError(
                            f"expands to more than {MAX_EXPANDED_NODES} values once its aliases are "
                            f"followed ({node.start_mark}); write the values out, or split the document"
                        )
        open_nodes.discard(key)
        sizes[key] = total
        return total

    if root is not None:
        size(root)


def load(text: str, where: str) -> Any:
    """The YAML document ``text`` (of ``where``, for errors), within the size and alias limits."""
    yaml = _yaml()
    if len(text) > MAX_YAML_CHARS:
        raise ContractError(
            where, None, f"is {len(text)} characters of YAML, over the limit of {MAX_YAML_CHARS}"
        )
    try:
        return yaml.load(text, Loader=_limited_loader())  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as exc:
        raise ContractError(where, None, f"is not valid YAML: {exc}") from None
    except RecursionError:
        raise ContractError(where, None, "is YAML nested too deeply") from None


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
