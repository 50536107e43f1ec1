"""Decode bound on hash collisions: keys planned to share one hash are refused before anything is built.

Int, float and tuple hashes are not randomized, so ``k * (2**61 - 1) + 7`` for
k = 0, 1, 2 ... all hash alike, and every insert into a set or dict compares with
every earlier key: a few hundred kilobytes of them take seconds to decode.  Each
payload below is written by hand (as an attacker would) and must be refused with
``CorruptBlob``; ordinary data with a few equal hashes still decodes.
"""

from __future__ import annotations

import pytest

from agentrt._codec import dumps, loads
from agentrt._codec._bounds import MAX_SHARED_HASH
from agentrt.exceptions import CorruptBlob
from tests.security.attacks import resign_payload

P = 2**61 - 1  # hash(n) == hash(n + P) for ints
N = 3000


def _long1(n: int) -> bytes:
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


def _colliding(count: int) -> list[bytes]:
    return [_long1(k * P + 7) for k in range(count)]


def _wire(name: str) -> bytes:
    return b"\x8c\x14agentrt._codec._wire\x8c" + bytes([len(name)]) + name.encode() + b"\x93"


def _payloads(count: int) -> dict[str, bytes]:
    ints = _colliding(count)
    return {
        "frozenset": b"(" + b"".join(ints) + b"\x91",
        "set": b"\x8f(" + b"".join(ints) + b"\x90",
        "dict keys": b"}(" + b"".join(i + b"N" for i in ints) + b"u",
        # tuples of colliding ints collide too: tuple hashes combine the items' hashes
        "tuple keys": b"}(" + b"".join(i + b"K\x00\x86N" for i in ints) + b"u",
        # a reconstructor that makes a set of a list (a set iterator's remaining items)
        "setiter list": _wire("setiter") + b"](" + b"".join(ints) + b"e\x85R",
    }


def _blob(body: bytes) -> bytes:
    return resign_payload(dumps([1], key=b""), b"\x80\x05" + body + b".")


@pytest.mark.parametrize("shape", sorted(_payloads(1)))
def test_colliding_keys_are_refused(shape: str) -> None:
    with pytest.raises(CorruptBlob, match="share one hash value"):
        loads(_blob(_payloads(N)[shape]))


@pytest.mark.parametrize("shape", sorted(_payloads(1)))
def test_a_few_equal_hashes_still_decode(shape: str) -> None:
    loads(_blob(_payloads(MAX_SHARED_HASH)[shape]))


def test_ordinary_values_with_equal_hashes_decode() -> None:
    value = {-1: "a", -2: "b", 1: "c", 1.5: "d", (1, 2): "e", frozenset({-1, -2}): "f"}
    assert loads(dumps(value, key=b"")) == value
    many = {(i % 7, -1 if i % 2 else -2): i for i in range(2000)}
    assert loads(dumps(many, key=b"")) == many
