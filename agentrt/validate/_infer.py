"""What an expression holds: the abstract value of a right-hand side.

``Inference`` evaluates an expression to a :class:`~agentrt.validate._values.Value`
-- ``asyncio.create_task(...)`` is a Task, ``re.match(...)`` a Match, ``Foo()`` an
instance of a project class that may or may not be ``@serializable`` -- by resolving
names through the function's bindings (``_bindings``), the module's top level, its
imports (``_resolve``, never importing anything) and the table of library APIs
(``_catalog``).  Anything it cannot name stays ``None`` and is never reported: the
validator would rather miss a hazard than invent one (the runtime check still
catches it).
"""

from __future__ import annotations

import ast
import builtins
import inspect
from typing import Protocol

import attrs

from agentrt.validate import _catalog
from agentrt.validate._resolve import ModuleInfo, Project, Symbol, function_kind, walk_scope
from agentrt.validate._values import Kind, Value, a, worst

__all__ = [
    "ExternalRef",
    "Inference",
    "LocalRef",
    "ModuleScope",
    "NameScope",
    "Ref",
    "SymbolRef",
    "class_status",
    "decorator_name",
    "element_of",
    "instance_value",
]

_NEUTRAL_BASES = frozenset(
    {
        "builtins.object",
        "typing.Generic",
        "typing.Protocol",
        "typing.NamedTuple",
        "abc.ABC",
        "typing_extensions.Protocol",
        "typing_extensions.NamedTuple",
    }
)
_EXEMPT_BASES = frozenset(
    {
        "enum.Enum",
        "enum.IntEnum",
        "enum.StrEnum",
        "enum.Flag",
        "enum.IntFlag",
        "enum.ReprEnum",
        "typing.TypedDict",
        "typing_extensions.TypedDict",
    }
)
_MAX_CLASS_DEPTH = 8


@attrs.frozen
class LocalRef:
    """A name bound to a value (a local, a closure variable or a module-level global)."""

    value: Value | None


@attrs.frozen
class SymbolRef:
    """A name bound to a def, a class or a module of analysed source."""

    symbol: Symbol


@attrs.frozen
class ExternalRef:
    """A name imported from a module that is not analysed (stdlib, site-packages)."""

    dotted: str


Ref = LocalRef | SymbolRef | ExternalRef


class NameScope(Protocol):
    """What :class:`Inference` needs from a function scope: the meaning of a name."""

    def ref(self, name: str) -> Ref | None: ...


class ModuleScope:
    """The analysed file: its top-level names, plus the project to resolve imports in."""

    def __init__(self, info: ModuleInfo, project: Project) -> None:
        self.info = info
        self.project = project
        self._values: dict[str, Value | None] = {}
        self._evaluating: set[str] = set()
        self._class_status: dict[int, str] = {}
        self._marked_by_agent: set[int] | None = None

    def global_ref(self, name: str) -> Ref | None:
        info = self.info
        if name in info.defs:
            node = info.defs[name]
            return SymbolRef(Symbol(function_kind(node), f"{info.label()}.{name}", info, node))
        if name in info.classes:
            return SymbolRef(Symbol("class", f"{info.label()}.{name}", info, info.classes[name]))
        if name in info.imports:
            return self.import_ref(info.imports[name])
        if name in info.assigned:
            return LocalRef(self.global_value(name))
        if hasattr(builtins, name):
            return ExternalRef(f"builtins.{name}")
        return None

    def import_ref(self, dotted: str) -> Ref:
        symbol = self.project.lookup(dotted)
        return SymbolRef(symbol) if symbol is not None else ExternalRef(dotted)

    def global_value(self, name: str) -> Value | None:
        if name in self._values:
            return self._values[name]
        if name in self._evaluating:
            return None
        self._evaluating.add(name)
        try:
            value = Inference(self, None).value(self.info.assigned[name])
        finally:
            self._evaluating.discard(name)
        self._values[name] = value
        return value

    def marked_by_agent(self, node: ast.ClassDef) -> bool:
        """Whether ``agentrt.agent(input=..., output=...)`` in this file marks ``node``.

        ``agent()`` marks its input and output classes, and the attrs classes /
        dataclasses their fields mention, ``@serializable`` at import time
        (``agentrt/_sdk/agent.py``), so their instances may cross an await unmarked.
        """
        if self._marked_by_agent is None:
            self._marked_by_agent = set()
            infer = Inference(self, None)
            for call in ast.walk(self.info.tree):
                if isinstance(call, ast.Call) and _is_agent_factory(
                    infer.resolve(call.func) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
                ):
                    for keyword in call.keywords:
                        if keyword.arg in ("input", "output"):
                            self._mark_records(
                                infer.resolve(keyword.value)
                                if isinstance(keyword.value, (ast.Name, ast.Attribute))
                                else None
                            )
        return id(node) in self._marked_by_agent

    def _mark_records(self, ref: Ref | None, depth: int = 0) -> None:
        if not isinstance(ref, SymbolRef) or not isinstance(ref.symbol.node, ast.ClassDef):
            return
        node = ref.symbol.node
        assert self._marked_by_agent is not None
        if id(node) in self._marked_by_agent or depth > _MAX_CLASS_DEPTH or not _is_record_class(node):
            return
        self._marked_by_agent.add(id(node))
        home = ref.symbol.module
        home_scope = self if home is self.info else ModuleScope(home, self.project)
        infer = Inference(home_scope, None)
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign):
                for name in ast.walk(stmt.annotation):
                    if isinstance(name, (ast.Name, ast.Attribute)):
                        self._mark_records(infer.resolve(name), depth + 1)

    def module_attribute(self, module: ModuleInfo, name: str) -> Ref | None:
        """``module.name`` where ``module`` is project source."""
        symbol = self.project.attribute(module, [name])
        if symbol is not None:
            return SymbolRef(symbol)
        if name in module.imports:
            return ExternalRef(module.imports[name])
        if module.name and name not in module.assigned:
            return ExternalRef(f"{module.name}.{name}")
        return None


