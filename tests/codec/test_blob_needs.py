"""Blob-format honesty (issue 24): a blob that names a reconstructor added after format 2 (``call``,
``reopen``: signed blobs only) says so in its header (``needs``, flag bit 4), so a reader that does not
know one answers IncompatibleBlob ("written by a newer agentrt: upgrade") before it decodes anything,
never CorruptBlob.  Older readers are played with ``unpack(..., reader=Reader(...))``."""

from __future__ import annotations

import dataclasses
import json

import httpx
import pytest

from agentrt._codec import _format, dumps, loads, read_header
from agentrt._codec._format import FLAG_NEEDS, Reader, unpack
from agentrt.exceptions import CorruptBlob, IncompatibleBlob
from tests.codec.blobtools import split

KEY = b"n" * 32

#: the release before ``needs``: formats 1 and 2, flag bits 0-2, no feature names
BEFORE_NEEDS = Reader(versions=(1, 2), flags=0b111, needs=frozenset())


@dataclasses.dataclass
class Order:
    item: str
    qty: int


def header_json(blob: bytes) -> dict[str, object]:
    head, _ = split(blob)
    parsed: dict[str, object] = json.loads(head[_format.PREFIX_SIZE_BYTES :])
    return parsed


def test_plain_data_announces_nothing() -> None:
    for key in (b"", KEY):
        blob = dumps({"a": [1, 2.5, "x"]}, key=key)
        assert not blob[7] & FLAG_NEEDS
        assert header_json(blob) == {"codes": []}
        assert read_header(blob).needs == ()


def test_the_pickle_protocol_is_announced_and_read() -> None:
    blob = dumps([Order("bolt", 3), Order("nut", 1)], key=KEY, bind=("checkpoint", "r1", 7))
    assert blob[7] & FLAG_NEEDS
    assert header_json(blob) == {"codes": [], "needs": ["call"], "bind": ["checkpoint", "r1", 7]}
    assert read_header(blob).needs == ("call",)
    assert loads(blob, keys=[KEY]) == [Order("bolt", 3), Order("nut", 1)]


def test_a_reopened_client_is_announced() -> None:
    client = httpx.Client(base_url="https://api.example.test")
    try:
        blob = dumps({"client": client, "order": Order("x", 1)}, key=KEY)
    finally:
        client.close()
    assert read_header(blob).needs == ("call", "reopen")
    back = loads(blob, keys=[KEY])
    try:
        assert str(back["client"].base_url) == "https://api.example.test"
    finally:
        back["client"].close()


def test_a_reader_from_before_needs_says_incompatible() -> None:
    blob = dumps(Order("bolt", 3), key=KEY)
    with pytest.raises(IncompatibleBlob, match=r"header flags 0x16 .* newer agentrt: upgrade agentrt"):
        unpack(blob, [KEY], reader=BEFORE_NEEDS)
    assert unpack(dumps([1, 2], key=KEY), [KEY], reader=BEFORE_NEEDS).payload  # plain data: still read


def test_a_reader_without_a_feature_names_it() -> None:
    blob = dumps(Order("bolt", 3), key=KEY)
    knows_reopen_only = Reader(needs=frozenset({"reopen"}))
    with pytest.raises(
        IncompatibleBlob, match=r"blob needs 'call', which this agentrt does not know .*upgrade"
    ):
        unpack(blob, [KEY], reader=knows_reopen_only)


def test_a_feature_from_a_newer_agentrt_is_incompatible_not_corrupt() -> None:
    future = _format.pack((), 0, split(dumps([1], key=KEY))[1], KEY, needs=("teleport",))
    with pytest.raises(IncompatibleBlob, match=r"blob needs 'teleport'.*written by a newer agentrt"):
        loads(future, keys=[KEY])


def test_a_malformed_list_of_needs_is_corrupt() -> None:
    bad = _format.pack((), 0, split(dumps([1], key=KEY))[1], KEY, needs=(1,))  # type: ignore[arg-type]  # forged
    with pytest.raises(CorruptBlob, match="malformed list of needs"):
        loads(bad, keys=[KEY])


def test_the_cached_header_keeps_needs_apart() -> None:
    codes = (("m", "f", "ab"),)
    with_needs = _format._header_bytes(codes, ("checkpoint", "r", 3), ("call",))
    without = _format._header_bytes(codes, ("checkpoint", "r", 3))
    assert json.loads(with_needs) == {
        "codes": [["m", "f", "ab"]],
        "needs": ["call"],
        "bind": ["checkpoint", "r", 3],
    }
    assert json.loads(without) == {"codes": [["m", "f", "ab"]], "bind": ["checkpoint", "r", 3]}
