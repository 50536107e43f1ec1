"""Find and read modules without importing them.

The validator must never run the code it checks (importing a module runs it), yet
it needs to know what an imported name is: an ``async def`` in a sibling module
(AR109), a class and whether it is marked ``@serializable`` (AR105), an async
generator (AR108).  So imports are resolved the way the import system would find
them, with :class:`importlib.machinery.PathFinder` one package level at a time
(``importlib.util.find_spec("a.b")`` would import ``a``), and the module found is
parsed, never executed.

Only the *project* is searched: the directory above the file's top-level package,
the file's own directory and the nearest directory holding ``pyproject.toml`` /
``setup.py`` / ``setup.cfg`` (and its ``src/``).  The standard library and
site-packages are deliberately not read: what ``asyncio`` or ``requests`` return is
known from a table (``_catalog``), and for any other third-party name the
validator does not guess.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs

__all__ = [
    "ModuleInfo",
    "Project",
    "Symbol",
    "find_module_file",
    "first_line",
    "module_name_for",
    "parse_module",
    "project_roots",
]

_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
#: How many ``from x import y`` re-exports are followed to find where ``y`` is defined.
_MAX_REEXPORT_HOPS = 4

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen
class Symbol:
    """A name defined in analysed source: a function, an async function, a class or a module.

    ``kind`` is one of ``function``, ``async_function`` (coroutine function),
    ``async_generator``, ``class`` or ``module``.
    """

    kind: str
    qualified: str  # "module.name" (dotted), for messages
    module: ModuleInfo
    node: ast.AST | None = attrs.field(default=None, eq=False)


def first_line(node: FunctionNode | ast.ClassDef) -> int:
    """The line CPython gives the code object (``co_firstlineno``): the first decorator's."""
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def is_async_generator(node: ast.AST) -> bool:
    """An ``async def`` whose own body (not nested scopes) contains ``yield``."""
    if not isinstance(node, ast.AsyncFunctionDef):
        return False
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk_scope(node.body))


def walk_scope(nodes: Sequence[ast.AST]) -> Iterator[ast.AST]:
    """Every node under ``nodes`` that belongs to the same scope (nested defs, lambdas
    and classes are yielded themselves but not entered)."""
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


