"""Taking blobs apart and putting them back together (tests only): forge what an attacker could."""

from __future__ import annotations

import struct

from agentrt._codec import _format


def split(blob: bytes) -> tuple[bytes, bytes]:
    """(prefix + header, payload) of a valid blob."""
    header_len = struct.unpack_from("<I", blob, 8)[0]
    head_end = _format.PREFIX_SIZE_BYTES + header_len
    return blob[:head_end], blob[head_end + _format.DIGEST_SIZE_BYTES :]


def sign(head: bytes, payload: bytes) -> bytes:
    """Assemble a blob with a correct digest for whatever ``head`` and ``payload`` say."""
    key = _format.blob_key()
    flags = head[7] | _format.FLAG_SIGNED if key else head[7] & ~_format.FLAG_SIGNED
    head = head[:7] + bytes([flags]) + head[8:]
    return head + _format._digest(head, payload, key) + payload


def resign(blob: bytes, payload: bytes | None = None, *, flags: int | None = None) -> bytes:
    head, old_payload = split(blob)
    if flags is not None:
        head = head[:7] + bytes([flags]) + head[8:]
    return sign(head, old_payload if payload is None else payload)


def with_prefix(blob: bytes, *, version: int | None = None, minor: int | None = None) -> bytes:
    head, payload = split(blob)
    raw = bytearray(head)
    if version is not None:
        raw[4] = version
    if minor is not None:
        raw[6] = minor
    return sign(bytes(raw), payload)
