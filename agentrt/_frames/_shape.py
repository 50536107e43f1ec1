"""The frame record of a blob, format 2: one bytes value for everything the code's shape decides.

A frame record says which code a frame runs (an index into the blob's code table), where it is
suspended, which locals it restores, which value-stack slots are NULL and whether an exception is
being handled.  Format 1 wrote these as a tuple of ints and bools per field; every restore then
walked, unpickled, hashed and type-checked some thirty small objects per frame although a run
checkpoints the same few shapes again and again.  Format 2 packs them into one ``bytes`` value,
the *shape*, so that a restore finds the validated plan of a frame by one dict lookup keyed by
(code object, shape) and the per-field checks run once per shape (``_frames._plan``)::

    byte 0      kind (0 coroutine, 1 generator, 2 async generator)
    byte 1      flags: bit 0, an exception is being handled
    bytes 2-5   status, int32 little-endian: the yield offset, -1 not started, -2 finished
    bytes 6-7   n, uint16: how many locals the record restores
    8 .. 8+2n   their co_varnames indices, uint16 each, increasing
    the rest    one byte per value-stack slot, bottom first: 0 a value, 1 NULL

The record is ``(code index, shape, cells, info)``: ``cells`` the closure cells (as in format 1),
``info`` the :class:`~agentrt._frames._sites.RecordInfo` as compact JSON text (one string: only
``agentrt upgrade`` reads it).  :func:`record_fields` reads either format into the format-1
fields, for the readers that judge records without building them (upgrade, tests).
"""

from __future__ import annotations

import struct
from typing import Any  # Any: record fields read from a blob are untrusted values of any type

__all__ = ["FINISHED_SHAPE_INDEX", "pack_shape", "record_fields", "unpack_shape"]

_HEAD = struct.Struct("<BBiH")
_MAX_INDEX = 0xFFFF
FINISHED_SHAPE_INDEX = -1  # the code index of a finished frame's record (it names no code)


def pack_shape(
    kind: int, status: int, bound: tuple[int, ...], null_mask: tuple[bool, ...], has_exc: bool
) -> bytes:
    """The shape bytes of one frame record (the encoder's own values: trusted)."""
    if any(i > _MAX_INDEX for i in bound):  # pragma: no cover - CPython caps co_nlocals far lower
        raise ValueError("a local index does not fit the record format")
    return b"".join(
        (
            _HEAD.pack(kind, 1 if has_exc else 0, status, len(bound)),
            struct.pack(f"<{len(bound)}H", *bound),
            bytes(null_mask),
        )
    )


def unpack_shape(shape: object) -> tuple[int, int, tuple[int, ...], tuple[bool, ...], bool] | None:
    """(kind, status, bound, null_mask, has_exc) of a blob's shape bytes; None when malformed.

    Only the layout is checked here; what the fields mean for the code is ``_frames._plan``'s job.
    """
    if type(shape) is not bytes or len(shape) < _HEAD.size:
        return None
    kind, flags, status, count = _HEAD.unpack_from(shape)
    end = _HEAD.size + 2 * count
    if flags & ~1 or len(shape) < end:
        return None
    bound = struct.unpack_from(f"<{count}H", shape, _HEAD.size)
    mask = shape[end:]
    if mask.strip(b"\x00\x01"):
        return None
    return kind, status, bound, tuple(b == 1 for b in mask), bool(flags & 1)


def record_fields(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """A frame record of either format as the format-1 fields
    ``(kind, index, status, bound, null_mask, has_exc, cells, info)``; None when it is neither.

    ``info`` is what the record holds: a tuple (format 1), a JSON string (format 2) or None.
    """
    if len(args) == 4:
        index, shape, cells, info = args
        fields = unpack_shape(shape)
        if fields is None:
            return None
        kind, status, bound, null_mask, has_exc = fields
        return (kind, index, status, bound, null_mask, has_exc, cells, info)
    if len(args) == 7:
        return (*args, None)
    if len(args) == 8:
        return tuple(args)
    return None
