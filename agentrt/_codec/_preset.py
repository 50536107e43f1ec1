"""The reconstructors every blob names, written without a Python call per blob.

The first time the C pickler meets one of agentrt's reconstructor names in a blob it
calls ``reducer_override`` (a Python call, which answers "write it as a global") and then
``save_global``, which imports the module and checks the attribute: ~10,000 instructions
per name, four names in a typical checkpoint (``ext``, ``state``, ``obj``, ``ref``).  So the
encoder starts its pickle memo with the names of ``TABLE`` at fixed indices
(``preset_memo``): the pickler writes a memo read of the index for each, and never calls
back (net of the preamble below, a tenth of a 20-local checkpoint's ``get``).

A reader must find those entries in its memo.  After the dump, ``with_preamble`` puts
a preamble in front of the pickle that fills exactly those indices: the names the
pickle reads, as ordinary globals (``STACK_GLOBAL``, ``MEMOIZE``), and a repeat of one
of them (or None) in the others.  The payload stays an ordinary pickle of the opcodes
agentrt always wrote, so every reader -- this one, an older agentrt, the unsigned path's
opcode scan, bounds walk and dry run -- reads it unchanged, and the blob format is what
it was.

Which names a pickle reads, ``reduce_value`` records as it hands the pickler each reduce
tuple (``EncodeState.reads``): every reconstructor a payload names is the callable or the
state setter of one of them.
"""

from __future__ import annotations

import struct

from agentrt._codec import _wire

#: The names in the preset memo, at indices 1.. (0 holds the module's name).  Readers need no
#: copy of it -- the preamble names them -- so it may change from one release to the next.
TABLE: tuple[str, ...] = ("ext", "state", "obj", "ref", "fn", "cell")

#: what index 0 holds in the pickler's memo: an object no blob holds, so the pickler
#: never reads it (the preamble puts the module's name there, for the names to share)
_MODULE_SLOT = object()

#: the preset memo, as ``pickle.Pickler.memo`` takes it: id -> (index, object)
_PRESET: dict[int, tuple[int, object]] = {
    id(held): (index, held)
    for index, held in enumerate((_MODULE_SLOT, *(_wire.PLACEHOLDERS[name] for name in TABLE)))
}
#: memo size after the preset: the first index the pickler gives an object of the blob
SIZE = len(_PRESET)
_PLACEHOLDERS = frozenset(_wire.PLACEHOLDERS[name] for name in TABLE)
_REFERENCING = frozenset(_wire.PLACEHOLDERS[name] for name in TABLE if name in _wire.REFERENCING)

#: a pickle's start: PROTO 5, then (if it is framed) FRAME and the frame's length
_FRAMED = struct.Struct("<2sBQ")
_FRAME = 0x95
_PROTO_5 = b"\x80\x05"
_NONE, _MEMOIZE, _POP, _STACK_GLOBAL, _BINGET_0 = b"N", b"\x94", b"0", b"\x93", b"h\x00"
_MARK, _POP_MARK = b"(", b"1"


def _short_string(text: str) -> bytes:
    data = text.encode()
    return b"\x8c" + bytes((len(data),)) + data


def _preamble(read: frozenset[object]) -> bytes:
    """Opcodes that fill memo indices ``0 .. SIZE-1``: the module's name at 0, each read name
    as a global at its index (left on the stack above a mark, popped at the end), and in the
    others whatever is on top -- None when nothing is read."""
    if not read:
        return _NONE + _MEMOIZE * SIZE + _POP
    parts = [_MARK, _short_string(_wire.WIRE_MODULE), _MEMOIZE]
    for name in TABLE:
        if _wire.PLACEHOLDERS[name] in read:
            parts += [_BINGET_0, _short_string(name), _STACK_GLOBAL]
        parts.append(_MEMOIZE)
    parts.append(_POP_MARK)
    return b"".join(parts)


#: the names read (a subset of TABLE) -> (their preamble, whether one is a referencing name)
_PREAMBLES: dict[frozenset[object], tuple[bytes, bool]] = {}


def preset_memo() -> dict[int, tuple[int, object]]:
    """What an encoder's ``memo`` starts as (the pickler copies it)."""
    return _PRESET


def with_preamble(pickled: memoryview, reads: set[object]) -> tuple[bytes, bool]:
    """``pickled`` (a dump that started from ``preset_memo()`` and named the reconstructors
    ``reads``) with the preamble it needs, and whether it names a referencing reconstructor of
    the table (the header flag: the pickler wrote those without asking ``_reduce``)."""
    read = _PLACEHOLDERS.intersection(reads)
    known = _PREAMBLES.get(read)
    if known is None:
        known = _PREAMBLES[read] = (_preamble(read), not _REFERENCING.isdisjoint(read))
    preamble = known[0]
    if len(pickled) >= _FRAMED.size:
        proto, opcode, size = _FRAMED.unpack_from(pickled)
        if opcode == _FRAME:  # the preamble joins the first frame: the unpickler reads it in one go
            merged = _FRAMED.pack(proto, _FRAME, size + len(preamble))
            return b"".join((merged, preamble, pickled[_FRAMED.size :])), known[1]
    # no frame first (a tiny pickle, or one that starts with a string too big for a frame): the
    # preamble gets a frame of its own -- outside one, each opcode is a call of the stream's read
    return b"".join((_FRAMED.pack(_PROTO_5, _FRAME, len(preamble)), preamble, pickled[2:])), known[1]
