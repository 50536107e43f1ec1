"""The decode bounds of unsigned blobs (docs/blob-format.md §4 step 5b), measured.

Peak memory is measured with tracemalloc around ``loads`` -- the bounds walk and the
unpickling together -- and must stay within the stated bound, 16 MiB + 20 x the
blob's size, both for hostile payloads (refused) and for large genuine ones
(accepted).  CPU time is stated in the docs (about a microsecond per opcode) but
not asserted here: CI machines are too noisy for a time bound.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import pytest

from agentrt._codec import _bounds, _format, dumps, loads
from agentrt.exceptions import CorruptBlob
from tests.codec.blobtools import split


def _unsigned(payload: bytes) -> bytes:
    head, _ = split(dumps([1], key=b""))
    return head + _format._digest(head, payload, b"") + payload


def _peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
    except CorruptBlob:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


HOSTILE = {
    "empty sets": b"\x80\x05](" + b"\x8f" * 400_000 + b"e.",
    "empty lists on the stack": b"\x80\x05(" + b"]" * 400_000 + b"t.",
    "nested tuples": b"\x80\x05(" + b")" + b"\x85" * 300_000 + b"\x91.",
    "shared tuples": b"\x80\x05()\x94"
    + b"".join(b"h" + bytes([i]) + b"h" + bytes([i]) + b"\x86\x94" for i in range(100))
    + b"\x91.",
}
#: within the bounds: accepted, and still within the memory bound
BENIGN = {
    "memo references": b"\x80\x05](]\x94" + b"h\x00" * 400_000 + b"e.",
    "ints": b"\x80\x05](" + b"K\x01" * 400_000 + b"e.",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_payloads_are_refused_within_the_memory_bound(name: str, no_key: None) -> None:
    blob = _unsigned(HOSTILE[name])
    with pytest.raises(CorruptBlob, match="decode bound"):
        loads(blob)
    assert _peak(lambda: loads(blob)) <= _bounds.memory_limit(len(blob))


@pytest.mark.parametrize("name", sorted(BENIGN))
def test_payloads_within_the_bounds_load_within_the_memory_bound(name: str, no_key: None) -> None:
    blob = _unsigned(BENIGN[name])
    assert isinstance(loads(blob), list)
    assert _peak(lambda: loads(blob)) <= _bounds.memory_limit(len(blob))


@pytest.mark.slow
def test_large_genuine_blobs_load_within_the_bounds(no_key: None) -> None:
    shared = {"config": list(range(50))}
    values = [
        [{"id": i, "name": f"record {i}", "tags": ["a", "b"], "shared": shared} for i in range(20_000)],
        "x" * 3_000_000,
        {(i, str(i)): frozenset({i, -i}) for i in range(20_000)},
    ]
    nested: list[object] = []
    for _ in range(400):  # the pickler itself stops near the recursion limit
        nested = [nested]
    values.append(nested)
    for value in values:
        blob = dumps(value, key=b"")
        assert loads(blob) == value
        assert _peak(lambda blob=blob: loads(blob)) <= _bounds.memory_limit(len(blob))


def test_nesting_over_the_bound_is_refused_and_the_bound_is_stated(no_key: None) -> None:
    depth = _bounds.MAX_DEPTH + 10  # lists inside lists, written by hand: the pickler stops at ~1000
    blob = _unsigned(b"\x80\x05" + b"]" * depth + b"a" * (depth - 1) + b".")
    with pytest.raises(CorruptBlob, match=f"more than {_bounds.MAX_DEPTH} deep"):
        loads(blob)
    ok = _bounds.MAX_DEPTH - 10
    assert isinstance(loads(_unsigned(b"\x80\x05" + b"]" * ok + b"a" * (ok - 1) + b".")), list)


def test_messages_never_build_the_repr_of_blob_data() -> None:
    shared: list[object] = []
    for _ in range(60):
        shared = [shared, shared]  # repr would be 2**60 characters long
    assert _bounds.short(shared) == "<list>"
    assert _bounds.short("x" * 10**6, 10) == repr("x" * 10) + "..."
    assert len(_bounds.describe_error(KeyError(shared))) < 250
