"""A store's identity and each run's signed head: what makes replay across stores and rollback visible.

*Identity.*  Every store gets a random id when it is created (a store made by an older agentrt
gets one when it is migrated).  The runtime seals each blob it writes for that id
(``agentrt._runtime.encoding.seal_for``), so a blob copied from another store is refused even
when both stores share a key and a run id; ``agentrt move`` re-seals a run deliberately.

*Head.*  A run row's ``head`` column is a signature, with the store's key, over the store id,
the run id, the run's newest checkpoint (its sequence number and digest) and whether the run
has finished.  The store writes it in the transaction of every write that changes one of those
(create, checkpoint, upgrade's rewrite, reopen, finish).  Someone who can write the store but
holds no key can delete rows and edit columns, but cannot make a head: deleting a run's newest
checkpoint, rewinding its row or reviving a finished run leaves a head that names something else,
and the runtime refuses to drive it (:func:`check_head`).  Each checkpoint also names the
digest of the one before it (its chain), so an older checkpoint swapped for another genuine one
of the run is refused where it is read back.  What this cannot see -- a whole store, or a run's
rows and head together, put back as they were earlier -- is said in docs/blob-format.md §8.

*Legacy blobs.*  A store migrated from a version without identities keeps blobs sealed for no
store; it accepts them (and only it: the marker is signed) so its runs keep resuming.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from hmac import compare_digest
from typing import Any  # Any: hashlib's hash objects have no public type

import attrs

from agentrt.keys import Keyring

__all__ = [
    "Head",
    "blob_digest",
    "check_head",
    "legacy_marker",
    "legacy_marker_valid",
    "make_head",
    "new_store_id",
    "parse_head",
]

_PREFIX = struct.Struct("<4sBBBBI")  # the blob envelope's prefix (agentrt._codec._format)
_DIGEST_BYTES = 32
_MAC_BYTES = 16  # a head's MAC: 128 bits, as much as a forger would have to guess; half the text to write


def new_store_id() -> str:
    """A fresh store identity: 128 random bits as 32 hex digits."""
    return secrets.token_hex(16)


def blob_digest(blob: bytes | memoryview) -> bytes:
    """The digest a blob carries (its signature when signed), read at its fixed place; b"" if none."""
    if len(blob) < _PREFIX.size + _DIGEST_BYTES:
        return b""
    header_len = _PREFIX.unpack_from(blob)[5]
    start = _PREFIX.size + header_len
    return bytes(blob[start : start + _DIGEST_BYTES])


_HASHERS: dict[bytes, Any] = {}  # key -> a blake2b already keyed with it, copied per head
_MAX_HASHERS = 64


def _mac(key: bytes, *parts: str) -> str:
    """Keyed BLAKE2b-128 (personalized: a head's MAC is never a blob's digest) over ``parts``.  A keyed
    hasher is made once per key and copied, as ``agentrt._codec._format`` does: a step signs a head."""
    keyed = _HASHERS.get(key)
    if keyed is None:
        if len(_HASHERS) >= _MAX_HASHERS:
            _HASHERS.clear()
        keyed = _HASHERS[key] = hashlib.blake2b(digest_size=_MAC_BYTES, key=key, person=b"agentrt-head")
    h = keyed.copy()
    h.update("\0".join(parts).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


@attrs.frozen
class Head:
    """A run's head as stored: ``seq:state:digest:mac`` (state ``r`` going on, ``f`` finished)."""

    seq: int
    finished: bool
    digest: str  # hex digest of checkpoint ``seq``; "" when the run has none
    mac: str

    def text(self) -> str:
        return f"{self.seq}:{'f' if self.finished else 'r'}:{self.digest}:{self.mac}"


def make_head(
    ring: Keyring, store_id: str, run_id: str, seq: int, digest: bytes | str, finished: bool
) -> str:
    """The head text of ``run_id`` whose newest checkpoint is ``seq`` with ``digest``."""
    hexdigest = digest if isinstance(digest, str) else digest.hex()
    state = "f" if finished else "r"
    mac = _mac(ring.write, store_id, run_id, str(seq), state, hexdigest)
    return f"{seq}:{state}:{hexdigest}:{mac}"  # Head.text(), without the object: one per step


def parse_head(text: object) -> Head | None:
    """The head a ``head`` column holds, or None when it holds none or something malformed."""
    if not isinstance(text, str):
        return None
    parts = text.split(":")
    if len(parts) != 4 or parts[1] not in ("r", "f") or not parts[0].isdigit():
        return None
    return Head(int(parts[0]), parts[1] == "f", parts[2], parts[3])


def check_head(ring: Keyring, store_id: str, run_id: str, text: object) -> Head | str:
    """The verified head of ``run_id``, or why it is none (missing, malformed, or not signed here)."""
    if text is None:
        return "the run row has no signed head"
    head = parse_head(text)
    if head is None:
        return "the run row's head is malformed"
    state = "f" if head.finished else "r"
    for key in ring.read:
        if compare_digest(_mac(key, store_id, run_id, str(head.seq), state, head.digest), head.mac):
            return head
    return (
        "the run row's head does not verify with this store's keys (it was edited or copied from "
        "another store, or this process lacks the key that signed it)"
    )


def legacy_marker(ring: Keyring, store_id: str) -> str:
    """The signed note a migration leaves: this store holds blobs sealed for no store."""
    return _mac(ring.write, store_id, "legacy-blobs")


def legacy_marker_valid(ring: Keyring | None, store_id: str, marker: object) -> bool:
    if ring is None or not isinstance(marker, str):
        return False
    return any(compare_digest(_mac(key, store_id, "legacy-blobs"), marker) for key in ring.read)
