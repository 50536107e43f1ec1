"""The reconstructors of plain values: numbers, dates, patterns, ``collections`` containers and the
builtin iterators (a blob's everyday contents).  Registered in :data:`._reconstruct.RECONSTRUCTORS`
when this module is imported (``_decode`` does); the rules of :mod:`._reconstruct` hold here too.
"""

from __future__ import annotations

import collections
import datetime
import functools
import itertools
import re
from collections.abc import Callable
from typing import Any  # Any: the codec rebuilds any Python object

from agentrt._codec._bounds import short
from agentrt._codec._reconstruct import DecodeContext, _corrupt, _reconstructor, _require
from agentrt._codec._refs import class_dict

# --- plain values -------------------------------------------------------------------------


@_reconstructor("complex")
def r_complex(ctx: DecodeContext, real: float, imag: float) -> complex:
    _require(type(real) is float and type(imag) is float, "complex parts are not floats")
    return complex(real, imag)


# The C constructors also accept the compact state bytes of their pickles (undocumented in
# typeshed), which is the exact, fold-preserving form pickle protocol 4 records.
_DATE: Callable[..., datetime.date] = datetime.date
_TIME: Callable[..., datetime.time] = datetime.time
_DATETIME: Callable[..., datetime.datetime] = datetime.datetime


def _tz(tz: object) -> object:
    _require(tz is None or isinstance(tz, datetime.tzinfo), "tzinfo is not a tzinfo")
    return tz


@_reconstructor("date")
def r_date(ctx: DecodeContext, state: bytes) -> datetime.date:
    _require(type(state) is bytes, "date state is not bytes")
    return _DATE(state)


@_reconstructor("time")
def r_time(ctx: DecodeContext, state: bytes, tz: object = None) -> datetime.time:
    _require(type(state) is bytes, "time state is not bytes")
    return _TIME(state, _tz(tz))


@_reconstructor("datetime")
def r_datetime(ctx: DecodeContext, state: bytes, tz: object = None) -> datetime.datetime:
    _require(type(state) is bytes, "datetime state is not bytes")
    return _DATETIME(state, _tz(tz))


@_reconstructor("timedelta")
def r_timedelta(ctx: DecodeContext, days: int, seconds: int, microseconds: int) -> datetime.timedelta:
    _require(all(type(x) is int for x in (days, seconds, microseconds)), "timedelta fields are not ints")
    return datetime.timedelta(days, seconds, microseconds)


@_reconstructor("timezone")
def r_timezone(ctx: DecodeContext, offset: datetime.timedelta, *name: str) -> datetime.timezone:
    _require(
        type(offset) is datetime.timedelta and all(type(n) is str for n in name) and len(name) <= 1,
        "timezone arguments",
    )
    return datetime.timezone(offset, *name)


@_reconstructor("decimal")
def r_decimal(ctx: DecodeContext, text: str) -> Any:
    import decimal  # stdlib, imported on first use only

    _require(type(text) is str, "Decimal text is not a str")
    return decimal.Decimal(text)


@_reconstructor("uuid")
def r_uuid(ctx: DecodeContext, value: int) -> Any:
    import uuid  # stdlib, imported on first use only

    _require(type(value) is int, "UUID value is not an int")
    return uuid.UUID(int=value)


@_reconstructor("range")
def r_range(ctx: DecodeContext, start: int, stop: int, step: int) -> range:
    _require(all(type(x) is int for x in (start, stop, step)), "range bounds are not ints")
    return range(start, stop, step)


@_reconstructor("slice")
def r_slice(ctx: DecodeContext, start: Any, stop: Any, step: Any) -> slice:
    return slice(start, stop, step)


#: the flags a compiled pattern can report (not DEBUG, which prints while compiling)
_PATTERN_FLAGS = re.IGNORECASE | re.LOCALE | re.MULTILINE | re.DOTALL | re.UNICODE | re.VERBOSE | re.ASCII


@_reconstructor("pattern")
def r_pattern(ctx: DecodeContext, pattern: str | bytes, flags: int) -> re.Pattern[Any]:
    _require(
        type(pattern) in (str, bytes) and type(flags) is int and not flags & ~_PATTERN_FLAGS,
        "regular expression arguments",
    )
    return re.compile(pattern, flags)


@_reconstructor("const")
def r_const(ctx: DecodeContext, name: str) -> Any:
    _require(name in ("Ellipsis", "NotImplemented"), f"unknown constant {short(name, 40)}")
    return Ellipsis if name == "Ellipsis" else NotImplemented


# --- containers from collections ----------------------------------------------------------


def _apply_extend(ctx: DecodeContext, obj: Any, items: Any, extra: Any) -> None:
    _require(type(items) is list, "deque items are not a list")
    obj.extend(items)


def _apply_pairs(ctx: DecodeContext, obj: Any, pairs: Any, extra: Any) -> None:
    _require(type(pairs) is list and all(type(p) is tuple and len(p) == 2 for p in pairs), "mapping items")
    for key, value in pairs:
        obj[key] = value


def _apply_dict(ctx: DecodeContext, obj: Any, items: Any, extra: Any) -> None:
    _require(type(items) is dict, "mapping items are not a dict")
    dict.update(obj, items)


