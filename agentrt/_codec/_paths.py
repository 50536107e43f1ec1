"""Where a refused value sits: re-walk the graph and build ``CannotCrossAwait``.

Runs only after encoding failed, so clarity beats speed.  The walk follows the
same edges the encoder does (container items, instance state, closure cells,
defaults, bound ``__self__``, extension children) in the same depth-first
order, so the value reported is the first one the encoder would have choked on.
Extension children carry frame locations: entering one makes its frame the
reported function and line, and its label the variable, so the innermost frame
holding the bad value wins.
"""

from __future__ import annotations

import functools
import json
import types
from collections.abc import Callable, Iterable
from typing import Any  # Any: walks any Python object graph

import attrs

from agentrt._codec import _wire
from agentrt._codec._code_identity import findable
from agentrt._codec._extension import Location, extension_for_type
from agentrt._codec._hazards import FIX_PLAIN_DATA, Refusal, bound_method_fix, classify, type_name
from agentrt._codec._reduce import (
    MUTABLE_BASES,
    PASSTHROUGH,
    Refused,
    Unresolvable,
    builtin_base,
    reduce_value,
)
from agentrt._codec._refs import lookup_name, unwrap_method
from agentrt._codec._serializable import is_serializable
from agentrt.exceptions import CannotCrossAwait

_ATOMS = frozenset({type(None), bool, int, float, complex, str, bytes})
_CALL = _wire.PLACEHOLDERS["call"]
_MAX_KEY_CHARS = 40

Edge = tuple[str, Any, "Location | None", bool]  # (path component, child, frame location, binds the parent)


@attrs.frozen
class _Where:
    variable: str | None
    function: str | None
    filename: str | None
    lineno: int | None


_NOWHERE = _Where(None, None, None, None)


def _key(key: object) -> str:
    text = json.dumps(key, ensure_ascii=False) if type(key) is str else repr(key)
    return text if len(text) <= _MAX_KEY_CHARS else text[:_MAX_KEY_CHARS] + "..."


def _join(path: str, component: str) -> str:
    if not path:
        return component[1:] if component.startswith(".") else component
    if not component or component.startswith(("[", ".")):
        return path + component
    return f"{path}.{component}"


def _state_edges(state: object) -> list[Edge]:
    if type(state) is dict:
        return [(f".{name}", value, None, False) for name, value in state.items()]
    if type(state) is tuple and len(state) == 2 and all(part is None or type(part) is dict for part in state):
        return [edge for part in state for edge in _state_edges(part)]
    return [(".<state>", state, None, False)]


def _items(values: Iterable[object], prefix: str = "") -> list[Edge]:
    return [(f"{prefix}[{i}]", value, None, False) for i, value in enumerate(values)]


def _function_edges(fn: types.FunctionType) -> list[Edge]:
    if unwrap_method(lookup_name(fn.__module__, fn.__qualname__)) is fn:
        return []
    edges = _items(fn.__defaults__ or (), ".__defaults__")
    edges += [(f".__kwdefaults__[{_key(k)}]", v, None, False) for k, v in (fn.__kwdefaults__ or {}).items()]
    names = fn.__code__.co_freevars
    edges += [
        (f".<closure cell {name!r}>", cell, None, False)
        for name, cell in zip(names, fn.__closure__ or (), strict=False)
    ]
    edges += [(f".{name}", value, None, False) for name, value in fn.__dict__.items()]
    return edges


def _exception_edges(exc: BaseException) -> list[Edge]:
    edges = _items(exc.args, ".args")
    edges += [(".__cause__", exc.__cause__, None, False), (".__context__", exc.__context__, None, False)]
    edges += [(f".{name}", value, None, False) for name, value in exc.__dict__.items()]
    return edges


def _instance_edges(obj: Any) -> list[Edge]:
    edges = _state_edges(obj.__getstate__())
    base: Any = builtin_base(type(obj))
    if base is dict:
        edges += [(f"[{_key(k)}]", v, None, False) for k, v in dict.items(obj)]
    elif base in MUTABLE_BASES or base in (tuple, frozenset):
        edges += _items(base.__iter__(obj))
    return edges


