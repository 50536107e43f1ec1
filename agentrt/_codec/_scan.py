"""The opcode allowlist: what the C unpickler may be shown from an unauthenticated blob.

agentrt's encoder writes a small, fixed subset of pickle protocol 5 (below).  An
unkeyed blob is checked against it *before* unpickling, because the C unpickler
of CPython 3.11–3.13 has sharp edges no reconstructor can blunt: a LONG_BINPUT
or PUT with a huge memo index makes it allocate and zero an array of that size
(gigabytes from five bytes; CPython gh-115952), and opcodes such as BUILD,
NEWOBJ, INST or GLOBAL act on objects without going through ``find_class``.

The check is one compiled regular expression run by the ``re`` engine over the
payload -- C speed, one Python step per long string and per 64 KiB frame.  Signed
blobs skip it: their author holds the key and may name ``call``, which reaches any
importable callable, so the allowlist could not stop anything that author could
not do; for a 1 KB checkpoint it was a tenth of a restore.
"""

from __future__ import annotations

import functools
import pickletools
import re

from agentrt.exceptions import CorruptBlob

_CODES = {op.name: op.code.encode("latin-1") for op in pickletools.opcodes}

#: opcodes written by agentrt's encoder, grouped by the shape of their argument
_NO_ARGUMENT = (
    "NONE",
    "NEWTRUE",
    "NEWFALSE",
    "EMPTY_LIST",
    "APPEND",
    "APPENDS",
    "EMPTY_DICT",
    "SETITEM",
    "SETITEMS",
    "EMPTY_SET",
    "ADDITEMS",
    "FROZENSET",
    "EMPTY_TUPLE",
    "TUPLE1",
    "TUPLE2",
    "TUPLE3",
    "TUPLE",
    "MARK",
    "POP",
    "POP_MARK",
    "MEMOIZE",
    "STACK_GLOBAL",
    "REDUCE",
)
_FIXED_ARGUMENT_BYTES = {
    "BININT1": 1,
    "BINGET": 1,
    "BININT2": 2,
    "BININT": 4,
    "LONG_BINGET": 4,
    "BINFLOAT": 8,
    "FRAME": 8,
}
_LENGTH1 = ("SHORT_BINUNICODE", "SHORT_BINBYTES", "LONG1")
_LENGTH4 = ("BINUNICODE", "BINBYTES", "LONG4")
_LENGTH8 = ("BINUNICODE8", "BINBYTES8", "BYTEARRAY8")
_PROTO_5 = _CODES["PROTO"] + bytes([5])
_STOP = _CODES["STOP"][0]
_MAX_SHORT_LENGTH = 255


def _charset(names: tuple[str, ...]) -> bytes:
    return b"[" + b"".join(re.escape(_CODES[name]) for name in names) + b"]"


@functools.cache  # compiled on the first check, not at import: most processes never load a blob
def _build_run() -> re.Pattern[bytes]:
    """A run of allowed opcodes: ``NOARG*`` then any number of ``(opcode with argument) NOARG*``.

    The same language as a repeat of one alternation over every opcode, with a fraction of its
    iterations: the engine pays per iteration of the outer repeat, and a run of opcodes without
    an argument (memo writes, marks, tuples, calls: more than half of a real payload) is one
    character class matched in one go.  Each alternative starts with its own opcode byte, so at
    most one matches anywhere; the commonest come first.
    """
    lengths = (
        b"(?:" + b"|".join(re.escape(bytes([n])) + b".{%d}" % n for n in range(_MAX_SHORT_LENGTH + 1)) + b")"
    )
    no_argument = _charset(_NO_ARGUMENT) + b"*+"
    alternatives = [
        re.escape(_CODES["SHORT_BINUNICODE"]) + lengths,
        re.escape(_CODES["BININT1"]) + b".",
        re.escape(_CODES["BINGET"]) + b".",
    ]
    by_size: dict[int, list[str]] = {}
    for name, size in _FIXED_ARGUMENT_BYTES.items():
        if name not in ("BININT1", "BINGET"):
            by_size.setdefault(size, []).append(name)
    alternatives += [_charset(tuple(names)) + b".{%d}" % size for size, names in sorted(by_size.items())]
    alternatives.append(_charset(tuple(n for n in _LENGTH1 if n != "SHORT_BINUNICODE")) + lengths)
    # possessive: no backtracking state kept
    return re.compile(
        b"(?s:" + no_argument + b"(?:(?:" + b"|".join(alternatives) + b")" + no_argument + b")*+)"
    )


_LONG_ARGUMENT = {**{_CODES[n][0]: 4 for n in _LENGTH4}, **{_CODES[n][0]: 8 for n in _LENGTH8}}
_NAMES = {op.code.encode("latin-1")[0]: op.name for op in pickletools.opcodes}


def check_payload(payload: bytes) -> None:
    """Raise ``CorruptBlob`` unless ``payload`` uses only the opcodes agentrt writes, ending at STOP."""
    size = len(payload)
    if payload[:2] != _PROTO_5:
        raise CorruptBlob("blob payload does not start with pickle protocol 5: it was modified")
    position = 2
    run = _build_run()
    while True:
        match = run.match(payload, position)
        position = match.end() if match is not None else position
        if position >= size:
            raise CorruptBlob("blob payload ends without a STOP opcode: it was truncated")
        opcode = payload[position]
        if opcode == _STOP:
            if position != size - 1:
                raise CorruptBlob(
                    f"blob payload has {size - position - 1} bytes after its end: it was modified"
                )
            return
        width = _LONG_ARGUMENT.get(opcode)
        if width is None:
            name = _NAMES.get(opcode, f"byte {opcode:#04x}")
            raise CorruptBlob(
                f"blob payload uses pickle opcode {name} at byte {position}, which agentrt never "
                "writes: it was modified"
            )
        length = int.from_bytes(payload[position + 1 : position + 1 + width], "little")
        position += 1 + width + length
        if position > size:
            raise CorruptBlob("blob payload ends inside a string: it was truncated")
