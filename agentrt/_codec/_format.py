"""The blob envelope: fixed prefix, JSON header, digest, pickle payload.

Layout (all integers little-endian)::

    0   4  magic b"ARTB"
    4   1  format version (1)
    5   1  Python major that wrote the blob
    6   1  Python minor that wrote the blob
    7   1  flags: bit 0 cloudpickle payload, bit 1 payload uses referencing reconstructors
    8   4  header length H
    12  H  header: compact JSON {"codes": [[module, qualname, digest], ...]}
    12+H 32 blake2b-256 over bytes [0, 12+H) followed by the payload,
           keyed with AGENTRT_BLOB_KEY when that variable is set
    44+H .. pickle payload (protocol 5)

The prefix, the header and the digest position are frozen across format
versions, so any blob can be verified before its version is judged: tampering
is reported as ``CorruptBlob``, a genuine blob from another version or Python as
``IncompatibleBlob``.  The header is readable without touching the payload, so a
dump tool can list the code a blob depends on.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import struct
from collections.abc import Sequence
from typing import Any, NamedTuple

import attrs

from agentrt._codec._bounds import short
from agentrt._codec._compat import PYTHON_MAJOR, PYTHON_MINOR
from agentrt.exceptions import CorruptBlob, IncompatibleBlob

MAGIC = b"ARTB"
FORMAT_VERSION = 1
FLAG_CLOUDPICKLE = 1
FLAG_REFERENCING = 2
KNOWN_FLAGS = FLAG_CLOUDPICKLE | FLAG_REFERENCING
DIGEST_SIZE_BYTES = 32
KEY_ENV = "AGENTRT_BLOB_KEY"

_PREFIX = struct.Struct("<4sBBBBI")
PREFIX_SIZE_BYTES = _PREFIX.size  # 12
_EMPTY_HEADER = b'{"codes":[]}'
_MAX_KEY_BYTES = 64  # blake2b's key limit


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


class Envelope(NamedTuple):
    """A verified blob, split into its parts (internal to the codec)."""

    flags: int
    codes: tuple[CodeIdentity, ...]
    payload: bytes
    keyed: bool


_key_cache: tuple[object, bytes] = (None, b"")
# os.environ keeps the encoded environment in ``_data``; reading it directly saves
# the key encoding and value decoding of ``os.environ.get`` on every dumps/loads.
_environ_data: Any = getattr(os.environ, "_data", None)
_environ_key: Any = os.environ.encodekey(KEY_ENV) if hasattr(os.environ, "encodekey") else KEY_ENV


def blob_key() -> bytes:
    """The digest key from ``AGENTRT_BLOB_KEY``: its UTF-8 bytes, hashed if over 64 bytes (b"" if unset)."""
    global _key_cache
    if isinstance(_environ_data, dict):
        raw: object = _environ_data.get(_environ_key)
    else:  # pragma: no cover - an os.environ without _data
        raw = os.environ.get(KEY_ENV)
    cached_raw, cached_key = _key_cache
    if raw == cached_raw:
        return cached_key
    text = os.environ.get(KEY_ENV)
    key = b"" if not text else text.encode("utf-8", "surrogateescape")
    if len(key) > _MAX_KEY_BYTES:
        key = hashlib.blake2b(key).digest()
    _key_cache = (raw, key)
    return key


def _digest(head: bytes | memoryview, payload: bytes | memoryview, key: bytes) -> bytes:
    h = hashlib.blake2b(head, digest_size=DIGEST_SIZE_BYTES, key=key)
    h.update(payload)
    return h.digest()


_HEADERS: dict[tuple[tuple[str, str, str], ...], bytes] = {}
_PARSED: dict[bytes, tuple[CodeIdentity, ...]] = {}
_MAX_CACHED_HEADERS = 1024  # a process checkpoints a bounded set of chains; never grow without bound


def _header_bytes(codes: Sequence[tuple[str, str, str]]) -> bytes:
    """The JSON header for a code table, cached: a run checkpoints the same chain again and again."""
    if not codes:
        return _EMPTY_HEADER
    key = tuple(codes)
    header = _HEADERS.get(key)
    if header is None:
        header = json.dumps({"codes": list(codes)}, separators=(",", ":")).encode()
        if len(_HEADERS) >= _MAX_CACHED_HEADERS:
            _HEADERS.clear()
        _HEADERS[key] = header
    return header


def pack(codes: Sequence[tuple[str, str, str]], flags: int, payload: bytes | memoryview) -> bytes:
    """Assemble a blob around ``payload``."""
    header = _header_bytes(codes)
    head = _PREFIX.pack(MAGIC, FORMAT_VERSION, PYTHON_MAJOR, PYTHON_MINOR, flags, len(header)) + header
    return b"".join((head, _digest(head, payload, blob_key()), payload))


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


def _parse_codes(raw: bytes | memoryview) -> tuple[CodeIdentity, ...]:
    if raw == _EMPTY_HEADER:
        return ()
    raw = bytes(raw)
    cached = _PARSED.get(raw)
    if cached is None:
        cached = _parse_codes_uncached(raw)
        if len(_PARSED) >= _MAX_CACHED_HEADERS:
            _PARSED.clear()
        _PARSED[raw] = cached
    return cached


def _parse_codes_uncached(raw: bytes) -> tuple[CodeIdentity, ...]:
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
    return tuple(table)


def _check_compatible(version: int, major: int, minor: int, flags: int) -> None:
    if version != FORMAT_VERSION:
        raise IncompatibleBlob(
            f"blob format version {version} cannot be read by this agentrt, which reads format "
            f"version {FORMAT_VERSION}; restore it with the agentrt release that wrote it"
        )
    if (major, minor) != (PYTHON_MAJOR, PYTHON_MINOR):
        raise IncompatibleBlob(
            f"blob was written by Python {major}.{minor} and this is Python {PYTHON_MAJOR}.{PYTHON_MINOR}; "
            f"checkpoints hold bytecode state, so restore it with Python {major}.{minor}"
        )
    if flags & ~KNOWN_FLAGS:
        raise IncompatibleBlob(
            f"blob uses header flags {flags:#04x} this agentrt does not know; "
            "it was written by a newer agentrt"
        )


def unpack(blob: bytes) -> Envelope:
    """Verify ``blob`` (length, digest, then version) and return its parts."""
    version, major, minor, flags, _, payload_start = _split(blob)
    digest_end = payload_start + DIGEST_SIZE_BYTES
    if type(blob) is not bytes:
        blob = bytes(blob)
    key = blob_key()
    payload = blob[digest_end:]
    if not hmac.compare_digest(_digest(blob[:payload_start], payload, key), blob[payload_start:digest_end]):
        hint = (
            " (or it was written with a different AGENTRT_BLOB_KEY)"
            if key
            else " (or it was written with AGENTRT_BLOB_KEY set: set the same key to read it)"
        )
        raise CorruptBlob(f"agentrt blob: digest mismatch — the blob was truncated or modified{hint}")
    if version != FORMAT_VERSION or major != PYTHON_MAJOR or minor != PYTHON_MINOR or flags & ~KNOWN_FLAGS:
        _check_compatible(version, major, minor, flags)
    codes = _parse_codes(blob[PREFIX_SIZE_BYTES:payload_start])
    return tuple.__new__(Envelope, (flags, codes, payload, bool(key)))  # skips NamedTuple's Python __new__


def read_header(blob: bytes) -> Header:
    """Describe ``blob`` from its prefix and header; the payload is neither verified nor decoded."""
    version, major, minor, flags, _, payload_start = _split(blob)
    if version != FORMAT_VERSION:
        _check_compatible(version, major, minor, flags)
    codes = _parse_codes(memoryview(blob)[PREFIX_SIZE_BYTES:payload_start])
    return Header(
        format_version=version,
        python=f"{major}.{minor}",
        codec="cloudpickle" if flags & FLAG_CLOUDPICKLE else "agentrt",
        codes=codes,
        payload_size=len(blob) - payload_start - DIGEST_SIZE_BYTES,
    )