@_reconstructor("deque")
def r_deque(ctx: DecodeContext, maxlen: int | None) -> collections.deque[Any]:
    _require(maxlen is None or (type(maxlen) is int and maxlen >= 0), "deque maxlen")
    obj: collections.deque[Any] = collections.deque(maxlen=maxlen)
    ctx.expect_state(obj, _apply_extend)
    return obj


@_reconstructor("odict")
def r_odict(ctx: DecodeContext) -> collections.OrderedDict[Any, Any]:
    obj: collections.OrderedDict[Any, Any] = collections.OrderedDict()
    ctx.expect_state(obj, _apply_pairs)
    return obj


@_reconstructor("counter")
def r_counter(ctx: DecodeContext) -> collections.Counter[Any]:
    obj: collections.Counter[Any] = collections.Counter()
    ctx.expect_state(obj, _apply_dict)
    return obj


@_reconstructor("ddict")
def r_ddict(ctx: DecodeContext, factory: Any) -> collections.defaultdict[Any, Any]:
    _require(factory is None or callable(factory), "defaultdict factory is not callable")
    obj: collections.defaultdict[Any, Any] = collections.defaultdict(factory)
    ctx.expect_state(obj, _apply_dict)
    return obj


# --- iterators ----------------------------------------------------------------------------

_SEQ_MAKERS: dict[str, tuple[type | tuple[type, ...], Callable[[Any], Any]]] = {
    "list": (list, list.__iter__),
    "tuple": (tuple, tuple.__iter__),
    "str": (str, str.__iter__),
    "bytes": (bytes, bytes.__iter__),
    "bytearray": (bytearray, bytearray.__iter__),
    "list_reverse": (list, list.__reversed__),
    "range": (range, range.__iter__),
    "reversed": (object, reversed),
}

_DICT_MAKERS: dict[str, Callable[[dict[Any, Any]], Any]] = {
    "keys": dict.__iter__,
    "values": lambda d: iter(dict.values(d)),
    "items": lambda d: iter(dict.items(d)),
    "rkeys": dict.__reversed__,
    "rvalues": lambda d: reversed(dict.values(d)),
    "ritems": lambda d: reversed(dict.items(d)),
}


def _is_iterator(obj: object) -> bool:
    return any("__next__" in class_dict(base) for base in type(obj).__mro__)


@_reconstructor("seqiter")
def r_seqiter(ctx: DecodeContext, kind: str, seq: Any, index: int | None) -> Any:
    spec = _SEQ_MAKERS.get(kind) if type(kind) is str else None
    if spec is None:
        raise _corrupt(f"unknown iterator kind {short(kind, 40)}")
    expected, make = spec
    _require(
        isinstance(seq, expected) and (index is None or (type(index) is int and index >= -1)),
        "iterator arguments",
    )
    iterator = make(seq)
    _require(kind != "reversed" or type(iterator) is reversed, "reversed() of a sequence with __reversed__")
    if index is not None:
        # The sequence may still be filling up (a list holding its own iterator):
        # set the position once the whole graph exists.
        ctx._fixups.append(functools.partial(iterator.__setstate__, index))
    return iterator


@_reconstructor("dictiter")
def r_dictiter(ctx: DecodeContext, kind: str, owner: dict[Any, Any] | None, consumed: int) -> Any:
    make = _DICT_MAKERS.get(kind) if type(kind) is str else None
    if make is None:
        raise _corrupt(f"unknown dict iterator kind {short(kind, 40)}")
    if owner is None:
        owner, consumed = {}, 0
    _require(isinstance(owner, dict) and type(consumed) is int and consumed >= 0, "dict iterator arguments")
    iterator = make(owner)
    collections.deque(itertools.islice(iterator, min(consumed, len(owner))), maxlen=0)
    return iterator


@_reconstructor("setiter")
def r_setiter(ctx: DecodeContext, remaining: list[Any]) -> Any:
    _require(type(remaining) is list, "set iterator items are not a list")
    return iter(set(remaining))


@_reconstructor("enumerate")
def r_enumerate(ctx: DecodeContext, iterator: Any, count: int) -> enumerate[Any]:
    _require(_is_iterator(iterator) and type(count) is int, "enumerate arguments")
    return enumerate(iterator, count)


@_reconstructor("zip")
def r_zip(ctx: DecodeContext, strict: bool, *iterators: Any) -> zip[Any]:
    _require(type(strict) is bool and all(_is_iterator(it) for it in iterators), "zip arguments")
    return zip(*iterators, strict=strict)


@_reconstructor("map")
def r_map(ctx: DecodeContext, func: Any, *iterators: Any) -> map[Any]:
    _require(callable(func) and bool(iterators) and all(map(_is_iterator, iterators)), "map arguments")
    return map(func, *iterators)


@_reconstructor("filter")
def r_filter(ctx: DecodeContext, func: Any, iterator: Any) -> filter[Any]:
    _require((func is None or callable(func)) and _is_iterator(iterator), "filter arguments")
    return filter(func, iterator)


#: read by ``_decode``, which checks that the two modules' reconstructors are the wire's names
REGISTERED = True
