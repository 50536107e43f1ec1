"""The envelope: header, digest and key, versions, cloudpickle opt-in, extensions' after_load."""

from __future__ import annotations

import hashlib
import sys
import threading
from typing import Any

import pytest

from agentrt._codec import _format, dumps, loads, read_header
from agentrt.exceptions import CorruptBlob, IncompatibleBlob
from tests.codec import codec_samples as s
from tests.codec.blobtools import resign, split, with_prefix
from tests.codec.codec_fake_ext import FAKE_FRAMES, Callback, FailingAfterLoad, frame_of

# blob keys must be 32 bytes and no pattern (agentrt.keys.key_problem)
SECRET = "secret-2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
OTHER = "other-d9298a10d1b0735837dc4bd85dac641b0f3cef27a47e5d53a54f2f3f5b2fcffa"


def test_layout_and_header() -> None:
    blob = dumps({"fn": s.make_counter(), "data": [1, 2, 3]})
    assert blob[:4] == b"ARTB"
    assert blob[4] == 2 and (blob[5], blob[6]) == sys.version_info[:2]
    header = read_header(blob)
    assert header.format_version == 2 and header.python == "{}.{}".format(*sys.version_info[:2])
    assert header.codec == "agentrt"
    assert [c.qualname for c in header.codes] == ["make_counter.<locals>.inc"]
    assert header.payload_size == len(split(blob)[1])


@pytest.mark.parametrize(
    "codes, bind",
    [
        ((), None),
        ((), ("checkpoint", "r1", 5)),
        ((("m", "f", "ab"),), ("value#0", 'r\u00e9"x', 0)),
        ((("m", "f", "ab"), ("n", "g", "cd")), ("checkpoint", "r", 10**20)),
        ((("m", "f", "ab"),), ("error", "r", None)),
        ((), ("checkpoint", None, True)),
    ],
)
def test_the_cached_header_is_the_json_of_the_code_table_and_binding(codes: Any, bind: Any) -> None:
    # cached without the sequence number of a bound blob, which changes with every checkpoint
    import json

    content: dict[str, Any] = {"codes": [list(c) for c in codes]}
    if bind is not None:
        content["bind"] = list(bind)
    expected = json.dumps(content, separators=(",", ":")).encode()
    for _ in range(2):  # made, then from the cache
        assert _format._header_bytes(codes, bind) == expected
    if bind is not None and type(bind[2]) is int:
        assert _format._header_bytes(codes, (bind[0], bind[1], bind[2] + 1)) == expected.replace(
            b"%d]}" % bind[2], b"%d]}" % (bind[2] + 1)
        )


def test_read_header_does_not_decode_the_payload() -> None:
    blob = dumps(s.make_counter())
    head, _ = split(blob)
    garbage = head + b"\x00" * 32 + b"not a pickle at all"
    header = read_header(garbage)
    assert header.codes == read_header(blob).codes and header.payload_size == len(b"not a pickle at all")


def test_digest_mismatch_is_corrupt() -> None:
    blob = bytearray(dumps([1, 2, 3]))
    blob[-3] ^= 1
    with pytest.raises(CorruptBlob, match="digest mismatch — the blob was truncated or modified"):
        loads(bytes(blob))
    with pytest.raises(CorruptBlob):
        loads(bytes(blob[:-1]))
    with pytest.raises(CorruptBlob, match="too short"):
        loads(b"ARTB")
    with pytest.raises(CorruptBlob, match="not an agentrt blob"):
        loads(b"PK\x03\x04" + bytes(60))


def test_key_authenticates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTRT_BLOB_KEY", SECRET)
    keyed = dumps([s.top_level, 1])
    assert loads(keyed) == [s.top_level, 1]
    monkeypatch.setenv("AGENTRT_BLOB_KEY", OTHER)
    with pytest.raises(CorruptBlob, match="not among this process's keys"):
        loads(keyed)
    monkeypatch.setenv("AGENTRT_BLOB_KEY", f"{OTHER},{SECRET}")  # rotation: the old key still reads
    assert loads(keyed) == [s.top_level, 1]
    monkeypatch.delenv("AGENTRT_BLOB_KEY")
    with pytest.raises(CorruptBlob, match="has no blob key"):
        loads(keyed)
    monkeypatch.setenv(
        "AGENTRT_BLOB_KEY", hashlib.sha512(b"long").hexdigest() * 4
    )  # longer than blake2b's key: hashed first
    assert loads(dumps("x")) == "x"


