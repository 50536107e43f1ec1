"""The blob envelope: fixed prefix, JSON header, digest, pickle payload.

Layout (all integers little-endian)::

    0   4  magic b"ARTB"
    4   1  format version (2, or 3 for a checkpoint that carries context variables, whose
           payload root is the ``context`` extension; version 1 is still read: it differs only
           in the frame records, see ``agentrt._frames._shape``)
    5   1  Python major that wrote the blob
    6   1  Python minor that wrote the blob
    7   1  flags: bit 0 cloudpickle payload, bit 1 payload uses referencing reconstructors,
           bit 2 signed (the digest is keyed), bit 3 sealed for a store (the header names it),
           bit 4 the header lists what the blob needs
    8   4  header length H
    12  H  header: compact JSON {"codes": [[module, qualname, digest], ...]}, plus
           "needs": [feature, ...] (flag bit 4) when the payload names reconstructors added
           after format 2 ("call", "reopen"),
           "bind": [kind, run id, sequence] when the writer bound the blob to a use, and
           with flag bit 3 "store": the store id it was sealed for and "chain": the hex
           digest of the checkpoint it follows (a checkpoint's; null for the first or for
           another kind of blob)
    12+H 32 blake2b-256 over bytes [0, 12+H) followed by the payload, keyed with the
           writer's blob key when flag bit 2 is set (see ``agentrt.keys``)
    44+H .. pickle payload (protocol 5)

The prefix, the header and the digest position are frozen across format
versions, so any blob can be verified before its version is judged: tampering
is reported as ``CorruptBlob``, a genuine blob from another version or Python as
``IncompatibleBlob``.  A store-sealed blob sets flag bit 3, which an agentrt from
before store identities does not know: it verifies the digest, then says the blob
was written by a newer agentrt (``IncompatibleBlob``), never that it was modified.
So is a blob that needs what this reader does not know: an agentrt from before
``needs`` meets an unknown flag bit, a later one an unknown feature name, and both
say "written by a newer agentrt" before the payload is decoded.
The header is readable without touching the payload, so a dump tool can list the
code a blob depends on.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Sequence
from hmac import compare_digest as _compare_digest
from typing import Any, NamedTuple  # Any: the header is JSON

import attrs

from agentrt._codec._bounds import short
from agentrt._codec._compat import PYTHON_MAJOR, PYTHON_MINOR
from agentrt.exceptions import CorruptBlob, IncompatibleBlob

MAGIC = b"ARTB"
FORMAT_VERSION = 2  # what this agentrt writes (2: compact frame records, see _frames._shape)
#: what it writes for a blob that holds an object of an extension needing more (a run's context
#: variables, ``agentrt._context``): an older agentrt then says "format 3", not something vaguer
CONTEXT_FORMAT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)  # format 1 differs only in the frame records' layout, 3 only in its root
FLAG_CLOUDPICKLE = 1
FLAG_REFERENCING = 2
FLAG_SIGNED = 4
FLAG_STORE = 8
FLAG_NEEDS = 16
KNOWN_FLAGS = FLAG_CLOUDPICKLE | FLAG_REFERENCING | FLAG_SIGNED | FLAG_STORE | FLAG_NEEDS
#: the features of "needs" this agentrt reads: the signed-only reconstructors (``_wire.SIGNED_ONLY``)
KNOWN_NEEDS: frozenset[str] = frozenset({"call", "reopen"})
DIGEST_SIZE_BYTES = 32
KEY_ENV = "AGENTRT_BLOB_KEY"

_PREFIX = struct.Struct("<4sBBBBI")
PREFIX_SIZE_BYTES = _PREFIX.size  # 12
_EMPTY_HEADER = b'{"codes":[]}'


@attrs.frozen
class CodeIdentity:
    """One entry of a blob's code table: where to find a code object again and what it must be."""

    module: str
    qualname: str
    digest: str


@attrs.frozen
class Header:
    """What :func:`read_header` tells about a blob without decoding its payload."""

    format_version: int
    python: str
    codec: str
    codes: tuple[CodeIdentity, ...]
    payload_size: int
    needs: tuple[str, ...] = ()  # features beyond format 2 a reader must know ("call", "reopen")


