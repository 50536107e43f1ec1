"""AST side of the check: what each local of a function is bound to, in order.

The bytecode says *when* a local is live (``_flow``); only the source says *what*
it holds.  For every binding of a name in a function -- assignment targets,
``with ... as x``, ``for x in ...``, imports, walrus, ``except ... as``, parameters --
this module records where CPython stores it (so ``_flow`` can find that very
``STORE_FAST``) and the abstract value of its right-hand side (``_infer``).

A name read in an expression means its latest binding *before* it in source order:
shallow and flow-insensitive on purpose, because liveness -- the part that must be
exact -- comes from the bytecode, not from here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

import attrs

from agentrt.validate._infer import (
    Inference,
    LocalRef,
    ModuleScope,
    Ref,
    SymbolRef,
    decorator_name,
    element_of,
    instance_value,
)
from agentrt.validate._resolve import FunctionNode, Symbol, function_kind, import_targets, walk_scope
from agentrt.validate._values import Kind, Value

__all__ = ["Binding", "FunctionScope"]


@attrs.define
class Binding:
    """One place a name gets a value in a function.

    ``lineno``/``col`` are where CPython attributes the ``STORE_FAST`` (the target name;
    the statement for imports, ``except ... as``, ``def`` and ``class``), so ``_flow`` can
    find the store instructions of this very binding.
    """

    name: str
    lineno: int
    col: int
    value: Value | None
    kind: str  # param, assign, for, with, import, def, class, except, walrus, comprehension, other
    symbol: Symbol | None = None
    import_target: str | None = None
    node: ast.AST | None = attrs.field(default=None, eq=False)


class FunctionScope:
    """The bindings of one function (any ``def``/``async def``), in evaluation order."""

    def __init__(
        self,
        node: FunctionNode,
        qualname: str,
        module: ModuleScope,
        parent: FunctionScope | None,
        owner_class: ast.ClassDef | None,
    ) -> None:
        self.node = node
        self.qualname = qualname
        self.module = module
        self.parent = parent
        self.owner_class = owner_class
        self.bindings: list[Binding] = []
        self.params: dict[str, Binding] = {}
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()
        self.called_names: set[str] = set()
        self._collect_declarations()
        _Builder(self).build()

    def _collect_declarations(self) -> None:
        for sub in walk_scope(self.node.body):
            if isinstance(sub, ast.Global):
                self.declared_global.update(sub.names)
            elif isinstance(sub, ast.Nonlocal):
                self.declared_nonlocal.update(sub.names)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                self.called_names.add(sub.func.id)

    @property
    def local_names(self) -> set[str]:
        names = {b.name for b in self.bindings if b.kind != "comprehension"} | set(self.params)
        return names - self.declared_global - self.declared_nonlocal

    def latest(self, name: str) -> Binding | None:
        for binding in reversed(self.bindings):
            if binding.name == name and binding.kind != "comprehension":
                return binding
        return self.params.get(name)

    # --- name resolution ------------------------------------------------------------

    def ref(self, name: str) -> Ref | None:
        """What ``name`` means at the current point of the walk (or after it, once built)."""
        if name not in self.declared_global and name not in self.declared_nonlocal:
            binding = self.latest(name)
            if binding is not None:
                return binding_ref(binding, self.module)
            if name in self.local_names:
                return LocalRef(None)
        if name not in self.declared_global:
            scope = self.parent
            while scope is not None:
                if name in scope.local_names:
                    binding = scope.latest(name)
                    return binding_ref(binding, self.module) if binding is not None else LocalRef(None)
                scope = scope.parent
        return self.module.global_ref(name)


def binding_ref(binding: Binding, module: ModuleScope) -> Ref:
    if binding.symbol is not None:
        return SymbolRef(binding.symbol)
    if binding.import_target is not None:
        return module.import_ref(binding.import_target)
    return LocalRef(binding.value)


# --- the walk that records bindings ---------------------------------------------------------


class _Builder:
    """Walks one function body in evaluation order, appending a Binding per store."""

    def __init__(self, scope: FunctionScope) -> None:
        self.scope = scope
        self.infer = Inference(scope.module, scope)

    def build(self) -> None:
        self._params()
        self.stmts(self.scope.node.body)

    # parameters ----------------------------------------------------------------------

    def _params(self) -> None:
        scope = self.scope
        args = scope.node.args
        ordered = [*args.posonlyargs, *args.args]
        everything = [
            *ordered,
            *([args.vararg] if args.vararg else []),
            *args.kwonlyargs,
            *([args.kwarg] if args.kwarg else []),
        ]
        first = ordered[0].arg if ordered and scope.owner_class is not None else None
        self_name = first if self._is_method() else None
        cls_name = first if self._is_classmethod() else None
        for arg in everything:
            value: Value | None = None
            if arg.arg == cls_name:
                value = None  # the class itself: referable by module:qualname, and not a callback
            elif arg.arg == self_name and scope.owner_class is not None:
                symbol = Symbol("class", _class_qualname(scope), scope.module.info, scope.owner_class)
                value = instance_value(symbol, scope.module, as_self=True)
            elif arg in (args.vararg, args.kwarg):
                value = None
            elif _mentions_callable(arg.annotation) or arg.arg in scope.called_names:
                value = Value(Kind.CALLABLE_PARAMETER, f"function received as parameter {arg.arg!r}")
            scope.params[arg.arg] = Binding(arg.arg, arg.lineno, arg.col_offset, value, "param", node=arg)

    def _is_method(self) -> bool:
        if self.scope.owner_class is None:
            return False
        names = {decorator_name(d) for d in self.scope.node.decorator_list}
        return not names & {"staticmethod", "classmethod"}

    def _is_classmethod(self) -> bool:
        names = {decorator_name(d) for d in self.scope.node.decorator_list}
        return self.scope.owner_class is not None and "classmethod" in names

    # statements ----------------------------------------------------------------------

    def stmts(self, body: Sequence[ast.stmt]) -> None:
        for stmt in body:
            self.stmt(stmt)

    def stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            self.expr(stmt.value)
            value = self.infer.value(stmt.value)
            for target in stmt.targets:
                self.target(target, value, "assign")
        elif isinstance(stmt, ast.AnnAssign):
            self.expr(stmt.annotation if stmt.value is None else stmt.value)
            if stmt.value is not None:
                self.target(stmt.target, self.infer.value(stmt.value), "assign")
        elif isinstance(stmt, ast.AugAssign):
            self.expr(stmt.value)
            self.target(stmt.target, None, "other")
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.expr(stmt.iter)
            iterable = self.infer.value(stmt.iter)
            self.target(stmt.target, element_of(iterable), "for", stmt)
            self.stmts(stmt.body)
            self.stmts(stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.expr(item.context_expr)
                if item.optional_vars is not None:
                    manager = self.infer.value(item.context_expr)
                    entered = manager if manager is not None and manager.enter_self else None
                    self.target(item.optional_vars, entered, "with", stmt)
            self.stmts(stmt.body)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self._import(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for expr in [*stmt.decorator_list, *stmt.args.defaults, *filter(None, stmt.args.kw_defaults)]:
                self.expr(expr)
            qualname = f"{self.scope.qualname}.<locals>.{stmt.name}"
            symbol = Symbol(function_kind(stmt), qualname, self.scope.module.info, stmt)
            self._bind(stmt.name, stmt.lineno, stmt.col_offset, None, "def", symbol=symbol, node=stmt)
        elif isinstance(stmt, ast.ClassDef):
            for expr in [*stmt.decorator_list, *stmt.bases]:
                self.expr(expr)
            qualname = f"{self.scope.qualname}.<locals>.{stmt.name}"
            symbol = Symbol("class", qualname, self.scope.module.info, stmt)
            self._bind(stmt.name, stmt.lineno, stmt.col_offset, None, "class", symbol=symbol, node=stmt)
        elif isinstance(stmt, (ast.Try, ast.TryStar)):
            self.stmts(stmt.body)
            for handler in stmt.handlers:
                if handler.type is not None:
                    self.expr(handler.type)
                if handler.name:
                    self._bind(handler.name, handler.lineno, handler.col_offset, None, "except", node=handler)
                self.stmts(handler.body)
            self.stmts(stmt.orelse)
            self.stmts(stmt.finalbody)
        elif isinstance(stmt, ast.Match):
            self.expr(stmt.subject)
            for case in stmt.cases:
                self._pattern(case.pattern)
                if case.guard is not None:
                    self.expr(case.guard)
                self.stmts(case.body)
        elif isinstance(stmt, (ast.If, ast.While)):
            self.expr(stmt.test)
            self.stmts(stmt.body)
            self.stmts(stmt.orelse)
        else:
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.expr):
                    self.expr(child)
                elif isinstance(child, ast.stmt):
                    self.stmt(child)

    def _import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        for local, target in import_targets(stmt, self.scope.module.info.package):
            self._bind(local, stmt.lineno, stmt.col_offset, None, "import", import_target=target, node=stmt)

    def _pattern(self, pattern: ast.pattern) -> None:
        for sub in ast.walk(pattern):
            name = None
            if isinstance(sub, (ast.MatchAs, ast.MatchStar)):
                name = sub.name
            elif isinstance(sub, ast.MatchMapping):
                name = sub.rest
            if name and isinstance(sub, ast.pattern):
                self._bind(name, sub.lineno, sub.col_offset, None, "other", node=sub)

    # expressions: only the bindings they make (walrus, comprehension targets) --------------

    def expr(self, expr: ast.expr) -> None:
        for sub in _expr_nodes(expr):
            if isinstance(sub, ast.NamedExpr):
                self._bind(
                    sub.target.id,
                    sub.target.lineno,
                    sub.target.col_offset,
                    self.infer.value(sub.value),
                    "walrus",
                    node=sub.target,
                )
            elif isinstance(sub, ast.comprehension):
                for name in ast.walk(sub.target):
                    if isinstance(name, ast.Name):
                        self._bind(name.id, name.lineno, name.col_offset, None, "comprehension", node=name)

    # targets -------------------------------------------------------------------------

    def target(self, target: ast.expr, value: Value | None, kind: str, node: ast.AST | None = None) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, target.lineno, target.col_offset, value, kind, node=node or target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = value.elements if value is not None and value.elements is not None else None
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    self.target(element.value, None, kind, node)
                    continue
                part = parts[index] if parts is not None and index < len(parts) else None
                if parts is None and value is not None and value.kind is Kind.CONTAINER:
                    part = value.element
                self.target(element, part, kind, node)
        elif isinstance(target, ast.Starred):
            self.target(target.value, None, kind, node)
        else:  # attribute / subscript targets bind no local; their sub-expressions may
            self.expr(target)

    def _bind(
        self,
        name: str,
        lineno: int,
        col: int,
        value: Value | None,
        kind: str,
        *,
        symbol: Symbol | None = None,
        import_target: str | None = None,
        node: ast.AST | None = None,
    ) -> None:
        self.scope.bindings.append(Binding(name, lineno, col, value, kind, symbol, import_target, node))


def _expr_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Nodes of an expression in evaluation order (a walrus after its value, a
    comprehension's target after its iterable), not entering lambdas."""
    if isinstance(node, ast.Lambda):
        return
    if isinstance(node, ast.NamedExpr):
        yield from _expr_nodes(node.value)
        yield node
        return
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        for generator in node.generators:
            yield from _expr_nodes(generator.iter)
            yield generator
            for condition in generator.ifs:
                yield from _expr_nodes(condition)
        elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for element in elements:
            yield from _expr_nodes(element)
        return
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _expr_nodes(child)


def _mentions_callable(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    text = ast.unparse(annotation) if not isinstance(annotation, ast.Constant) else str(annotation.value)
    return "Callable" in text


def _class_qualname(scope: FunctionScope) -> str:
    qualname = scope.qualname
    return qualname.rpartition(".")[0] if "." in qualname else qualname
