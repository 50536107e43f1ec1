"""The import graph of agentrt has no cycles, and the layers import only downwards.

Every ``import`` in the package counts, including those inside functions (a lazy
import that dodges a cycle is still a cycle), the lazy re-exports of a package
(``lazy_exports(__name__, globals(), {"Name": "agentrt.x.y"})`` imports ``agentrt.x.y``
on first use) and those under ``if TYPE_CHECKING:``: they never run, but a module that
names another's class in its annotations depends on it all the same (a back edge hidden
there is how ``runtime`` <-> ``worker`` <-> ``registry`` once went unseen; a collaborator
declares a small Protocol of what it needs instead).
Importing ``agentrt.x.y`` is an edge to ``agentrt.x.y`` (or to ``agentrt.x`` when ``y``
is a name, not a module).

Run ``python -m tests.test_import_graph`` to print the graph between components
(``agentrt._sdk``, ``agentrt.llm``, ...), as in docs/architecture.md.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import agentrt

PACKAGE = Path(agentrt.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def imports_of(module: str) -> set[str]:
    """The agentrt modules ``module`` imports, anywhere in its body (``if TYPE_CHECKING:`` too)."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    targets: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_Import(self, node: ast.Import) -> None:
            targets.update(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                targets.add(sub if sub in MODULES else source)

    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    Visitor().visit(tree)
    targets.update(_lazy_exports(tree))
    return {t for t in targets if t in MODULES and t != module}


def _lazy_exports(tree: ast.Module) -> set[str]:
    """The modules named in the export table handed to ``lazy_exports(...)`` (agentrt/_lazy.py)."""
    tables = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "lazy_exports"
            and len(node.args) == 3
            and isinstance(node.args[2], ast.Name)
            and node.args[2].id in tables
        ):
            table = tables[node.args[2].id]
            found.update(  # "module" or "module:attribute"
                v.value.partition(":")[0]
                for v in table.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str)
            )
    return found


@functools.cache
def module_graph() -> dict[str, set[str]]:
    return {module: imports_of(module) for module in MODULES}


def component(module: str) -> str:
    """``agentrt._sdk.task`` -> ``agentrt._sdk``; top-level modules are their own component."""
    return ".".join(module.split(".")[:2])


@functools.cache
def component_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, targets in module_graph().items():
        graph[component(module)]
        for target in targets:
            if component(target) != component(module):
                graph[component(module)].add(component(target))
    return dict(graph)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_runtime_collaborators_do_not_import_the_runtime():
    graph = module_graph()
    for collaborator in ("worker", "registry", "driver", "stepper", "dispatch", "storeio"):
        assert "agentrt._runtime.runtime" not in graph[f"agentrt._runtime.{collaborator}"], collaborator


def test_the_graph_is_read_at_all():
    graph = module_graph()
    assert len(graph) > 50
    assert "agentrt._runtime.dispatch" in graph["agentrt._runtime.driver"]
    # a lazy import inside a function counts, and so does a package's lazy re-export
    assert "agentrt.stores" in graph["agentrt._runtime.runtime"]
    assert "agentrt._runtime" in graph["agentrt"]
    assert "agentrt.llm.scripted" in graph["agentrt.llm"]


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back():
    assert cycles(module_graph()) == []


def test_no_component_imports_itself_back():
    assert cycles(component_graph()) == []


# What a component may never import (docs/architecture.md, "rules"); names below ``agentrt.``.
def _names(words: str) -> set[str]:
    return {f"agentrt.{word}" for word in words.split()}


FORBIDDEN = {
    # the sharp core knows nothing above it
    "agentrt.exceptions": {"*"},
    "agentrt._codec": _names("_frames _runtime _sdk llm stores"),
    "agentrt._frames": _names("_runtime _sdk llm stores inspection"),
    "agentrt._context": _names("_frames lowlevel _runtime _sdk llm stores inspection _upgrade"),
    # the agent SDK does not know the host side
    "agentrt._sdk": _names("llm _runtime stores _frames"),
    # stores hold bytes: no frames, no codec, no SDK
    "agentrt.stores": _names("_sdk _frames _codec _runtime llm"),
    # the runtime reaches frames only through Machine (agentrt.lowlevel)
    "agentrt._runtime": _names("_frames _cli inspection"),
    "agentrt.llm": _names("_runtime _cli stores"),
}


@pytest.mark.parametrize("source", sorted(FORBIDDEN))
def test_layers_import_only_downwards(source):
    reaches = component_graph().get(source, set())
    banned = FORBIDDEN[source]
    wrong = sorted(reaches - {"agentrt._version"}) if "*" in banned else sorted(reaches & banned)
    assert wrong == [], f"{source} must not import {wrong}"


def test_only_frames_imports_bytecode():
    users = sorted(
        module
        for module, path in MODULES.items()
        if component(module) != "agentrt._frames"
        and any(
            (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "bytecode" for a in node.names))
            or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "bytecode")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )
    assert users == []


if __name__ == "__main__":
    graph = component_graph()
    for name in sorted(graph):
        print(f"{name} -> {', '.join(sorted(graph[name])) or '(nothing)'}")
    sys.exit(1 if cycles(graph) or cycles(module_graph()) else 0)