@attrs.frozen
class Reader:
    """What a reader knows: a seam for tests that play an older agentrt (``unpack(..., reader=)``)."""

    versions: tuple[int, ...] = READABLE_VERSIONS
    flags: int = KNOWN_FLAGS
    needs: frozenset[str] = KNOWN_NEEDS


THIS_READER = Reader()


class Envelope(NamedTuple):
    """A verified blob, split into its parts (internal to the codec)."""

    flags: int
    codes: tuple[CodeIdentity, ...]
    payload: bytes
    keyed: bool  # signed, and the signature verified with a key of this process
    bind: tuple[str, str | None, int | None] | None  # what the writer bound the blob to
    store: str | None  # the store id it was sealed for (flag bit 3); None: sealed for no store
    chain: str | None  # a checkpoint's predecessor's digest (hex); None: the first, or not a checkpoint
    digest: bytes  # this blob's own digest (what the next checkpoint's chain names)


#: What a blob is bound to: ``(kind, run id, sequence)``, or with the store seal
#: ``(kind, run id, sequence, store id, chain)`` (see ``agentrt._runtime.encoding.seal_for``).
Bind = tuple[str, "str | None", "int | None"] | tuple[str, "str | None", "int | None", str, "str | None"]


def blob_key() -> bytes:
    """The key new blobs are signed with by default: the first of ``AGENTRT_BLOB_KEY`` (b"" if unset)."""
    from agentrt.keys import env_keyring

    ring = env_keyring()
    return ring.write if ring is not None else b""


def default_read_keys() -> tuple[bytes, ...]:
    from agentrt.keys import env_keyring

    ring = env_keyring()
    return ring.read if ring is not None else ()


_HASHERS: dict[bytes, Any] = {}  # key -> a blake2b already keyed with it, copied per digest
_MAX_HASHERS = 64


def _digest(head: bytes | memoryview, payload: bytes | memoryview, key: bytes) -> bytes:
    """blake2b-256 over ``head`` then ``payload``, keyed with ``key`` (none when empty).

    A keyed hasher is made once per key and copied: keying costs a compression of its own.
    """
    keyed = _HASHERS.get(key)
    if keyed is None:
        if len(_HASHERS) >= _MAX_HASHERS:
            _HASHERS.clear()
        keyed = _HASHERS[key] = hashlib.blake2b(digest_size=DIGEST_SIZE_BYTES, key=key)
    h = keyed.copy()
    h.update(head)
    h.update(payload)
    return h.digest()


_HEADERS: dict[tuple[object, ...], bytes] = {}
#: a header's bytes -> its code table, binding, store id, chain and needs
Parsed = tuple[
    tuple[CodeIdentity, ...],
    "tuple[str, str | None, int | None] | None",
    "str | None",
    "str | None",
    tuple[str, ...],
]
_PARSED: dict[bytes, Parsed] = {}
_HEX = frozenset("0123456789abcdef")


def _is_hex(text: str) -> bool:
    return _HEX.issuperset(text)


_MAX_CACHED_HEADERS = 1024  # a process checkpoints a bounded set of chains; never grow without bound


