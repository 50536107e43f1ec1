"""What a reducer is (the encoder's state, a refusal) and the reducers of plain values: numbers,
dates, patterns, ``collections`` containers and the builtin iterators.  :mod:`._reduce` puts them in
its dispatch table with the rest.
"""

from __future__ import annotations

import gc
import re
import types
from collections.abc import Callable
from typing import Any, Protocol  # Any: the codec reduces any Python object

from agentrt._codec import _wire
from agentrt._codec._hazards import Refusal, type_name

P = _wire.PLACEHOLDERS
_SEQITER, _DICTITER, _SETITER, _STATE = P["seqiter"], P["dictiter"], P["setiter"], P["state"]


class EncodeState(Protocol):
    """What reducers need from the encoder: the code table, the header flags, and the mode.

    ``signed``: the blob will be signed, so values agentrt has no reducer of its own for may
    go through the pickle protocol (``_pickled``) and registered clients may be reopened.
    """

    flags: int
    signed: bool
    shared_floats: dict[int, tuple[float]] | None  # ``_share_floats``'s boxes, made on first use
    reads: set[object]  # the reconstructors the blob names (``_preset``)

    def code_ref(self, code: types.CodeType, module: str) -> int: ...

    def need(self, feature: str) -> None: ...


class Refused(Exception):
    """The encoder cannot hold ``obj``; ``refusal`` explains why (else ``_hazards.classify`` does)."""

    def __init__(self, obj: object, refusal: Refusal | None = None) -> None:
        super().__init__(type_name(type(obj)))
        self.obj = obj
        self.refusal = refusal


class Unresolvable(Exception):
    """``code_ref`` was given a code object that ``resolve_code`` could not find again."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


Reducer = Callable[[EncodeState, Any], Any]


# --- plain values ---------------------------------------------------------------------


def _r_complex(enc: EncodeState, obj: complex) -> Any:
    return (P["complex"], (obj.real, obj.imag))


def _r_datetime_like(name: str) -> Reducer:
    placeholder = P[name]

    def reduce(enc: EncodeState, obj: Any) -> Any:
        # (compact state bytes[, tzinfo]) as pickle protocol 4 records it, fold included
        return (placeholder, obj.__reduce_ex__(4)[1])

    return reduce


def _r_timedelta(enc: EncodeState, obj: Any) -> Any:
    return (P["timedelta"], (obj.days, obj.seconds, obj.microseconds))


def _r_timezone(enc: EncodeState, obj: Any) -> Any:
    return (P["timezone"], obj.__getinitargs__())


def _r_decimal(enc: EncodeState, obj: Any) -> Any:
    return (P["decimal"], (str(obj),))


def _r_uuid(enc: EncodeState, obj: Any) -> Any:
    return (P["uuid"], (obj.int,))


def _r_range(enc: EncodeState, obj: range) -> Any:
    return (P["range"], (obj.start, obj.stop, obj.step))


def _r_slice(enc: EncodeState, obj: slice) -> Any:
    return (P["slice"], (obj.start, obj.stop, obj.step))


def _r_pattern(enc: EncodeState, obj: re.Pattern[Any]) -> Any:
    return (P["pattern"], (obj.pattern, obj.flags))


def _r_const(enc: EncodeState, obj: object) -> Any:
    return (P["const"], ("Ellipsis" if obj is Ellipsis else "NotImplemented",))


def _r_deque(enc: EncodeState, obj: Any) -> Any:
    return (P["deque"], (obj.maxlen,), list(obj), None, None, _STATE)


def _r_odict(enc: EncodeState, obj: Any) -> Any:
    return (P["odict"], (), list(obj.items()), None, None, _STATE)


def _r_counter(enc: EncodeState, obj: Any) -> Any:
    return (P["counter"], (), dict.copy(obj), None, None, _STATE)


def _r_defaultdict(enc: EncodeState, obj: Any) -> Any:
    return (P["ddict"], (obj.default_factory,), dict.copy(obj), None, None, _STATE)


# --- iterators ------------------------------------------------------------------------

SEQ_ITER_KINDS: dict[type, str] = {
    type(iter([])): "list",
    type(iter(())): "tuple",
    type(iter("")): "str",
    type(iter("\u20ac")): "str",
    type(iter(b"")): "bytes",
    type(iter(bytearray())): "bytearray",
    type(reversed([])): "list_reverse",
    reversed: "reversed",
    type(iter(range(0))): "range",
    type(iter(range(1 << 70))): "range",
}

DICT_ITER_KINDS: dict[type, str] = {
    type(iter({})): "keys",
    type(iter({}.values())): "values",
    type(iter({}.items())): "items",
    type(reversed({})): "rkeys",
    type(reversed({}.values())): "rvalues",
    type(reversed({}.items())): "ritems",
}


def _r_seqiter(enc: EncodeState, obj: Any) -> Any:
    reduced = obj.__reduce__()
    # No index: a fresh or exhausted iterator.  Reverse iterators count down, so 0 is a position.
    index = reduced[2] if len(reduced) > 2 else None
    return (_SEQITER, (SEQ_ITER_KINDS[type(obj)], reduced[1][0], index))


def _r_dictiter(enc: EncodeState, obj: Any) -> Any:
    owners = [ref for ref in gc.get_referents(obj) if isinstance(ref, dict)]
    if not owners:  # exhausted: the iterator dropped its dict
        return (_DICTITER, (DICT_ITER_KINDS[type(obj)], None, 0))
    owner = owners[0]
    consumed = max(0, len(owner) - obj.__length_hint__())
    return (_DICTITER, (DICT_ITER_KINDS[type(obj)], owner, consumed))


def _r_setiter(enc: EncodeState, obj: Any) -> Any:
    # A set's order depends on hashes, which differ between processes: keep the
    # remaining elements, not a position.
    return (_SETITER, (obj.__reduce__()[1][0],))


def _r_enumerate(enc: EncodeState, obj: Any) -> Any:
    return (P["enumerate"], obj.__reduce__()[1])


def _r_zip(enc: EncodeState, obj: Any) -> Any:
    reduced = obj.__reduce__()
    strict = len(reduced) > 2 and reduced[2] is True
    return (P["zip"], (strict, *reduced[1]))


def _r_map(enc: EncodeState, obj: Any) -> Any:
    return (P["map"], obj.__reduce__()[1])


def _r_filter(enc: EncodeState, obj: Any) -> Any:
    return (P["filter"], obj.__reduce__()[1])
