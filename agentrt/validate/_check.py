"""Putting the two halves together for one source file.

``compile()`` gives the code objects the runtime will checkpoint (every coroutine
and async generator, nested ones included, found by walking ``co_consts``); the AST
gives what each of their locals holds.  A code object is matched to its
``async def`` by ``(co_firstlineno, co_name)``, which CPython sets from the first
decorator's line.  Nothing is imported or executed.
"""

from __future__ import annotations

import ast
import inspect
import io
import re
import tokenize
from collections.abc import Generator, Iterator
from pathlib import Path
from types import CodeType

import attrs

from agentrt.validate import _rules
from agentrt.validate._bindings import Binding, FunctionScope
from agentrt.validate._flow import CodeFlow, Crossing
from agentrt.validate._infer import Inference, ModuleScope
from agentrt.validate._model import Finding
from agentrt.validate._resolve import (
    FunctionNode,
    ModuleInfo,
    Project,
    first_line,
    module_name_for,
    parse_module,
    project_roots,
)
from agentrt.validate._rules import Raw, Verdict
from agentrt.validate._values import Value

__all__ = ["agent_functions", "check_file", "check_source", "ignore_comments"]

_ASYNC_FLAGS = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_IGNORE = re.compile(r"#\s*agentrt:\s*ignore\b(?:\[([A-Za-z0-9_,\s]*)\])?")
ALL_CODES = "*"


def ignore_comments(source: str) -> dict[int, frozenset[str]]:
    """Line -> codes silenced by ``# agentrt: ignore[AR105, AR112]`` (``*`` for a bare ignore)."""
    result: dict[int, frozenset[str]] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return result
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        match = _IGNORE.search(token.string)
        if match is None:
            continue
        if match.group(1) is None:
            codes = frozenset({ALL_CODES})
        else:
            codes = frozenset(c.strip().upper() for c in match.group(1).split(",") if c.strip())
        line = token.start[0]
        result[line] = result.get(line, frozenset()) | codes
    return result


#: The keywords of ``agent(...)`` that take the agent's own code.
_AGENT_CODE_KEYWORDS = ("run", "start", "on_tool_results")