class ModuleInfo:
    """What a module defines at top level, read from its source.

    Top-level means the module body and the bodies of ``if``/``try``/``with`` blocks at
    module level (the usual ``try: from x import y / except ImportError: def y`` dance);
    the first definition of a name wins.
    """

    def __init__(self, tree: ast.Module, path: str, name: str | None, package: str | None) -> None:
        self.tree = tree
        self.path = path
        self.name = name
        self.package = package
        self.imports: dict[str, str] = {}  # local name -> dotted target
        self.defs: dict[str, FunctionNode] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.assigned: dict[str, ast.expr] = {}  # last module-level `name = value`
        for stmt in _top_level(tree.body):
            self._note(stmt)

    def _note(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for local, target in import_targets(stmt, self.package):
                self.imports.setdefault(local, target)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.defs.setdefault(stmt.name, stmt)
        elif isinstance(stmt, ast.ClassDef):
            self.classes.setdefault(stmt.name, stmt)
        elif (
            isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        ):
            self.assigned[stmt.targets[0].id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
            self.assigned[stmt.target.id] = stmt.value

    def label(self) -> str:
        return self.name or Path(self.path).stem


def _top_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            yield from _top_level(stmt.body)
            for handler in stmt.handlers:
                yield from _top_level(handler.body)
            yield from _top_level(stmt.orelse)
            yield from _top_level(stmt.finalbody)
        elif isinstance(stmt, ast.With):
            yield from _top_level(stmt.body)


def import_targets(stmt: ast.Import | ast.ImportFrom, package: str | None) -> Iterator[tuple[str, str]]:
    """``(local name, dotted target)`` for each name an import statement binds.

    ``import a.b`` binds ``a`` to module ``a``; ``import a.b as c`` binds ``c`` to ``a.b``;
    ``from .m import f as g`` binds ``g`` to ``<package>.m.f``.  Star imports bind nothing
    we can name.  A relative import outside a known package is skipped.
    """
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                top = alias.name.split(".")[0]
                yield top, top
        return
    base = stmt.module or ""
    if stmt.level:
        if not package:
            return
        parts = package.split(".")
        if stmt.level - 1 >= len(parts):
            return
        anchor = parts[: len(parts) - (stmt.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    for alias in stmt.names:
        if alias.name == "*":
            continue
        yield alias.asname or alias.name, f"{base}.{alias.name}" if base else alias.name


def parse_module(source: str, filename: str) -> ast.Module:
    """``ast.parse``, retried once on ``SystemError``.

    CPython 3.11's AST conversion checks its recursion bookkeeping and raises
    ``SystemError: AST constructor recursion depth mismatch`` when a garbage-collected
    finalizer runs Python code in the middle of it (seen after an abandoned agent chain
    is collected); the same parse succeeds on the next try.
    """
    try:
        return ast.parse(source, filename)
    except SystemError:
        return ast.parse(source, filename)


def find_module_file(name: str, search: Sequence[str] | None = None) -> Path | None:
    """The source file (or package ``__init__.py`` / namespace directory) of module ``name``.

    Nothing is imported: each level is looked up with ``PathFinder`` in the
    ``submodule_search_locations`` of the level above.  With ``search=None`` the
    top level is looked up with ``importlib.util.find_spec`` (``sys.path`` and
    already-imported modules; a top-level name is found without importing it).
    """
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    spec: importlib.machinery.ModuleSpec | None
    try:
        if search is None:
            spec = importlib.util.find_spec(parts[0])
        else:
            spec = importlib.machinery.PathFinder.find_spec(parts[0], list(search))
        for depth in range(1, len(parts)):
            if spec is None or not spec.submodule_search_locations:
                return None
            spec = importlib.machinery.PathFinder.find_spec(
                ".".join(parts[: depth + 1]), list(spec.submodule_search_locations)
            )
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.origin and spec.origin.endswith(".py") and os.path.isfile(spec.origin):
        return Path(spec.origin)
    if spec.submodule_search_locations:  # a namespace package: a directory
        locations = list(spec.submodule_search_locations)
        return Path(locations[0]) if locations else None
    return None


def _package_dir_chain(directory: Path) -> list[Path]:
    """``directory`` and its ancestors, as long as each is a regular package."""
    chain: list[Path] = []
    while (directory / "__init__.py").is_file():
        chain.append(directory)
        if directory.parent == directory:
            break
        directory = directory.parent
    return chain


def module_name_for(path: Path) -> tuple[str | None, str | None]:
    """``(module name, package)`` of a source file, from the ``__init__.py`` files around it."""
    path = path.resolve()
    chain = _package_dir_chain(path.parent)
    packages = [p.name for p in reversed(chain)]
    if path.name == "__init__.py":
        name = ".".join(packages) or None
        return name, name
    package = ".".join(packages) or None
    if not all(p.isidentifier() for p in packages) or not path.stem.isidentifier():
        return None, None
    return (f"{package}.{path.stem}" if package else path.stem), package


def project_roots(path: Path) -> tuple[str, ...]:
    """Where the imports of ``path`` are looked for (see the module docstring)."""
    path = path.resolve()
    roots: list[Path] = []
    chain = _package_dir_chain(path.parent)
    roots.append(chain[-1].parent if chain else path.parent)
    for directory in [path.parent, *path.parent.parents]:
        if any((directory / marker).is_file() for marker in _PROJECT_MARKERS):
            roots.append(directory)
            if (directory / "src").is_dir():
                roots.append(directory / "src")
            break
    unique: list[str] = []
    for root in roots:
        if str(root) not in unique:
            unique.append(str(root))
    return tuple(unique)


class Project:
    """The modules reachable from one analysed file, parsed on demand and cached."""

    def __init__(self, roots: Sequence[str]) -> None:
        self.roots = tuple(roots)
        self._by_name: dict[str, ModuleInfo | None] = {}

    def module(self, name: str) -> ModuleInfo | None:
        """The parsed module ``name`` if it is project source, else ``None``."""
        if name in self._by_name:
            return self._by_name[name]
        self._by_name[name] = None  # guards against import cycles while parsing
        info = None
        found = find_module_file(name, self.roots) if self.roots else None
        if found is not None and found.is_file():
            try:
                source = found.read_text(encoding="utf-8")
                tree = parse_module(source, str(found))
            except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
                tree = None
            if tree is not None:
                package = name if found.name == "__init__.py" else name.rpartition(".")[0] or None
                info = ModuleInfo(tree, str(found), name, package)
        elif found is not None and found.is_dir():  # namespace package: no top-level names
            info = ModuleInfo(ast.Module(body=[], type_ignores=[]), str(found), name, name)
        self._by_name[name] = info
        return info

    def lookup(self, dotted: str, hops: int = 0) -> Symbol | None:
        """What ``dotted`` (``pkg.mod.func``) names in project source, if it is defined there."""
        parts = dotted.split(".")
        # `from pkg import name` reads the attribute of pkg first (its __init__ may re-export
        # a function that shadows the submodule of the same name), then the submodule.
        for cut in range(len(parts) - 1, 0, -1):
            module = self.module(".".join(parts[:cut]))
            if module is not None:
                return self.attribute(module, parts[cut:], hops)
        module = self.module(dotted)
        return Symbol("module", dotted, module, module.tree) if module is not None else None

    def attribute(self, module: ModuleInfo, names: Sequence[str], hops: int = 0) -> Symbol | None:
        """``module.names[0].names[1]...`` (classes and functions only go one level deep)."""
        first, rest = names[0], list(names[1:])
        if first in module.defs:
            node = module.defs[first]
            if rest:
                return None
            return Symbol(function_kind(node), f"{module.label()}.{first}", module, node)
        if first in module.classes:
            cls = module.classes[first]
            if not rest:
                return Symbol("class", f"{module.label()}.{first}", module, cls)
            return None
        target = module.imports.get(first)
        if target is not None and hops < _MAX_REEXPORT_HOPS:
            return self.lookup(".".join([target, *rest]), hops + 1)
        if module.name:
            sub = self.module(f"{module.name}.{first}")
            if sub is not None:
                sym = Symbol("module", sub.label(), sub, sub.tree)
                return self.attribute(sub, rest, hops) if rest else sym
        return None


def function_kind(node: FunctionNode) -> str:
    if isinstance(node, ast.AsyncFunctionDef):
        return "async_generator" if is_async_generator(node) else "async_function"
    return "function"