class _Scratch:
    """A throwaway encode context for probing one value, in the mode of the blob being written."""

    flags = 0
    shared_floats: dict[int, tuple[float]] | None = None

    def __init__(self, signed: bool) -> None:
        self.signed = signed
        self.reads: set[object] = set()

    def code_ref(self, code: types.CodeType, module: str) -> int:
        reason = findable(code, module)
        if reason is not None:
            raise Unresolvable(reason)
        return 0

    def need(self, feature: str) -> None:
        """Nothing to announce: no blob is written."""


def _reduced_edges(obj: object, signed: bool) -> list[Edge]:
    reduced = reduce_value(_Scratch(signed), obj)
    if type(reduced) is not tuple:
        return []
    if reduced[0] is _CALL:  # the pickle protocol: the call's arguments, then state and items
        edges = _items(reduced[1][2] or (), ".<argument>")
        if len(reduced) > 2:
            state, items, pairs = reduced[2]
            if state is not None:
                edges += _state_edges(state)
            edges += _items(items or ())
            edges += [(f"[{_key(k)}]", v, None, False) for k, v in pairs or ()]
        return edges
    parts = list(reduced[1])
    if len(reduced) > 2 and reduced[2] is not None:
        parts.append(reduced[2])
    return [(".<contents>", part, None, False) for part in parts]


def children(obj: Any, signed: bool = False) -> list[Edge]:
    """The values ``obj`` leads the encoder to, with path components."""
    tp = type(obj)
    if tp in _ATOMS:
        return []
    if tp is list or tp is tuple:
        return _items(obj)
    if tp is dict:
        edges: list[Edge] = []
        for i, (key, value) in enumerate(list(obj.items())):
            if type(key) not in _ATOMS:
                edges.append((f".<key {i}>", key, None, False))
            edges.append((f"[{_key(key)}]", value, None, False))
        return edges
    if tp is set or tp is frozenset:
        return [(f".<element {i}>", value, None, False) for i, value in enumerate(obj)]
    ext = extension_for_type(tp)
    if ext is not None:
        return [(label, value, location, False) for label, value, location in ext.children(obj)]
    if tp is types.FunctionType:
        return _function_edges(obj)
    if tp is types.CellType:
        try:
            return [("", obj.cell_contents, None, False)]
        except ValueError:
            return []
    if tp is types.MethodType:
        return [(".__self__", obj.__self__, None, True), (".__func__", obj.__func__, None, False)]
    if tp in (types.BuiltinFunctionType, types.MethodWrapperType):
        owner = obj.__self__
        if owner is None or isinstance(owner, (types.ModuleType, type)):
            return []
        return [(".__self__", owner, None, True)]
    if tp is functools.partial:
        edges = [(".func", obj.func, None, True), *_items(obj.args, ".args")]
        return edges + [(f".keywords[{_key(k)}]", v, None, False) for k, v in obj.keywords.items()]
    if isinstance(obj, (type, types.ModuleType)):
        return []
    if isinstance(obj, BaseException):
        return _exception_edges(obj)
    if is_serializable(tp):
        return _instance_edges(obj)
    return _reduced_edges(obj, signed)


def _walk(
    root: object, verdict_of: Callable[[object], Refusal | None], signed: bool = False
) -> tuple[object, Refusal, str, _Where] | None:
    stack: list[tuple[object, str, _Where, tuple[object, str, _Where] | None]] = [(root, "", _NOWHERE, None)]
    seen: set[int] = set()
    while stack:
        obj, path, where, binder = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        verdict = verdict_of(obj)
        if verdict is not None:
            if binder is not None and not (verdict.code == "AR112" and _is_exit(binder[0])):
                # the object a method/partial is bound to: report the callable (AR106); a lock or
                # file held through its bound __exit__ is reported itself (AR112)
                parent, parent_path, parent_where = binder
                return (
                    parent,
                    Refusal("AR106", _callable_name(parent), bound_method_fix_for(parent)),
                    parent_path,
                    parent_where,
                )
            return obj, verdict, path, where
        try:
            edges = children(obj, signed)
        except Exception:  # a failing __getstate__ etc.: nothing more to see below this value
            edges = []
        # Suspended frames (extension objects) first: the innermost frame holding the value wins.
        nested = [edge for edge in edges if extension_for_type(type(edge[1])) is not None]
        if nested:
            edges = nested + [edge for edge in edges if extension_for_type(type(edge[1])) is None]
        for component, child, location, binds in reversed(edges):
            if type(child) in _ATOMS:
                continue
            if location is not None:
                child_where = _Where(component, location.function, location.filename, location.lineno)
                child_path = component
            else:
                child_where, child_path = where, _join(path, component)
            stack.append((child, child_path, child_where, (obj, path, where) if binds else None))
    return None