def agent_functions(tree: ast.Module) -> set[str]:
    """The module-level functions of ``tree`` that are agent code: those passed to ``agent(run=...)``
    (or ``start=`` / ``on_tool_results=``) in the module, and, transitively, the module-level
    functions they name (the helpers they call or await).  Read from the AST, nothing imported."""
    callers = {"agent"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "agentrt":
            callers.update(alias.asname or alias.name for alias in node.names if alias.name == "agent")
    functions = {
        node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    pending: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = (
            func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        )
        if called not in callers:
            continue
        for keyword in node.keywords:
            if keyword.arg in _AGENT_CODE_KEYWORDS and isinstance(keyword.value, ast.Name):
                pending.append(keyword.value.id)
    found: set[str] = set()
    while pending:
        name = pending.pop()
        if name in found or name not in functions:
            continue
        found.add(name)
        pending.extend(
            n.id for n in ast.walk(functions[name]) if isinstance(n, ast.Name) and n.id in functions
        )
    return found


def _silenced(finding: Finding, ignores: dict[int, frozenset[str]]) -> bool:
    for line in (finding.line, finding.await_line):
        codes = ignores.get(line) if line is not None else None
        if codes and (ALL_CODES in codes or finding.code in codes):
            return True
    return False


@attrs.define
class _FunctionIndex:
    """Every ``def`` of the file with its qualname, enclosing function and owning class."""

    by_key: dict[tuple[int, str], FunctionNode] = attrs.Factory(dict)
    qualname: dict[int, str] = attrs.Factory(dict)
    parent: dict[int, FunctionNode | None] = attrs.Factory(dict)
    owner: dict[int, ast.ClassDef | None] = attrs.Factory(dict)

    def walk(
        self, node: ast.AST, prefix: str, function: FunctionNode | None, owner: ast.ClassDef | None
    ) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = prefix + child.name
                self.by_key.setdefault((first_line(child), child.name), child)
                self.qualname[id(child)] = qualname
                self.parent[id(child)] = function
                self.owner[id(child)] = owner
                self.walk(child, qualname + ".<locals>.", child, None)
            elif isinstance(child, ast.ClassDef):
                self.walk(child, prefix + child.name + ".", function, child)
            elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                self.walk(child, prefix, function, owner)


class _FileCheck:
    def __init__(self, source: str, path: str, project: Project | None, agents_only: bool = False) -> None:
        self.source = source
        self.path = path
        tree = parse_module(source, path)
        #: with ``agents_only``: the top-level functions to check (see :func:`agent_functions`)
        self.only: set[str] | None = agent_functions(tree) if agents_only else None
        self.code = compile(source, path, "exec", dont_inherit=True)
        real = Path(path)
        if real.is_file():
            name, package = module_name_for(real)
            roots = project_roots(real)
        else:
            name, package, roots = None, None, ()
        self.project = project if project is not None else Project(roots)
        self.module = ModuleScope(ModuleInfo(tree, path, name, package), self.project)
        self.index = _FunctionIndex()
        self.index.walk(tree, "", None, None)
        self._scopes: dict[int, FunctionScope] = {}

    def scope(self, node: FunctionNode) -> FunctionScope:
        scope = self._scopes.get(id(node))
        if scope is None:
            parent_node = self.index.parent.get(id(node))
            parent = self.scope(parent_node) if parent_node is not None else None
            scope = FunctionScope(
                node, self.index.qualname[id(node)], self.module, parent, self.index.owner.get(id(node))
            )
            self._scopes[id(node)] = scope
        return scope

    def run(self) -> list[Finding]:
        findings: list[Finding] = []
        for code in _code_objects(self.code):
            if not code.co_flags & _ASYNC_FLAGS:
                continue
            if self.only is not None and code.co_qualname.split(".<locals>.")[0] not in self.only:
                continue
            node = self.index.by_key.get((code.co_firstlineno, code.co_name))
            if isinstance(node, ast.AsyncFunctionDef):
                findings.extend(self.function(code, node))
        ignores = ignore_comments(self.source)
        unique = {(f.code, f.line, f.col, f.function, f.variable): f for f in findings}
        return sorted(f for f in unique.values() if not _silenced(f, ignores))

    # --- one coroutine / async generator ------------------------------------------------

    def function(self, code: CodeType, node: ast.AsyncFunctionDef) -> Iterator[Finding]:
        """Findings for one coroutine / async generator: its constructs, the values live in
        its locals at its suspensions, and the closure variables it can read."""
        scope = self.scope(node)
        flow = CodeFlow(code)
        infer = Inference(self.module, scope)
        covered = yield from self._constructs(scope, infer, code.co_qualname)
        yield from self._live_locals(scope, flow, code.co_qualname, covered)
        yield from self._closure_variables(scope, flow, code)

    def _constructs(
        self, scope: FunctionScope, infer: Inference, qualname: str
    ) -> Generator[Finding, None, set[tuple[str, int, int]]]:
        """Construct rules; returns the `with ... as x` bindings a stack finding already covers."""
        covered: set[tuple[str, int, int]] = set()
        raws: list[Raw] = []
        for raw, covers in _rules.held_by_statement(scope, infer):
            raws.append(raw)
            if covers is not None:
                covered.add(covers)
        raws.extend(_rules.ar102_foreign_await(scope, infer))
        raws.extend(_rules.ar107_async_generator(scope))
        raws.extend(_rules.ar108_streaming_async_for(scope, infer))
        raws.extend(_rules.ar109_imported_async(scope, infer))
        raws.extend(_rules.ar111_closing_async_generator(scope, infer))
        for raw in raws:
            yield self._finding(
                raw.code, raw.severity, raw.line, raw.col, raw.await_line, qualname, raw.variable, raw.message
            )
        return covered

    def _live_locals(
        self, scope: FunctionScope, flow: CodeFlow, qualname: str, covered: set[tuple[str, int, int]]
    ) -> Iterator[Finding]:
        """Parameters and bindings whose value reaches a suspension where it is live."""
        for name, binding in scope.params.items():
            verdict = _rules.judge(binding.value, called=name in scope.called_names)
            if verdict is not None and binding.value is not None:
                crossing = flow.crossing(name, None)
                if crossing is not None:
                    yield self._live(binding, binding.value, verdict, crossing, qualname)

        per_line: dict[tuple[str, int], int] = {}
        for binding in scope.bindings:
            per_line[(binding.name, binding.lineno)] = per_line.get((binding.name, binding.lineno), 0) + 1
        for binding in scope.bindings:
            if binding.value is None or (binding.name, binding.lineno, binding.col) in covered:
                continue
            verdict = _rules.judge(binding.value, called=binding.name in scope.called_names)
            if verdict is None:
                continue
            # The STORE_FAST of this very binding: by line and column, or by line alone when
            # it is the only binding of the name on its line (imports, `except ... as`).
            unique = per_line[(binding.name, binding.lineno)] == 1
            starts = flow.stores_at(binding.name, binding.lineno, binding.col, exact_only=not unique)
            crossing = flow.crossing(binding.name, starts) if starts else None
            if crossing is not None:
                yield self._live(binding, binding.value, verdict, crossing, qualname)

    def _closure_variables(self, scope: FunctionScope, flow: CodeFlow, code: CodeType) -> Iterator[Finding]:
        """Free variables bound by an enclosing function: live in every suspension of this frame."""
        site = flow.first_site()
        if site is None:
            return
        for name in code.co_freevars:
            outer = _enclosing_binding(scope, name)
            if outer is None or outer.value is None:
                continue
            verdict = _rules.judge(outer.value)
            if verdict is not None:
                crossing = Crossing(site, len(flow.analysis.sites))
                yield self._live(outer, outer.value, verdict, crossing, code.co_qualname, closure=True)

    def _live(
        self,
        binding: Binding,
        value: Value,
        verdict: Verdict,
        crossing: Crossing,
        qualname: str,
        *,
        closure: bool = False,
    ) -> Finding:
        site = crossing.first
        where = "yield" if site.kind.value != "await" else "await"
        line = site.lineno
        subject = f"closure variable {binding.name!r}" if closure else f"variable {binding.name!r}"
        bound = f", bound at line {binding.lineno}," if closure else ""
        message = (
            f"{subject} ({value.what}){bound} is live across the {where} at line {line} in "
            f"{qualname}(): {verdict.why}; fix: {verdict.fix}"
        )
        return self._finding(
            verdict.code, verdict.severity, binding.lineno, binding.col, line, qualname, binding.name, message
        )

    def _finding(
        self,
        code: str,
        severity: str,
        line: int,
        col: int,
        await_line: int | None,
        function: str,
        variable: str | None,
        message: str,
    ) -> Finding:
        return Finding(
            path=self.path,
            line=line,
            col=col + 1,
            code=code,
            severity=severity,  # type: ignore[arg-type]  # the rules' severities are the Literal's values, typed str
            await_line=await_line,
            function=function,
            variable=variable,
            message=message,
        )


def _enclosing_binding(scope: FunctionScope, name: str) -> Binding | None:
    outer = scope.parent
    while outer is not None:
        if name in outer.local_names:
            return outer.latest(name)
        outer = outer.parent
    return None


def _code_objects(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _code_objects(const)


def check_source(
    source: str, path: str = "<string>", *, project: Project | None = None, agents_only: bool = False
) -> list[Finding]:
    """Findings for one module's source.  Raises ``SyntaxError`` if it does not compile.

    ``agents_only``: only the agent code (:func:`agent_functions`), not every ``async def``:
    for a host project whose web handlers and jobs are coroutines too.
    """
    return _FileCheck(source, path, project, agents_only).run()


def check_file(
    path: str | Path, *, project: Project | None = None, agents_only: bool = False
) -> list[Finding]:
    """Findings for one ``.py`` file (read as UTF-8 / its coding cookie, never imported)."""
    with tokenize.open(path) as handle:
        source = handle.read()
    return check_source(source, str(path), project=project, agents_only=agents_only)