def _names_contextmanager(decorator: ast.expr) -> bool:
    """``@contextmanager`` / ``@contextlib.contextmanager`` (by name: the usual spellings)."""
    if isinstance(decorator, ast.Name):
        return decorator.id == "contextmanager"
    return isinstance(decorator, ast.Attribute) and decorator.attr == "contextmanager"


class Inference:
    """Evaluates expressions to abstract values in a scope (``None``: the module scope)."""

    def __init__(self, module: ModuleScope, scope: NameScope | None) -> None:
        self.module = module
        self.scope = scope

    def ref(self, name: str) -> Ref | None:
        return self.scope.ref(name) if self.scope is not None else self.module.global_ref(name)

    def resolve(self, expr: ast.expr) -> Ref | None:
        """What a name or attribute chain refers to."""
        if isinstance(expr, ast.Name):
            return self.ref(expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.resolve(expr.value)
            if isinstance(base, ExternalRef):
                return ExternalRef(f"{base.dotted}.{expr.attr}")
            if isinstance(base, SymbolRef):
                if base.symbol.kind == "module":
                    return self.module.module_attribute(base.symbol.module, expr.attr)
                return None
            base_value = base.value if isinstance(base, LocalRef) else self.value(expr.value)
            return LocalRef(_catalog.attribute_value(base_value, expr.attr) if base_value else None)
        return LocalRef(self.value(expr))

    # --- values ---------------------------------------------------------------------

    def value(self, expr: ast.expr | None) -> Value | None:
        if expr is None:
            return None
        if isinstance(expr, (ast.Name, ast.Attribute)):
            return self.ref_value(self.resolve(expr), expr)
        if isinstance(expr, ast.Call):
            return self.call(expr)
        if isinstance(expr, ast.Await):
            return self.awaited(expr)
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            items = tuple(self.value(e) for e in expr.elts)
            return _container(items, fixed=isinstance(expr, ast.Tuple))
        if isinstance(expr, ast.Dict):
            return _container(tuple(self.value(v) for v in expr.values), fixed=False)
        if isinstance(expr, ast.GeneratorExp) and any(g.is_async for g in expr.generators):
            return Value(Kind.ASYNC_GENERATOR, "async generator expression")
        if isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return _container((self.value(expr.elt),), fixed=False)
        if isinstance(expr, ast.DictComp):
            return _container((self.value(expr.value),), fixed=False)
        if isinstance(expr, ast.IfExp):
            return worst(self.value(expr.body), self.value(expr.orelse))
        if isinstance(expr, ast.BoolOp):
            return worst(*(self.value(v) for v in expr.values))
        if isinstance(expr, ast.NamedExpr):
            return self.value(expr.value)
        if isinstance(expr, ast.Starred):
            return self.value(expr.value)
        if isinstance(expr, ast.Subscript):
            return element_of(self.value(expr.value), expr.slice)
        return None

    def ref_value(self, ref: Ref | None, expr: ast.expr) -> Value | None:
        """The value of a name or attribute read (not called)."""
        if isinstance(ref, LocalRef):
            return ref.value
        if isinstance(ref, SymbolRef):
            symbol = ref.symbol
            if symbol.kind in ("function", "async_function", "async_generator") and _is_module_level(symbol):
                if symbol.module is self.module.info:
                    what = f"module-level function {symbol.qualified}"
                else:
                    what = f"function {symbol.qualified}, imported from another module"
                return Value(Kind.FUNCTION, what, symbol=symbol, callee=symbol.qualified)
            return None
        if isinstance(ref, ExternalRef):
            dotted = ref.dotted
            if dotted.startswith("builtins."):
                obj = getattr(builtins, dotted.removeprefix("builtins."), None)
                if obj is not None and inspect.isbuiltin(obj):
                    return Value(Kind.FUNCTION, f"builtin function {obj.__name__}", callee=dotted)
                return None
            if _catalog.is_agentrt(dotted):
                return None
            return Value(Kind.EXTERNAL_NAME, f"{dotted}, imported from another module", callee=dotted)
        return None

    def callee(self, func: ast.expr) -> tuple[str | None, Symbol | None, Value | None]:
        """``(dotted name, project symbol, receiver value)`` of what a call calls."""
        ref = self.resolve(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
        if isinstance(ref, ExternalRef):
            return ref.dotted, None, None
        if isinstance(ref, SymbolRef):
            return None, ref.symbol, None
        if isinstance(ref, LocalRef) and ref.value is not None and isinstance(func, ast.Name):
            held = ref.value
            if held.kind is Kind.FUNCTION and held.symbol is not None:
                return None, held.symbol, None
            if held.kind in (Kind.FUNCTION, Kind.EXTERNAL_NAME) and held.callee:
                return held.callee, None, None
        if isinstance(func, ast.Attribute):
            return None, None, self.value(func.value)
        return None, None, None

    def call(self, call: ast.Call) -> Value | None:
        dotted, symbol, receiver = self.callee(call.func)
        if dotted is not None:
            if dotted == "functools.partial":
                inner = self.value(call.args[0]) if call.args else None
                if inner is not None and inner.kind is Kind.BOUND_METHOD:
                    return Value(
                        Kind.BOUND_METHOD,
                        f"functools.partial of {a(inner.what)}",
                        origin=inner.origin,
                        family=inner.family,
                    )
                return Value(Kind.PARTIAL, "functools.partial object", origin=dotted)
            return _catalog.call_value(dotted)
        if symbol is not None:
            return self.symbol_call(symbol)
        if receiver is not None and isinstance(call.func, ast.Attribute):
            return _catalog.method_value(receiver, call.func.attr)
        return None

    def symbol_call(self, symbol: Symbol) -> Value | None:
        if symbol.kind == "async_function":
            return Value(
                Kind.COROUTINE,
                f"coroutine object from {symbol.qualified}(), not awaited yet",
                origin=symbol.qualified,
            )
        if symbol.kind == "async_generator":
            return Value(
                Kind.ASYNC_GENERATOR,
                f"async generator from {symbol.qualified}()",
                origin=symbol.qualified,
                symbol=symbol,
            )
        if symbol.kind == "class" and isinstance(symbol.node, ast.ClassDef):
            return instance_value(symbol, self.module)
        if isinstance(symbol.node, ast.FunctionDef) and symbol.module is self.module.info:
            return self.context_manager_value(symbol, symbol.node)
        return None

    def context_manager_value(self, symbol: Symbol, node: ast.FunctionDef) -> Value | None:
        """``f()`` of a ``@contextlib.contextmanager`` generator ``f`` whose ``with`` over an open
        resource encloses its ``yield``: a ``with f():`` across an await holds that generator's frame,
        and in it the resource (the runtime refuses it, AR112, at the resource).  A generator that
        holds plain data at its ``yield`` is carried by a signed blob, so it is no finding."""
        if not any(_names_contextmanager(d) for d in node.decorator_list):
            return None
        module = Inference(self.module, None)
        local: dict[str, Value | None] = {}
        for stmt in walk_scope(node.body):
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        local[target.id] = module.value(stmt.value)
        for stmt in walk_scope(node.body):
            if not isinstance(stmt, ast.With):
                continue
            if not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk_scope(stmt.body)):
                continue
            for item in stmt.items:
                expr = item.context_expr
                held = local.get(expr.id) if isinstance(expr, ast.Name) else module.value(expr)
                if held is not None and held.kind is Kind.RESOURCE:
                    return attrs.evolve(
                        held, what=f"context manager from {symbol.qualified}() holding {a(held.what)}"
                    )
        return None

    def awaited(self, expr: ast.Await) -> Value | None:
        if isinstance(expr.value, ast.Call):
            dotted, _, _ = self.callee(expr.value.func)
            if dotted is not None:
                return _catalog.awaited_value(dotted)
        return None


def _is_agent_factory(ref: Ref | None) -> bool:
    if isinstance(ref, ExternalRef):
        return _catalog.is_agentrt(ref.dotted) and ref.dotted.endswith(".agent")
    if isinstance(ref, SymbolRef):
        name = ref.symbol.module.name or ""
        node = ref.symbol.node
        return _catalog.is_agentrt(name) and isinstance(node, ast.FunctionDef) and node.name == "agent"
    return False


_RECORD_DECORATORS = frozenset({"define", "frozen", "mutable", "s", "attrs", "dataclass"})


def _is_record_class(node: ast.ClassDef) -> bool:
    """An attrs class or a dataclass (what ``agent()`` marks)."""
    return any(decorator_name(d) in _RECORD_DECORATORS for d in node.decorator_list)


def _is_module_level(symbol: Symbol) -> bool:
    node = symbol.node
    return (
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and symbol.module.defs.get(node.name) is node
    )


def _container(items: tuple[Value | None, ...], *, fixed: bool) -> Value | None:
    inner = worst(*items)
    if inner is None:
        return None
    return Value(
        Kind.CONTAINER, f"container holding {a(inner.what)}", element=inner, elements=items if fixed else None
    )


def element_of(value: Value | None, index: ast.expr | None = None) -> Value | None:
    """What indexing or iterating over ``value`` yields."""
    if value is None:
        return None
    if value.elements is not None and isinstance(index, ast.Constant) and isinstance(index.value, int):
        try:
            return value.elements[index.value]
        except IndexError:
            return None
    if value.kind in (Kind.CONTAINER, Kind.MATCH_ITERATOR):
        return value.element
    return None


# --- classes ----------------------------------------------------------------------------


def class_status(symbol: Symbol, module: ModuleScope, depth: int = 0) -> str:
    """``serializable`` (marked, or a marked base), ``exempt`` (exceptions, enums, TypedDict:
    the codec holds them without the mark), ``plain`` (a class agentrt refuses) or
    ``unknown`` (a base we cannot see: do not guess)."""
    node = symbol.node
    if not isinstance(node, ast.ClassDef) or depth > _MAX_CLASS_DEPTH:
        return "unknown"
    cache = module._class_status
    if id(node) in cache:
        return cache[id(node)]
    cache[id(node)] = "unknown"  # cycle guard
    status = _compute_class_status(node, symbol.module, module, depth)
    cache[id(node)] = status
    return status


def decorator_name(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Call):
        expr = expr.func
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _compute_class_status(node: ast.ClassDef, home: ModuleInfo, module: ModuleScope, depth: int) -> str:
    if any(decorator_name(d) == "serializable" for d in node.decorator_list):
        return "serializable"
    home_scope = module if home is module.info else ModuleScope(home, module.project)
    if module.marked_by_agent(node) or (home_scope is not module and home_scope.marked_by_agent(node)):
        return "serializable"
    statuses = []
    for base in node.bases:
        if isinstance(base, ast.Subscript):
            base = base.value
        ref = (
            Inference(home_scope, None).resolve(base) if isinstance(base, (ast.Name, ast.Attribute)) else None
        )
        statuses.append(_base_status(ref, module, depth))
    for status in ("serializable", "exempt", "unknown"):
        if status in statuses:
            return status
    return "plain"


def _base_status(ref: Ref | None, module: ModuleScope, depth: int) -> str:
    if isinstance(ref, SymbolRef) and ref.symbol.kind == "class":
        return class_status(ref.symbol, module, depth + 1)
    if isinstance(ref, ExternalRef):
        dotted = ref.dotted
        if dotted in _EXEMPT_BASES:
            return "exempt"
        if dotted in _NEUTRAL_BASES:
            return "plain"
        if dotted.startswith("builtins."):
            obj = getattr(builtins, dotted.removeprefix("builtins."), None)
            if isinstance(obj, type) and issubclass(obj, BaseException):
                return "exempt"
            if isinstance(obj, type):
                return "plain"
    return "unknown"


def instance_value(symbol: Symbol, module: ModuleScope, *, as_self: bool = False) -> Value | None:
    """An instance of a project class that agentrt would refuse, or ``None``."""
    node = symbol.node
    if not isinstance(node, ast.ClassDef) or class_status(symbol, module) != "plain":
        return None
    methods = frozenset(
        stmt.name for stmt in node.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    enter_self = True
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in (
            "__enter__",
            "__aenter__",
        ):
            enter_self = any(
                isinstance(r, ast.Return) and isinstance(r.value, ast.Name) and r.value.id == "self"
                for r in walk_scope(stmt.body)
            )
    prefix = "the instance of" if as_self else "instance of"
    return Value(
        Kind.INSTANCE,
        f"{prefix} class {symbol.qualified}, not marked @agentrt.serializable",
        origin=symbol.qualified,
        methods=methods,
        enter_self=enter_self,
    )
