"""Schemas from type annotations: JSON Schema out, validated conversion in.

Agents' inputs and outputs are attrs classes; tools' parameters are annotated
function parameters.  Three functions serve both:

- :func:`json_schema` -- a JSON Schema for an annotation (attrs classes and
  dataclasses become objects, inline, with field descriptions from
  ``attrs.field(metadata={"description": ...})``);
- :func:`structure` -- convert JSON-like data (dicts, lists, primitives) to the
  annotated type, raising :class:`SchemaError` naming the field path;
- :func:`to_jsonable` -- the inverse: attrs instances, enums, dates, tuples and
  sets to plain JSON data.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import enum
import types
import typing
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any  # Any: type hints of any shape become JSON Schema

import attrs

from agentrt._codec import serializable
from agentrt.exceptions import SchemaError

__all__ = ["describe_type", "fields_of", "json_schema", "structure", "to_jsonable"]

_NONE_TYPE = type(None)
_FACTORY: type = type(attrs.Factory(list))
_SEQUENCE_ORIGINS = (list, Sequence, typing.Sequence, set, frozenset, tuple)


def _is_record(tp: Any) -> bool:
    return isinstance(tp, type) and (attrs.has(tp) or dataclasses.is_dataclass(tp))


def fields_of(cls: type) -> list[tuple[str, Any, bool, Any, str | None]]:
    """``(name, annotation, required, default, description)`` per init field of an attrs class / dataclass."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception as exc:  # an annotation naming something undefined
        raise TypeError(f"cannot resolve the annotations of {cls.__qualname__}: {exc}") from exc
    out: list[tuple[str, Any, bool, Any, str | None]] = []
    if attrs.has(cls):
        for f in attrs.fields(cls):
            if not f.init:
                continue
            required = f.default is attrs.NOTHING
            default: Any = None
            if not required:
                factory = getattr(f.default, "factory", None) if isinstance(f.default, _FACTORY) else None
                default = factory() if factory is not None else f.default
            name = f.alias or f.name
            out.append((name, hints.get(f.name, Any), required, default, f.metadata.get("description")))
    else:
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            if f.default is not dataclasses.MISSING:
                required, default = False, f.default
            elif f.default_factory is not dataclasses.MISSING:
                required, default = False, f.default_factory()
            else:
                required, default = True, None
            out.append((f.name, hints.get(f.name, Any), required, default, f.metadata.get("description")))
    return out