def _header_bytes(
    codes: Sequence[tuple[str, str, str]], bind: Bind | None, needs: tuple[str, ...] = ()
) -> bytes:
    """The JSON header for a code table, cached: a run checkpoints the same chain again and again.

    A bound blob's sequence number (and a checkpoint's chain) changes with every checkpoint, so
    what is cached is everything before the number; the number (an int, or null), then the chain
    are appended -- valid JSON, the same a parser reads from ``json.dumps``'s."""
    if not codes and bind is None and not needs:
        return _EMPTY_HEADER
    seq: int | None = None
    chain: str | None = None
    # a header with no sequence number and no chain is cached whole, under a 3-tuple key; one
    # a number or a chain ends is cached as its prefix, under a longer key
    key: tuple[object, ...] = (tuple(codes), bind, needs)
    if bind is not None and (len(bind) == 5 or type(bind[2]) is int):
        store = bind[3] if len(bind) == 5 else None
        chain = bind[4] if len(bind) == 5 else None
        if chain is not None and len(chain) != 2 * DIGEST_SIZE_BYTES:  # bytes.hex() of a digest
            raise ValueError(f"a blob's chain is the hex digest of the checkpoint before it, not {chain!r}")
        if type(bind[2]) is int:
            seq = bind[2]
            key = (tuple(codes), bind[0], bind[1], store, needs)
        else:
            key = (tuple(codes), bind[0], bind[1], bind[2], store, needs)
    header = _HEADERS.get(key)
    if header is None:
        content: dict[str, Any] = {"codes": list(codes)}
        if needs:
            content["needs"] = sorted(needs)
        if bind is not None:  # last: the sequence number (and the chain) end the header
            if len(bind) == 5:
                content["store"] = bind[3]
            content["bind"] = [bind[0], bind[1], 0 if seq is not None else bind[2]]
        header = json.dumps(content, separators=(",", ":")).encode()
        if seq is not None:
            header = header[: -len(b"0]}")]  # the prefix before the sequence number
        elif len(key) != 3:
            header = header[: -len(b"}")]  # the prefix before the closing brace (a chain may follow)
        if len(_HEADERS) >= _MAX_CACHED_HEADERS:
            _HEADERS.clear()
        _HEADERS[key] = header
    if len(key) == 3:
        return header
    tail = b'],"chain":"%s"}' % chain.encode() if chain is not None else b"]}"
    if seq is None:
        return header + (tail[1:] if chain is not None else b"}")
    return b"%s%d%s" % (header, seq, tail)


def pack(
    codes: Sequence[tuple[str, str, str]],
    flags: int,
    payload: bytes | memoryview,
    key: bytes = b"",
    bind: Bind | None = None,
    version: int = FORMAT_VERSION,
    needs: tuple[str, ...] = (),
) -> bytes:
    """Assemble a blob of format ``version`` around ``payload``, signed with ``key`` when it is not empty.

    ``needs`` names the features a reader must know (listed in the header, flag bit 4 set).
    """
    header = _header_bytes(codes, bind, needs)
    if key:
        flags |= FLAG_SIGNED
    if bind is not None and len(bind) == 5:
        flags |= FLAG_STORE
    if needs:
        flags |= FLAG_NEEDS
    head = _PREFIX.pack(MAGIC, version, PYTHON_MAJOR, PYTHON_MINOR, flags, len(header)) + header
    return b"".join((head, _digest(head, payload, key), payload))


def _split(blob: bytes) -> tuple[int, int, int, int, int, int]:
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"a blob is bytes, got {type(blob).__name__}")
    if len(blob) < PREFIX_SIZE_BYTES + DIGEST_SIZE_BYTES:
        raise CorruptBlob(f"blob of {len(blob)} bytes is too short to be an agentrt blob: it was truncated")
    magic, version, major, minor, flags, header_len = _PREFIX.unpack_from(blob)
    if magic != MAGIC:
        raise CorruptBlob(f"not an agentrt blob: it starts with {bytes(blob[:4])!r}, not {MAGIC!r}")
    if header_len > len(blob) - PREFIX_SIZE_BYTES - DIGEST_SIZE_BYTES:
        raise CorruptBlob(
            f"blob header claims {header_len} bytes but the blob has only {len(blob)}: it was truncated"
        )
    return version, major, minor, flags, header_len, PREFIX_SIZE_BYTES + header_len


def _parse_header(raw: bytes | memoryview) -> Parsed:
    if raw == _EMPTY_HEADER:
        return (), None, None, None, ()
    raw = bytes(raw)
    cached = _PARSED.get(raw)
    if cached is None:
        cached = _parse_header_uncached(raw)
        if len(_PARSED) >= _MAX_CACHED_HEADERS:
            _PARSED.clear()
        _PARSED[raw] = cached
    return cached


def _parse_codes(raw: bytes | memoryview) -> tuple[CodeIdentity, ...]:
    return _parse_header(raw)[0]


