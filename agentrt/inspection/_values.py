"""Short, safe, identity-aware reprs of the values a suspended chain holds.

Like :mod:`reprlib`, containers are cut after a few items, strings and numbers
after a few characters, nesting after a few levels.  Unlike ``reprlib``, one
:class:`ValueRenderer` renders a whole dump, so it remembers every container and
instance it has shown: the second time an object appears it is shown as
``<same object as locals['a']>``, and an object that contains itself as
``<cycle: locals['d']>`` -- which is how a checkpoint stores them too (identity
is kept across the whole blob).

Rendering runs only the ``__repr__`` of types that are not containers, attrs
classes, dataclasses, exceptions or plain-``__dict__`` instances, and guards it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import operator
import types
from collections import deque
from collections.abc import Callable
from typing import Any  # Any: renders any Python value

import attrs

from agentrt._frames import RECORD_TYPES

__all__ = ["Limits", "ValueRenderer", "ValueView", "iterator_position", "type_name"]


@attrs.frozen
class Limits:
    """How much of a value a dump shows."""

    max_level: int = 4  # nesting depth
    max_items: int = 8  # items of a container
    max_string: int = 80  # characters of a str / bytes repr
    max_other: int = 100  # characters of any other repr
    max_int_digits: int = 40


@attrs.frozen
class ValueView:
    """One rendered value: its type, its short repr, and where it was first shown (if shared)."""

    type: str
    repr: str
    same_as: str | None = None


_ATOMS = (type(None), bool, int, float, complex)
_NAMED = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.ModuleType,
    type,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.CodeType,
)
_ITERABLES: tuple[Any, ...] = (
    [],
    (),
    "",
    b"",
    bytearray(),
    range(0),
    reversed([]),
    {}.keys(),
    {}.values(),
    {}.items(),
)
_SEQUENCE_ITERATORS = frozenset(type(iter(x)).__name__ for x in _ITERABLES) | {
    "range_iterator",
    "longrange_iterator",
    "callable_iterator",
    "set_iterator",
}


def type_name(obj: object) -> str:
    tp = type(obj)
    if tp in RECORD_TYPES:  # a frame decoded for a dump: named as the live object it stands for
        shown: str = obj.shown_type()  # type: ignore[attr-defined]  # every record type has it
        return shown
    module = getattr(tp, "__module__", "builtins")
    return tp.__qualname__ if module == "builtins" else f"{module}.{tp.__qualname__}"


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    keep = max(limit - 3, 6)
    head = (keep + 1) // 2
    return text[:head] + "..." + text[len(text) - (keep - head) :]


def iterator_position(it: object) -> dict[str, Any] | None:
    """``{"index": k, "remaining": n}`` for a builtin iterator (either may be missing), else None.

    Uses only ``__reduce__`` and ``__length_hint__`` of C iterator types, which copy
    the position without advancing the iterator.
    """
    tp = type(it)
    if tp.__module__ != "builtins" or tp.__name__ not in _SEQUENCE_ITERATORS | {"enumerate"}:
        return None
    out: dict[str, Any] = {}
    try:
        reduced = it.__reduce__()
    except Exception:
        reduced = None
    if tp.__name__ == "enumerate" and isinstance(reduced, tuple) and len(reduced) >= 2:
        args = reduced[1]
        if isinstance(args, tuple) and len(args) == 2 and type(args[1]) is int:
            out["count"] = args[1]
    elif isinstance(reduced, tuple) and len(reduced) == 3 and type(reduced[2]) is int:
        out["index"] = reduced[2]
    with contextlib.suppress(Exception):
        out["remaining"] = operator.length_hint(it, -1)
    if out.get("remaining") == -1:
        del out["remaining"]
    return out or None


def _iterated(it: object) -> object:
    """What a builtin iterator iterates over (from its ``__reduce__``), or ``_NOTHING``."""
    try:
        reduced = it.__reduce__()
    except Exception:
        return _NOTHING
    if isinstance(reduced, tuple) and len(reduced) >= 2 and isinstance(reduced[1], tuple) and reduced[1]:
        return reduced[1][0]
    return _NOTHING


_NOTHING = object()


class ValueRenderer:
    """Renders the values of one dump, in the order they are shown.

    ``frame_ref(obj, where)`` names a coroutine / generator / async generator met
    inside a value (the dump gives each one a frame number); ``is_trap(obj)``
    recognises the pending ``suspend`` trap, shown as ``suspend(<pending request>)``;
    ``special(obj, where)`` may render any other object (None: render it normally).
    """

    def __init__(
        self,
        frame_ref: Callable[[object, str], str],
        is_trap: Callable[[object], bool],
        limits: Limits | None = None,
        special: Callable[[object, str], str | None] | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self._frame_ref = frame_ref
        self._is_trap = is_trap
        self._special = special
        self._seen: dict[int, tuple[object, str, str]] = {}  # id -> (object, scope, path)
        self._active: set[int] = set()
        self._scope = ""

    def view(self, obj: object, scope: str, path: str) -> ValueView:
        """Render ``obj`` found at ``path`` (e.g. ``locals['a']``) inside ``scope`` (e.g. ``frame 0``)."""
        self._scope = scope
        first = self._seen.get(id(obj))
        same_as = None
        if first is not None and first[0] is obj and self._shareable(obj):
            same_as = self._where(first)
        return ValueView(type_name(obj), self._render(obj, path, 0), same_as)

    # ------------------------------------------------------------------ internals

    def _where(self, first: tuple[object, str, str]) -> str:
        _, scope, path = first
        return path if scope == self._scope or not scope else f"{scope} {path}"

    def _shareable(self, obj: object) -> bool:
        tp = type(obj)
        if isinstance(obj, _ATOMS) or tp in (str, bytes) or isinstance(obj, _NAMED):
            return False
        return not ((tp is tuple or tp is frozenset) and not obj)  # () and frozenset(): singletons

    def _render(self, obj: object, path: str, level: int) -> str:
        tp = type(obj)
        limits = self.limits
        if obj is None or tp is bool or tp is float or tp is complex:
            return repr(obj)
        if tp is int:
            text = repr(obj) if obj.bit_length() < 4 * limits.max_int_digits else object.__repr__(obj)  # type: ignore[attr-defined]  # tp is int
            return _truncate(text, limits.max_int_digits)
        if tp is str or tp is bytes:
            return _truncate(repr(obj), limits.max_string)
        if self._is_trap(obj):
            return "suspend(<pending request>)"
        if isinstance(obj, (types.CoroutineType, types.GeneratorType, types.AsyncGeneratorType)):
            return self._frame_ref(obj, self._qualified(path))
        if self._special is not None:
            special = self._special(obj, self._qualified(path))
            if special is not None:
                return special
        if isinstance(obj, _NAMED):
            return self._named(obj)
        if not self._shareable(obj):
            return repr(obj)
        key = id(obj)
        first = self._seen.get(key)
        if first is not None and first[0] is obj:
            if key in self._active:
                return f"<cycle: {self._where(first)}>"
            return f"<same object as {self._where(first)}>"
        self._seen[key] = (obj, self._scope, path)
        if level >= limits.max_level:
            return self._abbreviated(obj)
        self._active.add(key)
        try:
            return self._structure(obj, path, level + 1)
        finally:
            self._active.discard(key)

    def _qualified(self, path: str) -> str:
        return f"{self._scope} {path}" if self._scope else path

    def _named(self, obj: object) -> str:
        if isinstance(obj, type):
            return f"<class {_qualname(obj)}>"
        if isinstance(obj, types.ModuleType):
            return f"<module {obj.__name__}>"
        if isinstance(obj, types.FunctionType):
            return f"<function {_qualname(obj)}>"
        if isinstance(obj, types.CodeType):
            return f"<code {obj.co_qualname}>"
        if isinstance(obj, types.BuiltinFunctionType) and not isinstance(obj.__self__, types.ModuleType):
            owner = obj.__self__
            if owner is not None:
                return f"<built-in method {obj.__name__} of {type_name(owner)} object>"
        return _truncate(_safe_repr(obj), self.limits.max_other)

    def _abbreviated(self, obj: object) -> str:
        tp = type(obj)
        if tp is list:
            return "[...]"
        if tp is tuple:
            return "(...)"
        if tp is dict:
            return "{...}"
        if tp in (set, frozenset):
            return f"{tp.__name__}(...)"
        return f"{type_name(obj)}(...)"

    def _items(self, values: list[tuple[str, object]], level: int) -> list[str]:
        shown = values[: self.limits.max_items]
        out = [self._render(value, path, level) for path, value in shown]
        if len(values) > len(shown):
            out.append(f"... +{len(values) - len(shown)} more")
        return out

    def _structure(self, obj: Any, path: str, level: int) -> str:
        tp = type(obj)
        if tp is list:
            return "[" + ", ".join(self._items([(f"{path}[{i}]", v) for i, v in enumerate(obj)], level)) + "]"
        if tp is tuple:
            parts = self._items([(f"{path}[{i}]", v) for i, v in enumerate(obj)], level)
            return "(" + ", ".join(parts) + ("," if len(obj) == 1 else "") + ")"
        if tp is dict:
            return "{" + self._dict_items(obj, path, level) + "}"
        if tp in (set, frozenset):
            if not obj:
                return f"{tp.__name__}()"
            parts = self._items([(f"{path}.<element {i}>", v) for i, v in enumerate(_sorted(obj))], level)
            body = "{" + ", ".join(parts) + "}"
            return body if tp is set else f"frozenset({body})"
        if isinstance(obj, BaseException):
            parts = self._items([(f"{path}.args[{i}]", v) for i, v in enumerate(obj.args)], level)
            return f"{tp.__qualname__}({', '.join(parts)})"
        if isinstance(obj, (dict, list, tuple, set, frozenset, deque)):
            return self._subclass(obj, path, level)
        if isinstance(obj, types.MethodType):
            owner = self._render(obj.__self__, f"{path}.__self__", level)
            return f"<bound method {obj.__func__.__qualname__} of {owner}>"
        if isinstance(obj, functools.partial):
            parts = [self._render(obj.func, f"{path}.func", level)]
            parts += self._items([(f"{path}.args[{i}]", v) for i, v in enumerate(obj.args)], level)
            parts += [
                f"{k}={self._render(v, f'{path}.keywords[{k!r}]', level)}" for k, v in obj.keywords.items()
            ]
            return f"functools.partial({', '.join(parts)})"
        if type(obj).__module__ == "builtins" and type(obj).__name__ in _SEQUENCE_ITERATORS | {"enumerate"}:
            return self._iterator(obj, path, level)
        if attrs.has(tp):
            fields = [(f.name, f.alias or f.name) for f in attrs.fields(tp) if f.repr]
            return self._fields(obj, fields, path, level)
        if dataclasses.is_dataclass(obj):
            fields = [(f.name, f.name) for f in dataclasses.fields(obj) if f.repr]
            return self._fields(obj, fields, path, level)
        if getattr(tp, "__repr__", None) is object.__repr__ and isinstance(
            getattr(obj, "__dict__", None), dict
        ):
            attrs_ = list(obj.__dict__.items())
            parts = self._items([(f"{path}.{k}", v) for k, v in attrs_], level)
            names = [k for k, _ in attrs_[: self.limits.max_items]]
            shown = [f"{k}={p}" for k, p in zip(names, parts, strict=False)] + parts[len(names) :]
            return f"<{type_name(obj)}" + ("" if not shown else " " + " ".join(shown)) + ">"
        return _truncate(_safe_repr(obj), self.limits.max_other)

    def _dict_items(self, mapping: Any, path: str, level: int) -> str:
        items = list(dict.items(mapping)) if isinstance(mapping, dict) else list(mapping.items())
        shown = items[: self.limits.max_items]
        parts = []
        for key, value in shown:
            key_text = self._render(key, f"{path}.<key {_short_key(key)}>", level)
            parts.append(f"{key_text}: {self._render(value, f'{path}[{_short_key(key)}]', level)}")
        if len(items) > len(shown):
            parts.append(f"... +{len(items) - len(shown)} more")
        return ", ".join(parts)

    def _subclass(self, obj: Any, path: str, level: int) -> str:
        name = type_name(obj)
        if isinstance(obj, dict):
            head = ""
            factory = getattr(obj, "default_factory", _NOTHING)
            if factory is not _NOTHING:
                head = self._render(factory, f"{path}.default_factory", level) + ", "
            return f"{name}({head}{{{self._dict_items(obj, path, level)}}})"
        values = _sorted(obj) if isinstance(obj, (set, frozenset)) else list(obj)
        parts = self._items([(f"{path}[{i}]", v) for i, v in enumerate(values)], level)
        return f"{name}([{', '.join(parts)}])"

    def _iterator(self, it: object, path: str, level: int) -> str:
        name = type(it).__name__
        position = iterator_position(it) or {}
        over = _iterated(it)
        parts = []
        if over is not _NOTHING:
            parts.append("over " + self._render(over, f"{path}.<iterated>", level))
        if "index" in position:
            parts.append(f"at index {position['index']}")
        if "count" in position:
            parts.append(f"count {position['count']}")
        if "remaining" in position:
            parts.append(f"{position['remaining']} left")
        return f"<{name}" + ("" if not parts else " " + ", ".join(parts)) + ">"

    def _fields(self, obj: object, fields: list[tuple[str, str]], path: str, level: int) -> str:
        values = []
        for name, shown_as in fields:
            try:
                values.append((shown_as, f"{path}.{name}", getattr(obj, name)))
            except AttributeError:
                values.append((shown_as, "", _NOTHING))
        parts = []
        for shown_as, field_path, value in values[: self.limits.max_items]:
            text = "<unset>" if value is _NOTHING else self._render(value, field_path, level)
            parts.append(f"{shown_as}={text}")
        if len(values) > self.limits.max_items:
            parts.append(f"... +{len(values) - self.limits.max_items} more")
        return f"{type(obj).__qualname__}({', '.join(parts)})"


def _qualname(obj: Any) -> str:
    module = getattr(obj, "__module__", None)
    qualname = str(getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "?"))
    return qualname if module in (None, "builtins") else f"{module}.{qualname}"


def _short_key(key: object) -> str:
    text = _safe_repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def _sorted(values: Any) -> list[object]:
    """Set elements in a stable order (set order depends on the hash seed)."""
    items = list(values)
    try:
        return sorted(items)
    except Exception:
        return sorted(items, key=lambda v: (type_name(v), _safe_repr(v)))


def _safe_repr(obj: object) -> str:
    try:
        text = repr(obj)
    except Exception as exc:  # a broken __repr__ must not break the dump
        return f"<{type_name(obj)} object (repr failed: {type(exc).__name__})>"
    return text if isinstance(text, str) else f"<{type_name(obj)} object>"
