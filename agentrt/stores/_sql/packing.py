"""How a blob is kept in a store row: deflated against a fixed dictionary when that is smaller.

Purely store-side: :func:`pack` runs on the way into a row and :func:`unpack` on the way out, so
every blob a store hands back is byte for byte the blob it was given (its digest, MAC, seal and
chain are those of the blob, docs/blob-format.md is unchanged).  A stored value is either

- the blob itself (anything not starting with :data:`MARK`: every blob starts with ``b"ARTB"``), or
- ``MARK + b"\\x02" + raw deflate`` of the blob against :data:`DICTIONARY_V2` (``b"\\x01"``:
  against :data:`DICTIONARY_V1`, as rows were written before schema 13 / 9), or
- ``MARK + b"\\x00" + the bytes`` (bytes that start with ``MARK`` themselves, kept verbatim).

A stored value that does not decode (a damaged row) is handed back as it is, so the codec reports
it as it reports any damaged blob (``CorruptBlob``); inflating stops past :data:`MAX_BLOB_BYTES`.
Rows written before schema version 12 (SQLite; 8 on PostgreSQL) hold plain blobs and stay readable;
rows packed against version 1 (schema 12 / 8) too.
"""

from __future__ import annotations

import functools
import zlib
from typing import Any  # Any: zlib's compressor type is not public

__all__ = ["DICTIONARY_V1", "DICTIONARY_V2", "MARK", "MAX_BLOB_BYTES", "pack", "unpack"]

#: The first 4 bytes of a packed value (a blob's are ``b"ARTB"``).
MARK = b"ARTZ"
#: Blobs shorter than this are kept as they are (deflate would save too little to pay for itself).
MIN_PACK_BYTES = 96
#: deflate's hash table size (1..9): 2**(7+level) entries; 6 suits blobs of a few KB
_MEM_LEVEL = 6
#: The largest blob :func:`unpack` inflates (larger output is a damaged or hostile row).
MAX_BLOB_BYTES = 1 << 30


def _s(text: str) -> bytes:
    """``text`` as the pickle protocol 5 short string the codec writes, memoized."""
    raw = text.encode()
    return b"\x8c" + bytes([len(raw)]) + raw + b"\x94"


#: What deflate may refer back to besides the blob itself: the parts every blob a runtime writes
#: shares (the header's keys, the codec's reconstructors, the runtime's own classes), the most
#: frequent last (closest).  FROZEN: a packed row names this dictionary by its version byte; a
#: different dictionary is a new version, ``DICTIONARY_V1`` stays readable forever.
DICTIONARY_V1 = b"".join(
    [
        b'"]],"bind":["error","error#0",null]}',
        _s("agentrt._sdk.context"),
        _s("Context"),
        _s("builtins"),
        _s("getattr"),
        _s("agentrt._sdk.requests"),
        _s("Gather"),
        _s("Sleep"),
        _s("Spawn"),
        _s("Ask"),
        _s("prompt"),
        _s("ToolCall"),
        _s("name"),
        _s("kwargs"),
        _s("seqiter"),
        _s("range"),
        _s("agentrt.lowlevel"),
        _s("_Trap"),
        _s("agentrt._sdk.task"),
        _s("Task"),
        b"\x94N\x86\x94R\x94h\th\x15}\x94(",
        _s("run_id"),
        _s("agent"),
        _s("tool_names"),
        _s("agent_tool_names"),
        _s("has_ui"),
        b'\x94)\x8c\x8b[1,["input","task","result","reply"],[],[0,1,2],["await",0,3,"await task.tools.',
        b'",0,["for_iterator","awaited"],117]]\x94t\x94R\x94h\x00',
        b'"await task.ui.ask(\\"',
        _s("state"),
        b"\x93\x94h\x07]\x94(Nh\x00",
        _s("obj"),
        b"\x93\x94h\x00",
        _s("ref"),
        b"\x93\x94",
        _s("class"),
        b"\x87\x94R\x94N\x86\x94R\x94h\t",
        b"\x80\x05\x95\x11\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01i\x94K\x00\x8c\x02ok\x94\x88u.",
        b'ARTB\x02\x03\r\x0c[\x00\x00\x00{"codes":[],"store":"',
        b'","bind":["value#0","',
        b'",1]}',
        b"\x80\x05\x95_\x01\x00\x00\x00\x00\x00\x00",
        _s("agentrt._codec._wire"),
        _s("ext"),
        b"\x93\x94(",
        _s("frame"),
        b"K\x00C\x10\x00\x00",
        b'ARTB\x02\x03\r\x0e\xed\x00\x00\x00{"codes":[["',
        b'","',
        b'"]],"store":"',
        b'","bind":["checkpoint","',
        b'",3],"chain":"',
    ]
)