def _parse_header_uncached(raw: bytes) -> Parsed:
    try:
        header = json.loads(bytes(raw))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptBlob(f"blob header is not valid JSON: {exc}") from exc
    except RecursionError:  # a header nested deeper than the parser's recursion limit
        raise CorruptBlob("blob header is JSON nested too deep; agentrt writes a flat code table") from None
    codes = header.get("codes") if isinstance(header, dict) else None
    if not isinstance(codes, list):
        raise CorruptBlob("blob header has no code table")
    table = []
    for entry in codes:
        if not (isinstance(entry, list) and len(entry) == 3 and all(isinstance(part, str) for part in entry)):
            raise CorruptBlob(f"blob header has a malformed code entry: {short(entry, 80)}")
        table.append(CodeIdentity(*entry))
    bind = header.get("bind")
    if bind is not None:
        if not (
            isinstance(bind, list)
            and len(bind) == 3
            and isinstance(bind[0], str)
            and (bind[1] is None or isinstance(bind[1], str))
            and (bind[2] is None or type(bind[2]) is int)
        ):
            raise CorruptBlob(f"blob header has a malformed binding: {short(bind, 80)}")
        bind = (bind[0], bind[1], bind[2])
    store = header.get("store")
    if store is not None and not isinstance(store, str):
        raise CorruptBlob(f"blob header has a malformed store id: {short(store, 80)}")
    chain = header.get("chain")
    if chain is not None and not (
        isinstance(chain, str) and len(chain) == 2 * DIGEST_SIZE_BYTES and _is_hex(chain)
    ):
        raise CorruptBlob(f"blob header has a malformed chain: {short(chain, 80)}")
    needs = header.get("needs", [])
    if not (isinstance(needs, list) and all(isinstance(feature, str) for feature in needs)):
        raise CorruptBlob(f"blob header has a malformed list of needs: {short(needs, 80)}")
    return tuple(table), bind, store, chain, tuple(needs)


def _check_compatible(version: int, major: int, minor: int, flags: int, reader: Reader = THIS_READER) -> None:
    if version not in reader.versions:
        raise IncompatibleBlob(
            f"blob format version {version} cannot be read by this agentrt, which reads format "
            f"versions {', '.join(map(str, reader.versions))}; restore it with the agentrt release "
            "that wrote it"
        )
    if (major, minor) != (PYTHON_MAJOR, PYTHON_MINOR):
        raise IncompatibleBlob(
            f"blob was written by Python {major}.{minor} and this is Python {PYTHON_MAJOR}.{PYTHON_MINOR}; "
            f"checkpoints hold bytecode state, so restore it with Python {major}.{minor}"
        )
    if flags & ~reader.flags:
        raise IncompatibleBlob(
            f"blob uses header flags {flags:#04x} this agentrt does not know; "
            "it was written by a newer agentrt: upgrade agentrt to read it"
        )


def _check_needs(needs: tuple[str, ...], reader: Reader) -> None:
    unknown = sorted(set(needs) - reader.needs)
    if unknown:
        raise IncompatibleBlob(
            f"blob needs {', '.join(map(repr, unknown))}, which this agentrt does not know (it reads "
            f"{', '.join(map(repr, sorted(reader.needs))) or 'none'}); it was written by a newer "
            "agentrt: upgrade agentrt to read it"
        )