def _callable_name(obj: Any) -> str:
    if isinstance(obj, types.MethodType):
        return f"bound method {getattr(obj.__func__, '__qualname__', '?')}"
    if isinstance(obj, functools.partial):
        return f"functools.partial of {type_name(type(obj.func))}"
    return f"builtin method {getattr(obj, '__name__', '?')} of {type_name(type(obj.__self__))}"


def bound_method_fix_for(obj: Any) -> str:
    if isinstance(obj, functools.partial):
        return (
            f"It wraps a {type_name(type(obj.func))}, which cannot be checkpointed. Build the partial "
            "after the await, or wrap a function defined in Python code instead."
        )
    return bound_method_fix(obj)


def _error(found: tuple[object, Refusal, str, _Where] | None, fallback: Refusal) -> CannotCrossAwait:
    if found is None:
        refusal, path, where = fallback, "", _NOWHERE
    else:
        _, refusal, path, where = found
    return CannotCrossAwait(
        code=refusal.code,
        variable=where.variable,
        path=path or where.variable or "<value>",
        function=where.function,
        filename=where.filename,
        lineno=where.lineno,
        type_name=refusal.type_name,
        fix=refusal.fix,
    )


def explain_refusal(root: object, refused: Refused, *, signed: bool = False) -> CannotCrossAwait:
    """``CannotCrossAwait`` for the value the encoder refused, located inside ``root``."""
    refusal = refused.refusal if refused.refusal is not None else classify(refused.obj)
    target = refused.obj
    return _error(_walk(root, lambda obj: refusal if obj is target else None, signed), refusal)


def probe(obj: object, signed: bool = False) -> Refusal | None:
    """Whether the encoder can hold ``obj`` itself (its contents are separate values)."""
    if type(obj) in PASSTHROUGH:
        return None
    try:
        reduce_value(_Scratch(signed), obj)
    except Refused as refused:
        if refused.obj is not obj:
            return None
        return refused.refusal if refused.refusal is not None else classify(obj)
    except Exception as exc:
        return Refusal("AR111", type_name(type(obj)), f"Encoding it raised {exc!r}. {FIX_PLAIN_DATA}")
    return None


def _cloudpickle_probe() -> Callable[[object], Refusal | None]:
    import cloudpickle

    failing: dict[int, bool] = {}

    def fails(obj: object) -> bool:
        if type(obj) in _ATOMS:
            return False
        if id(obj) not in failing:
            try:
                cloudpickle.dumps(obj)
                failing[id(obj)] = False
            except Exception:
                failing[id(obj)] = True
        return failing[id(obj)]

    def verdict(obj: object) -> Refusal | None:
        if not fails(obj):
            return None
        try:
            below = (
                children(obj)
                if type(obj) in PASSTHROUGH or extension_for_type(type(obj))
                else [(name, value, None, False) for name, value in vars(obj).items()]
            )
        except Exception:
            below = []
        if any(fails(child) for _, child, _, _ in below):
            return None  # the culprit is further down
        return classify(obj)

    return verdict


def explain_failure(
    root: object, exc: Exception, *, use_cloudpickle: bool = False, signed: bool = False
) -> CannotCrossAwait:
    """``CannotCrossAwait`` for an encoding that failed without naming a value."""
    if isinstance(exc, RecursionError):
        text = "The value is nested too deeply to checkpoint; flatten it or keep less of it across the await."
    else:
        text = f"Encoding failed with {type(exc).__name__}: {exc}. {FIX_PLAIN_DATA}"
    fallback = Refusal("AR111", type_name(type(root)), text)
    verdict_of = _cloudpickle_probe() if use_cloudpickle else functools.partial(probe, signed=signed)
    found = None if isinstance(exc, RecursionError) else _walk(root, verdict_of, signed)
    return _error(found, fallback)


def _is_exit(method: object) -> bool:
    """A bound ``__exit__`` / ``__aexit__``: what a ``with`` block keeps on the stack across an await."""
    return getattr(method, "__name__", None) in ("__exit__", "__aexit__")