#: Version 2 (schema 13 on SQLite, 9 on PostgreSQL): version 1 and, nearest, how a payload has
#: started since the codec's preset memo (``agentrt._codec._preset``): the preambles a checkpoint's
#: frames and objects read (ext and state; then ref; then obj and ref), the empty one of a plain
#: value, and what follows the preamble in a checkpoint.  FROZEN, as version 1: the byte strings
#: are written out, not made from ``_preset``, whose table may change.
DICTIONARY_V2 = DICTIONARY_V1 + b"".join(
    [
        b"\x80\x05\x95\x11\x00\x00\x00\x00\x00\x00\x00N\x94\x94\x94\x94\x94\x94\x940"
        b"}\x94(\x8c\x01i\x94K\x00\x8c\x02ok\x94\x88u.",
        b"(\x8c\x14agentrt._codec._wire\x94h\x00\x8c\x03ext\x93\x94h\x00\x8c\x05state\x93\x94\x94\x94\x94\x941",
        b"(\x8c\x14agentrt._codec._wire\x94h\x00\x8c\x03ext\x93\x94h\x00\x8c\x05state\x93\x94\x94"
        b"h\x00\x8c\x03ref\x93\x94\x94\x941",
        b"\x80\x05\x95\xb5\x02\x00\x00\x00\x00\x00\x00(\x8c\x14agentrt._codec._wire\x94h\x00\x8c\x03ext\x93\x94"
        b"h\x00\x8c\x05state\x93\x94h\x00\x8c\x03obj\x93\x94h\x00\x8c\x03ref\x93\x94\x94\x941"
        b"h\x01(\x8c\x05frame\x94K\x00C\x10\x00\x00",
    ]
)
#: version byte -> the dictionary a packed row of that version was deflated against
_DICTIONARIES = {b"\x01": DICTIONARY_V1, b"\x02": DICTIONARY_V2}
#: what :func:`pack` writes
_VERSION = b"\x02"


@functools.cache
def _primed(bits: int) -> Any:
    """A compressor with a window of ``2**bits`` that has read :data:`DICTIONARY_V2`: a copy of it
    compresses like a new one, without clearing its tables or reading the dictionary again."""
    return zlib.compressobj(6, zlib.DEFLATED, -bits, _MEM_LEVEL, zlib.Z_DEFAULT_STRATEGY, DICTIONARY_V2)


def pack(blob: bytes) -> bytes:
    """What a row keeps of ``blob``: deflated when that is smaller, else ``blob`` itself."""
    if blob[:4] == MARK:
        return MARK + b"\x00" + blob
    if len(blob) < MIN_PACK_BYTES:
        return blob
    # A window just large enough for the dictionary and the blob (the most deflate can refer back
    # to) and a small hash table: what the compressor clears is then a few KB for a typical blob
    # instead of 384 KB -- that, not the compression, cost ~90 us a call in a busy worker.  Any
    # window up to 32 KB makes the same format (inflate reads it with its own).
    bits = min(15, max(9, (len(DICTIONARY_V2) + len(blob)).bit_length()))
    deflate = _primed(bits).copy()
    packed: bytes = deflate.compress(blob) + deflate.flush()
    if len(packed) + 5 >= len(blob):
        return blob
    return MARK + _VERSION + packed


def unpack(stored: bytes | memoryview) -> bytes:
    """The blob a row keeps as ``stored`` (bytes or a driver's memoryview)."""
    value = bytes(stored)
    if value[:4] != MARK:
        return value
    kind = value[4:5]
    if kind == b"\x00":
        return value[5:]
    dictionary = _DICTIONARIES.get(kind)
    if dictionary is None:
        return value  # not ours to read: the codec says what it is
    inflate = zlib.decompressobj(-15, dictionary)
    try:
        blob = inflate.decompress(value[5:], MAX_BLOB_BYTES)
    except zlib.error:
        return value
    if not inflate.eof or inflate.unconsumed_tail or inflate.unused_data:
        return value
    return blob