def test_versions_are_incompatible_not_corrupt(no_key: None) -> None:
    blob = dumps([1])
    with pytest.raises(IncompatibleBlob, match=r"blob format version 9 .* reads format versions 1, 2"):
        loads(with_prefix(blob, version=9))
    other_minor = 10 if sys.version_info[1] != 10 else 9
    with pytest.raises(
        IncompatibleBlob, match=rf"written by Python 3\.{other_minor} and this is Python 3\.\d+"
    ):
        loads(with_prefix(blob, minor=other_minor))
    with pytest.raises(IncompatibleBlob, match="format version 9"):
        read_header(with_prefix(blob, version=9))
    with pytest.raises(IncompatibleBlob, match="flags"):
        loads(resign(blob, flags=0x80))


def test_codes_resolve_before_the_payload(no_key: None) -> None:
    blob = dumps(s.make_counter())
    head, _ = split(blob)
    # A payload that would fail to decode: the code table must fail first.
    forged_head = head.replace(b"make_counter.<locals>.inc", b"make_counter.<locals>.gone")
    forged_head = forged_head[:8] + len(forged_head[12:]).to_bytes(4, "little") + forged_head[12:]
    from tests.codec.blobtools import sign

    with pytest.raises(IncompatibleBlob, match=r"make_counter\.<locals>\.gone no longer exists"):
        loads(sign(forged_head, b"garbage"))


class TestCloudpickle:
    def test_opt_in(self) -> None:
        local_class = type("Local", (), {"x": 1})
        value = {"obj": local_class(), "lock_free": [1, 2], "fn": lambda: 3}
        blob = dumps(value, use_cloudpickle=True)
        assert read_header(blob).codec == "cloudpickle"
        with pytest.raises(IncompatibleBlob, match="allow_cloudpickle=True"):
            loads(blob)
        restored = loads(blob, allow_cloudpickle=True)
        assert restored["obj"].x == 1 and restored["fn"]() == 3

    def test_frames_still_go_through_extensions(self) -> None:
        frame = frame_of(s.agent_fn, {"x": [1, 2]})
        blob = dumps(frame, use_cloudpickle=True)
        assert [c.qualname for c in read_header(blob).codes] == ["agent_fn"]
        restored = loads(blob, allow_cloudpickle=True)
        assert restored.locals == {"x": [1, 2]} and restored.primed

    def test_refusal_in_cloudpickle_mode_names_the_value(self) -> None:
        from agentrt.exceptions import CannotCrossAwait

        with pytest.raises(CannotCrossAwait) as info:
            dumps({"ok": [1], "bad": [threading.Lock()]}, use_cloudpickle=True)
        assert info.value.code == "AR112" and info.value.path == '["bad"][0]'


class TestExtensions:
    def test_frames_round_trip_and_after_load_runs_in_order(self) -> None:
        inner = frame_of(s.make_counter, {"n": 1}, lineno=3)
        outer = frame_of(s.agent_fn, {"awaiting": inner, "shared": inner.locals}, lineno=9)
        FAKE_FRAMES.after_load_order.clear()
        restored = loads(dumps(outer))
        assert restored.primed and restored.locals["awaiting"].primed
        assert restored.locals["shared"] is restored.locals["awaiting"].locals
        assert restored.code is s.agent_fn.__code__ and restored.lineno == 9
        assert FAKE_FRAMES.after_load_order == ["agent_fn", "make_counter"]

    def test_cycle_through_extension_state(self) -> None:
        frame = frame_of(s.agent_fn, {})
        frame.locals["me"] = frame
        restored = loads(dumps(frame))
        assert restored.locals["me"] is restored

    def test_non_inert_extension_objects_need_the_verified_path(self, no_key: None) -> None:
        callback = Callback([1, 2])
        blob = dumps({"cb": callback})
        assert blob[7] & _format.FLAG_REFERENCING
        assert loads(blob)["cb"]() == [1, 2]
        with pytest.raises(CorruptBlob, match="did not declare"):
            loads(resign(blob, flags=0))

    def test_after_load_errors(self) -> None:
        with pytest.raises(IncompatibleBlob, match="resume code cannot be synthesized"):
            loads(dumps(FailingAfterLoad("agentrt")))
        with pytest.raises(CorruptBlob, match="priming failed"):
            loads(dumps(FailingAfterLoad("other")))

    def test_unknown_extension_is_incompatible(self, no_key: None) -> None:
        blob = dumps(frame_of(s.agent_fn, {}))
        _, payload = split(blob)
        forged = payload.replace(b"test.fakeframe", b"test.nosuchext")
        with pytest.raises(IncompatibleBlob, match=r"'test\.nosuchext'"):
            loads(resign(blob, forged))


def test_dumps_of_a_machine_style_root_is_deterministic() -> None:
    value: dict[str, Any] = {"a": [1, 2], "b": {"c": (3, 4)}}
    assert dumps(value) == dumps(value)