def unpack(
    blob: bytes, keys: Sequence[bytes] | None = None, key_source: str = "", reader: Reader = THIS_READER
) -> Envelope:
    """Verify ``blob`` (length, digest, then version and needs) and return its parts.

    A signed blob must verify with one of ``keys`` (default: ``AGENTRT_BLOB_KEY``); an
    unsigned one with the plain digest, and comes back with ``keyed`` False.  (``_split``'s
    checks, inlined: this runs on every restore.)
    """
    if type(blob) is not bytes:
        _split(blob)  # a TypeError for what is not bytes-like, else the checks below on a copy
        blob = bytes(blob)
    size = len(blob)
    if size < PREFIX_SIZE_BYTES + DIGEST_SIZE_BYTES:
        _split(blob)  # raises, saying why
    magic, version, major, minor, flags, header_len = _PREFIX.unpack_from(blob)
    payload_start = PREFIX_SIZE_BYTES + header_len
    digest_end = payload_start + DIGEST_SIZE_BYTES
    if magic != MAGIC or digest_end > size:
        _split(blob)  # raises, saying why
    head = blob[:payload_start]
    payload = blob[digest_end:]
    stored = blob[payload_start:digest_end]
    signed = bool(flags & FLAG_SIGNED)
    if signed:
        candidates = default_read_keys() if keys is None else keys
        if not candidates:
            raise CorruptBlob(
                "agentrt blob is signed, but this process has no blob key to verify it: set "
                f"{KEY_ENV} (or the key file) to the key of the process or store that wrote it"
            )
        for key in candidates:
            if _compare_digest(_digest(head, payload, key), stored):
                break
        else:
            raise CorruptBlob(
                "agentrt blob: digest mismatch — the blob was modified, or it was signed with a key "
                f"that is not among this process's keys ({key_source or f'${KEY_ENV}'}); add the old "
                "key after the new one to read blobs from before a rotation"
            )
    elif not _compare_digest(_digest(head, payload, b""), stored):
        raise CorruptBlob("agentrt blob: digest mismatch — the blob was truncated or modified")
    if (
        version != FORMAT_VERSION
        or major != PYTHON_MAJOR
        or minor != PYTHON_MINOR
        or flags & ~KNOWN_FLAGS
        or reader is not THIS_READER
    ):
        _check_compatible(version, major, minor, flags, reader)  # format 1 passes: it is still read
    raw = head[PREFIX_SIZE_BYTES:]
    parsed = _PARSED.get(raw)
    if parsed is None:
        parsed = _parse_header(raw)
    store = parsed[2]
    if bool(flags & FLAG_STORE) != (store is not None):
        raise CorruptBlob(
            "blob header and flags disagree on the store it was sealed for: it was not written by agentrt"
        )
    if flags & FLAG_NEEDS:
        _check_needs(parsed[4], reader)
    return tuple.__new__(
        Envelope, (flags, parsed[0], payload, signed, parsed[1], store, parsed[3], stored)
    )  # skips NamedTuple's __new__


def read_header(blob: bytes) -> Header:
    """Describe ``blob`` from its prefix and header; the payload is neither verified nor decoded."""
    version, major, minor, flags, _, payload_start = _split(blob)
    if version not in READABLE_VERSIONS:
        _check_compatible(version, major, minor, flags)
    codes, _, _, _, needs = _parse_header(memoryview(blob)[PREFIX_SIZE_BYTES:payload_start])
    return Header(
        format_version=version,
        python=f"{major}.{minor}",
        codec="cloudpickle" if flags & FLAG_CLOUDPICKLE else "agentrt",
        codes=codes,
        payload_size=len(blob) - payload_start - DIGEST_SIZE_BYTES,
        needs=needs,
    )


def reseal(
    blob: bytes,
    read_keys: Sequence[bytes],
    key_source: str,
    write_key: bytes,
    bind: Bind,
) -> bytes:
    """``blob`` verified with ``read_keys`` and signed again with ``write_key`` for ``bind`` (``agentrt
    move``: a run's blobs sealed for another store).  The payload is kept byte for byte, so nothing is
    decoded and no code need be importable; the caller checks the old binding first."""
    if not write_key:
        raise ValueError("a blob is resealed with a key")
    envelope = unpack(blob, read_keys, key_source)
    if not envelope.keyed:
        raise CorruptBlob("agentrt blob is not signed, so it cannot be resealed: only signed blobs move")
    version = blob[4]
    codes = [(c.module, c.qualname, c.digest) for c in envelope.codes]
    flags = envelope.flags & ~(FLAG_SIGNED | FLAG_STORE | FLAG_NEEDS)
    needs = read_header(blob).needs  # what the payload names travels with it
    return pack(codes, flags, envelope.payload, write_key, bind, version=version, needs=needs)
