"""Forging frame records as an attacker who can write blobs would (tests only).

``forge(machine, mutate)`` re-encodes the machine's suspended chain with the frame
extension's records passed through ``mutate(code, args, state) -> (args, state)``:
``args`` is the frame header as format-1 fields (kind, code index, site, bound locals,
NULL mask, exception flag, cells, info) and ``state`` the list [exception, *locals,
*stack values].  The mutated header is written as a format-2 record (its fields packed
into the shape bytes, see agentrt._frames._shape) when they fit that layout, else as the
format-1 record, which a reader still accepts; a mutator may also return a 4-field
format-2 record of its own (raw shape bytes).  The result is signed with ``key`` (b"":
unsigned), as a key holder or a forger would.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from agentrt._codec import dumps
from agentrt._codec._extension import STORED_AS, extension_named
from agentrt._frames import _capture
from agentrt._frames._shape import pack_shape, record_fields

Mutator = Callable[[Any, list[Any], list[Any]], tuple[list[Any], list[Any]]]


@contextlib.contextmanager
def mutated_frames(mutate: Mutator) -> Iterator[None]:
    ext: Any = extension_named("frame")
    original = type(ext).reduce

    def reduce(self: Any, obj: Any, ctx: Any) -> tuple[tuple[Any, ...], Any]:
        args, state = original(self, obj, ctx)
        if state is None or args is STORED_AS:  # STORED_AS: a suspend() trap, a plain value
            return args, state
        code = _capture.capture(obj).code
        fields = record_fields(args)
        assert fields is not None
        new_args, new_state = mutate(code, list(fields), list(state))
        return encode_record(new_args), new_state

    type(ext).reduce = reduce
    try:
        yield
    finally:
        type(ext).reduce = original


def forge(root: Any, mutate: Mutator, *, key: bytes = b"", bind: Any = ("checkpoint", None, None)) -> bytes:
    with mutated_frames(mutate):
        return dumps(root, key=key, bind=bind)


def stack_of(args: list[Any], state: list[Any]) -> tuple[int, list[bool]]:
    """(index in ``state`` where the stack values start, the NULL mask)."""
    return 1 + len(args[3]), list(args[4])


def _fits_shape(kind: Any, status: Any, bound: Any, null_mask: Any, has_exc: Any) -> bool:
    return (
        type(kind) is int
        and 0 <= kind <= 255
        and type(status) is int
        and -(2**31) <= status < 2**31
        and type(bound) is tuple
        and all(type(i) is int and 0 <= i <= 0xFFFF for i in bound)
        and type(null_mask) is tuple
        and all(type(b) is bool for b in null_mask)
        and type(has_exc) is bool
    )


def encode_record(args: list[Any]) -> tuple[Any, ...]:
    """Format-1 fields as the format-2 record when they fit its layout, else as they are."""
    if len(args) != 8:
        return tuple(args)  # a record of the mutator's own making (e.g. raw format-2 fields)
    kind, index, status, bound, null_mask, has_exc, cells, info = args
    if not _fits_shape(kind, status, bound, null_mask, has_exc):
        return tuple(args)
    return (index, pack_shape(kind, status, bound, null_mask, has_exc), cells, info)
