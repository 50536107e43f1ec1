"""The lean path for plain journal values: the codec's own blob, read with no global allowed."""

from __future__ import annotations

import collections
import pickle

import pytest

from agentrt import _codec
from agentrt._codec._decode import Requirement
from agentrt._codec._plain import NOT_PLAIN, dumps_plain, dumps_plain_with_copy, is_plain, loads_plain
from agentrt.exceptions import CorruptBlob
from tests.codec.blobtools import split

KEY = b"k" * 32
BIND = ("value#0", "run", 3)
REQUIRE = Requirement(signed=True, kind="value#0", run_id="run", seq=3)
PLAIN = [
    None,
    True,
    -(2**70),
    1.5,
    "héllo",
    b"\x00raw",
    {"i": 1, "ok": True, "nested": [1, (2, 3), {"k": None}]},
    [],
    (),
    {1: "int keys", (1, 2): "tuple keys"},
]


@pytest.mark.parametrize("value", PLAIN, ids=repr)
def test_plain_values_make_a_blob_both_readers_read_as_the_codecs_own(value):
    lean = dumps_plain(value, KEY, BIND)
    assert lean is not None
    codec = _codec.dumps(value, key=KEY, bind=BIND)  # the same pickle after the codec's preamble (_preset)
    pickled = pickle.dumps(value, 5)
    assert lean[:7] == codec[:7] and split(lean)[1] == pickled
    body = pickled[11:] if pickled[2] == 0x95 else pickled[2:]  # after PROTO and the first FRAME header
    assert split(codec)[1].endswith(body) and len(split(codec)[1]) > len(pickled)
    for blob in (lean, codec):
        assert loads_plain(blob, (KEY,), "test", REQUIRE) == value
        assert _codec.loads(blob, keys=(KEY,), require=REQUIRE) == value


def test_what_is_not_plain_takes_the_codec():
    ordered = collections.OrderedDict(a=1)
    assert not is_plain(ordered) and not is_plain([{1}]) and not is_plain(object())
    deep: list[object] = []
    for _ in range(40):
        deep = [deep]
    assert not is_plain(deep)  # too deep to check here: the codec handles it
    cycle: list[object] = []
    cycle.append(cycle)
    assert not is_plain(cycle)
    assert dumps_plain(ordered, KEY, BIND) is None
    assert dumps_plain({"a": 1}, b"", BIND) is None  # unsigned: the codec writes it
    codec_blob = _codec.dumps(ordered, key=KEY, bind=BIND)
    assert loads_plain(codec_blob, (KEY,), "test", REQUIRE) is NOT_PLAIN


def test_the_lean_reader_checks_what_the_codec_checks():
    blob = dumps_plain({"a": 1}, KEY, BIND)
    assert blob is not None
    tampered = blob[:-3] + bytes([blob[-3] ^ 1]) + blob[-2:]
    with pytest.raises(CorruptBlob, match="digest mismatch"):
        loads_plain(tampered, (KEY,), "test", REQUIRE)
    with pytest.raises(CorruptBlob, match="digest mismatch"):
        loads_plain(blob, (b"other" * 8,), "test", REQUIRE)
    elsewhere = Requirement(signed=True, kind="value#0", run_id="run", seq=4)
    with pytest.raises(CorruptBlob, match="replayed or moved"):
        loads_plain(blob, (KEY,), "test", elsewhere)
    unsigned = _codec.dumps({"a": 1}, key=b"")
    loose = Requirement(signed=False, kind="value#0")
    assert loads_plain(unsigned, (KEY,), "test", loose) is NOT_PLAIN  # the codec's bounds walk reads it


def test_the_copy_is_what_loading_the_blob_gives_not_the_object_itself():
    value = {"rows": [[1, 2], [3]], "name": "x"}
    made = dumps_plain_with_copy(value, KEY, BIND)
    assert made is not None
    blob, copy = made
    assert copy == loads_plain(blob, (KEY,), "test", REQUIRE) == value
    assert copy is not value and copy["rows"] is not value["rows"]
    assert dumps_plain_with_copy(collections.OrderedDict(a=1), KEY, BIND) is None