def _origin_args(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return _origin_args(args[0])
    return origin, args


def describe_type(tp: Any) -> str:
    """A short human name for an annotation (``list[str]``, ``Issue | None``)."""
    if tp is Any:
        return "any value"
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__name__
    return str(tp).replace("typing.", "")


# --------------------------------------------------------------------------- JSON Schema


def json_schema(tp: Any, *, _seen: frozenset[type] = frozenset()) -> dict[str, Any]:
    """JSON Schema (draft 2020-12 vocabulary) for the annotation ``tp``."""
    origin, args = _origin_args(tp)
    if tp is Any or tp is object:
        return {}
    if tp is None or tp is _NONE_TYPE:
        return {"type": "null"}
    if origin in (typing.Union, types.UnionType):
        options = [json_schema(a, _seen=_seen) for a in args]
        return {"anyOf": options}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp in (float, Decimal):
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if tp is dt.datetime:
        return {"type": "string", "format": "date-time"}
    if tp is dt.date:
        return {"type": "string", "format": "date"}
    if tp is uuid.UUID:
        return {"type": "string", "format": "uuid"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": json_schema(args[0], _seen=_seen)}
        if args:
            items = [json_schema(a, _seen=_seen) for a in args]
            return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
        return {"type": "array"}
    if origin in (list, Sequence, set, frozenset) or tp in (list, set, frozenset, tuple):
        schema: dict[str, Any] = {"type": "array"}
        if args:
            schema["items"] = json_schema(args[0], _seen=_seen)
        if origin in (set, frozenset):
            schema["uniqueItems"] = True
        return schema
    if origin in (dict, Mapping) or tp is dict:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = json_schema(args[1], _seen=_seen)
        return schema
    if _is_record(tp):
        return object_schema(tp, _seen=_seen)
    raise TypeError(
        f"no JSON Schema for {describe_type(tp)}: use str, int, float, bool, None, lists, tuples, "
        "dict[str, T], Literal, Enum, datetime, Optional/unions, or attrs classes / dataclasses of those"
    )


def object_schema(cls: type, *, _seen: frozenset[type] = frozenset()) -> dict[str, Any]:
    """The object schema of an attrs class or dataclass (nested ones inline)."""
    if cls in _seen:  # a recursive type: stop at a plain object
        return {"type": "object", "title": cls.__name__}
    seen = _seen | {cls}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, ann, is_required, default, description in fields_of(cls):
        prop = json_schema(ann, _seen=seen)
        if description:
            prop = {**prop, "description": description}
        if is_required:
            required.append(name)
        else:
            with contextlib.suppress(TypeError):
                prop = {**prop, "default": to_jsonable(default)}
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "title": cls.__name__, "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    doc = _class_doc(cls)
    if doc:
        schema["description"] = doc
    return schema


def _class_doc(cls: type) -> str | None:
    doc = cls.__doc__
    if not doc or (dataclasses.is_dataclass(cls) and doc.startswith(cls.__name__ + "(")):
        return None
    return doc.strip().split("\n\n")[0].strip() or None


# --------------------------------------------------------------------------- structure


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
    }.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def structure(value: Any, tp: Any, path: str = "input") -> Any:
    """Convert JSON-like ``value`` to ``tp``; :class:`SchemaError` names the path of the first mismatch."""
    origin, args = _origin_args(tp)
    if tp is Any or tp is object:
        return value
    if tp is None or tp is _NONE_TYPE:
        if value is None:
            return None
        raise SchemaError(path, f"expected null, got {_kind(value)} {_show(value)}")
    if origin in (typing.Union, types.UnionType):
        if value is None and _NONE_TYPE in args:
            return None
        errors: list[SchemaError] = []
        for option in args:
            if option is _NONE_TYPE:
                continue
            try:
                return structure(value, option, path)
            except SchemaError as exc:
                errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        raise SchemaError(path, f"expected {describe_type(tp)}, got {_kind(value)} {_show(value)}")
    if origin is typing.Literal:
        if value in args and any(type(value) is type(a) for a in args):
            return value
        raise SchemaError(path, f"expected one of {list(args)!r}, got {_show(value)}")
    if tp is bool:
        if type(value) is bool:
            return value
        raise SchemaError(path, f"expected boolean, got {_kind(value)} {_show(value)}")
    if tp is int:
        if type(value) is int:
            return value
        if type(value) is float and value.is_integer():
            return int(value)
        raise SchemaError(path, f"expected integer, got {_kind(value)} {_show(value)}")
    if tp is float:
        if type(value) in (int, float):
            return float(value)
        raise SchemaError(path, f"expected number, got {_kind(value)} {_show(value)}")
    if tp is Decimal:
        if type(value) in (int, float, str, Decimal):
            try:
                return Decimal(str(value))
            except ArithmeticError:
                pass
        raise SchemaError(path, f"expected a decimal number, got {_kind(value)} {_show(value)}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise SchemaError(path, f"expected string, got {_kind(value)} {_show(value)}")
    if tp in (dt.datetime, dt.date, uuid.UUID):
        if isinstance(value, tp):
            return value
        if isinstance(value, str):
            try:
                if tp is uuid.UUID:
                    return uuid.UUID(value)
                return tp.fromisoformat(value)
            except ValueError:
                pass
        raise SchemaError(path, f"expected {describe_type(tp)} (ISO 8601 string), got {_show(value)}")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        if isinstance(value, tp):
            return value
        try:
            return tp(value)
        except ValueError:
            raise SchemaError(
                path, f"expected one of {[m.value for m in tp]!r}, got {_show(value)}"
            ) from None
    if origin is tuple or tp is tuple:
        if not isinstance(value, (list, tuple)):
            raise SchemaError(path, f"expected array, got {_kind(value)} {_show(value)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(structure(v, args[0], f"{path}[{i}]") for i, v in enumerate(value))
        if args:
            if len(value) != len(args):
                raise SchemaError(path, f"expected an array of {len(args)} items, got {len(value)}")
            pairs = enumerate(zip(value, args, strict=True))
            return tuple(structure(v, a, f"{path}[{i}]") for i, (v, a) in pairs)
        return tuple(value)
    if origin in (list, Sequence, set, frozenset) or tp in (list, set, frozenset):
        if not isinstance(value, (list, tuple, set, frozenset)):
            raise SchemaError(path, f"expected array, got {_kind(value)} {_show(value)}")
        item_tp = args[0] if args else Any
        items = [structure(v, item_tp, f"{path}[{i}]") for i, v in enumerate(value)]
        if origin is set or tp is set:
            return set(items)
        if origin is frozenset or tp is frozenset:
            return frozenset(items)
        return items
    if origin in (dict, Mapping) or tp is dict:
        if not isinstance(value, Mapping):
            raise SchemaError(path, f"expected object, got {_kind(value)} {_show(value)}")
        key_tp, val_tp = args if len(args) == 2 else (Any, Any)
        return {
            structure(k, key_tp, f"{path} key {k!r}"): structure(v, val_tp, f"{path}.{k}")
            for k, v in value.items()
        }
    if _is_record(tp):
        return _structure_record(value, tp, path)
    if isinstance(tp, type):
        if isinstance(value, tp):
            return value
        raise SchemaError(path, f"expected {tp.__name__}, got {_kind(value)} {_show(value)}")
    raise SchemaError(path, f"cannot check values against the annotation {describe_type(tp)}")


def _structure_record(value: Any, cls: type, path: str) -> Any:
    if isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        raise SchemaError(path, f"expected object ({cls.__name__}), got {_kind(value)} {_show(value)}")
    fields = fields_of(cls)
    known = {name for name, *_ in fields}
    unknown = [k for k in value if k not in known]
    if unknown:
        raise SchemaError(
            f"{path}.{unknown[0]}",
            f"unknown field (the fields of {cls.__name__} are: {', '.join(sorted(known))})",
        )
    kwargs: dict[str, Any] = {}
    for name, ann, required, _default, _desc in fields:
        if name not in value:
            if required:
                raise SchemaError(f"{path}.{name}", f"missing required field of type {describe_type(ann)}")
            continue
        kwargs[name] = structure(value[name], ann, f"{path}.{name}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:  # an attrs validator refused it
        raise SchemaError(path, f"{cls.__name__} rejected the value: {exc}") from exc


# --------------------------------------------------------------------------- unstructure


#: Exact types that are JSON data as they are.
_JSON_ATOMS = frozenset({type(None), bool, int, str, float})


def to_jsonable(value: Any) -> Any:
    """Plain JSON data for ``value`` (attrs instances and dataclasses become dicts)."""
    tp = type(value)
    if tp in _JSON_ATOMS:
        return value
    if tp is dict:  # the common container: no ABC check (the same result as the Mapping branch)
        return {k if type(k) is str else str(k): to_jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, Decimal)):
        return str(value)
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [to_jsonable(v) for v in items]
    if attrs.has(type(value)):
        return {
            f.alias or f.name: to_jsonable(getattr(value, f.name))
            for f in attrs.fields(type(value))
            if f.init
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, BaseException):
        return {"type": f"{type(value).__module__}.{type(value).__qualname__}", "message": str(value)}
    raise TypeError(f"{type(value).__qualname__} is not JSON data")


def jsonable_or_repr(value: Any) -> Any:
    """:func:`to_jsonable`, falling back to ``repr`` for anything else (for display only)."""
    try:
        return to_jsonable(value)
    except TypeError:
        pass
    if isinstance(value, Mapping):
        return {str(k): jsonable_or_repr(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable_or_repr(v) for v in value]
    return repr(value)


def mark_serializable(cls: type, seen: set[type]) -> None:
    """Mark ``cls`` and the attrs classes / dataclasses its fields mention as checkpointable.

    (Here, beside the schemas it reads, so that ``agent`` and ``stateful`` both use it
    without importing each other.)
    """
    if cls in seen or not isinstance(cls, type):
        return
    if not (attrs.has(cls) or dataclasses.is_dataclass(cls)):
        return
    seen.add(cls)
    if "<locals>" not in cls.__qualname__:
        serializable(cls)
    for _name, ann, *_ in fields_of(cls):
        stack = [ann]
        while stack:
            tp = stack.pop()
            stack.extend(typing.get_args(tp))
            if isinstance(tp, type):
                mark_serializable(tp, seen)
