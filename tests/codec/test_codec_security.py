"""Tampered blobs: only CorruptBlob / IncompatibleBlob come out, and nothing is executed."""

from __future__ import annotations

import contextlib
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrt._codec import _format, dumps, loads
from agentrt._codec._decode import Requirement
from agentrt.exceptions import CorruptBlob, IncompatibleBlob
from tests.codec import codec_samples as s
from tests.codec.blobtools import resign, split
from tests.codec.codec_fake_ext import Callback, frame_of

WIRE = "agentrt._codec._wire"

# --- hand-written pickle opcodes --------------------------------------------------------


def text(value: str) -> bytes:
    raw = value.encode()
    return b"\x8c" + bytes([len(raw)]) + raw  # SHORT_BINUNICODE


def wire(name: str) -> bytes:
    return text(WIRE) + text(name) + b"\x93"  # STACK_GLOBAL


def program(body: bytes) -> bytes:
    return b"\x80\x05" + body + b"."  # PROTO 5 ... STOP


TUPLE1, TUPLE2, TUPLE3, REDUCE, BUILD, NONE, EMPTY_DICT = b"\x85", b"\x86", b"\x87", b"R", b"b", b"N", b"}"


def forge(payload: bytes, *, referencing: bool) -> bytes:
    template = dumps([s.top_level] if referencing else [1])
    flags = _format.FLAG_REFERENCING if referencing else 0
    return resign(template, payload, flags=flags)


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "pwned"


def test_global_naming_os_system_is_refused(marker: Path, no_key: None) -> None:
    command = f"touch {marker}"
    classic = b"\x80\x02cos\nsystem\n(X" + len(command).to_bytes(4, "little") + command.encode() + b"tR."
    stack_global = program(text("os") + text("system") + b"\x93" + text(command) + TUPLE1 + REDUCE)
    for referencing in (False, True):
        with pytest.raises(CorruptBlob, match="protocol 5"):
            loads(forge(classic, referencing=referencing))
        with pytest.raises(CorruptBlob, match=r"'os'\.'system', which is not an agentrt reconstructor"):
            loads(forge(stack_global, referencing=referencing))
    assert not marker.exists()


def test_find_class_guards_signed_blobs(marker: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A key holder's blob skips the opcode scan (its author may name ``call`` anyway) but still
    # goes through find_class: GLOBAL and STACK_GLOBAL both ask it.
    monkeypatch.setenv(
        "AGENTRT_BLOB_KEY",
        "a-key-the-forger-somehow-has-8b2d300621c0e4c5fd6811d1d6a8f76a3e532506251180375dea4e413b700f3f",
    )
    command = f"touch {marker}"
    classic = b"\x80\x02cos\nsystem\n(X" + len(command).to_bytes(4, "little") + command.encode() + b"tR."
    with pytest.raises(CorruptBlob, match="not an agentrt reconstructor"):
        loads(forge(classic, referencing=False))
    stack_global = program(text("os") + text("system") + b"\x93" + text(command) + TUPLE1 + REDUCE)
    with pytest.raises(CorruptBlob, match="not an agentrt reconstructor"):
        loads(forge(stack_global, referencing=False))
    assert not marker.exists()


def _call_referenced_system(marker: Path) -> bytes:
    system = wire("ref") + text("os") + text("system") + text("builtin") + TUPLE3 + REDUCE
    return program(system + text(f"touch {marker}") + TUPLE1 + REDUCE)


def test_reduce_of_a_referenced_builtin_is_caught_by_the_dry_run(marker: Path, no_key: None) -> None:
    # The decode-bounds walk refuses a call of anything but a reconstructor first; the dry run
    # (and find_class) would refuse it too.
    payload = _call_referenced_system(marker)
    with pytest.raises(CorruptBlob, match=r"not callable|not an agentrt reconstructor with a tuple"):
        loads(forge(payload, referencing=True))
    with pytest.raises(
        CorruptBlob, match=r"does not declare referencing|not an agentrt reconstructor with a tuple"
    ):
        loads(forge(payload, referencing=False))
    assert not marker.exists()


def test_build_on_a_referenced_class_cannot_patch_it(no_key: None) -> None:
    cls = wire("ref") + text("tests.codec.codec_samples") + text("Point") + text("class") + TUPLE3 + REDUCE
    state = NONE + EMPTY_DICT + text("norm1") + NONE + b"s" + TUPLE2  # (None, {"norm1": None})
    with pytest.raises(CorruptBlob):
        loads(forge(program(cls + state + BUILD), referencing=True))
    assert callable(s.Point.norm1)


def test_state_cannot_modify_referenced_functions(no_key: None) -> None:
    fn = (
        wire("ref")
        + text("tests.codec.codec_samples")
        + text("top_level")
        + text("function")
        + TUPLE3
        + REDUCE
    )
    state = wire("state") + fn + NONE + TUPLE2 + REDUCE
    before = s.top_level.__defaults__
    with pytest.raises(CorruptBlob, match="did not create"):
        loads(forge(program(state), referencing=True))
    assert s.top_level.__defaults__ == before


def test_builtin_method_reconstructor_only_binds_c_methods(no_key: None) -> None:
    cls = wire("ref") + text("tests.codec.codec_samples") + text("Point") + text("class") + TUPLE3 + REDUCE
    bmethod = wire("bmethod") + cls + text("__subclasses__") + TUPLE2 + REDUCE
    with pytest.raises(CorruptBlob, match="not a builtin classmethod"):
        loads(forge(program(bmethod), referencing=True))


def test_keyed_blobs_cannot_be_forged(monkeypatch: pytest.MonkeyPatch, marker: Path) -> None:
    forged = forge(_call_referenced_system(marker), referencing=True)  # signed without the key
    monkeypatch.setenv(
        "AGENTRT_BLOB_KEY",
        "production-secret-679206e5dcc8b0f8edbbee057ceb776f7199e28034a972617db7ac499936a07f",
    )
    with pytest.raises(CorruptBlob, match="is not signed"):
        loads(forged, require=Requirement(signed=True, kind="checkpoint"))
    signed = forged[:7] + bytes([forged[7] | _format.FLAG_SIGNED]) + forged[8:]  # claims a signature
    with pytest.raises(CorruptBlob, match="digest mismatch"):
        loads(signed)
    assert not marker.exists()


# --- fuzzing ------------------------------------------------------------------------------


def _sample_values() -> list[Any]:
    import collections
    import datetime
    import decimal
    import re
    import uuid

    lst = [1, 2, 3]
    it = iter(lst)
    next(it)
    node = s.Node("x")
    node.next = node
    try:
        raise s.RichError("boom", 7) from KeyError("k")
    except s.RichError as exc:
        error = exc
    return [
        [None, True, 1, 2.5, "text", b"bytes", (1, 2), {"a": [1, {2}]}, frozenset({3})],
        {
            "when": datetime.datetime(2024, 5, 1, tzinfo=datetime.UTC),
            "d": decimal.Decimal("1.5"),
            "u": uuid.UUID(int=5),
            "r": range(3),
            "p": re.compile("a+"),
            "c": 1j,
            "td": datetime.timedelta(3),
        },
        [lst, it, enumerate("abc"), zip([1], [2], strict=True), iter({"k": 1}), reversed((1, 2))],
        [s.make_counter(), s.make_pair(), s.LAMBDA, s.top_level, s.Point(1, 2), node, s.Color.RED],
        [error, s.WithState(3), s.FrozenSlotsDC(1, "b"), collections.deque([1]), collections.Counter("ab")],
        frame_of(s.agent_fn, {"x": [1, 2], "cb": Callback("v")}),
    ]


BLOBS = [dumps(value) for value in _sample_values()]
ALLOWED = (CorruptBlob, IncompatibleBlob)


def _check(blob: bytes) -> None:
    """Loading may succeed (a mutation can leave a valid blob) or fail -- but only with a blob error."""
    with contextlib.suppress(ALLOWED):
        loads(blob)


def _mutate_payload(rng: random.Random, payload: bytes) -> bytes:
    data = bytearray(payload)
    choice = rng.randrange(6)
    if choice == 0 and data:  # flip bytes
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif choice == 1:  # truncate
        del data[rng.randrange(len(data) + 1) :]
    elif choice == 2:  # extend
        data += rng.randbytes(rng.randint(1, 16))
    elif choice == 3 and data:  # insert
        at = rng.randrange(len(data))
        data[at:at] = rng.randbytes(rng.randint(1, 8))
    elif choice == 4 and data:  # delete a chunk
        at = rng.randrange(len(data))
        del data[at : at + rng.randint(1, 8)]
    else:  # splice in a chunk of another blob's payload
        other = split(rng.choice(BLOBS))[1]
        at, start = rng.randrange(len(data) + 1), rng.randrange(len(other))
        data[at:at] = other[start : start + rng.randint(1, 32)]
    return bytes(data)


def _one_fuzz_case(rng: random.Random) -> bytes:
    blob = rng.choice(BLOBS)
    mode = rng.randrange(4)
    if mode == 0:  # raw: the digest breaks
        raw = bytearray(blob)
        raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
        return bytes(raw[: rng.randrange(len(raw) + 1)]) if rng.random() < 0.3 else bytes(raw)
    payload = _mutate_payload(rng, split(blob)[1])
    if mode == 1:
        return resign(blob, payload)  # the unpickler sees garbage
    flags = rng.choice([0, _format.FLAG_REFERENCING])
    return resign(blob, payload, flags=flags)  # ... with the dry run on or off


@pytest.mark.usefixtures("no_key")
def test_seeded_fuzz_loop() -> None:
    rng = random.Random(20240501)
    for _ in range(300):  # a fixed count, not "as many as fit in 3 s": the same cases on any machine
        _check(_one_fuzz_case(rng))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.randoms(use_true_random=False))
def test_hypothesis_fuzz(no_key: None, rng: random.Random) -> None:
    _check(_one_fuzz_case(rng))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob_index=st.integers(0, len(BLOBS) - 1), cut=st.integers(0, 10_000), extra=st.binary(max_size=32))
def test_hypothesis_truncate_and_extend(no_key: None, blob_index: int, cut: int, extra: bytes) -> None:
    blob = BLOBS[blob_index]
    payload = split(blob)[1]
    _check(blob[: cut % (len(blob) + 1)])
    _check(blob + extra)
    _check(resign(blob, payload[: cut % (len(payload) + 1)] + extra))


def test_header_garbage(no_key: None) -> None:
    blob = BLOBS[3]
    head, payload = split(blob)
    from tests.codec.blobtools import sign

    for header in (
        b"[]",
        b"{}",
        b'{"codes": 3}',
        b'{"codes": [[1, 2, 3]]}',
        b"\xff\xfe",
        b'{"codes": [["a"]]}',
        b'{"codes": [["tests.codec.codec_samples", "make_counter.<locals>.inc", "zz"]]}',
    ):
        raw = head[:8] + len(header).to_bytes(4, "little") + header
        with pytest.raises(ALLOWED):
            loads(sign(raw, payload))


def test_real_blobs_use_only_the_allowlisted_opcodes() -> None:
    import pickletools

    for blob in BLOBS:
        ops = [(op.name, arg) for op, arg, _ in pickletools.genops(split(blob)[1])]
        names = {name for name, _ in ops}
        assert not names & {
            "GLOBAL",
            "INST",
            "OBJ",
            "NEWOBJ",
            "NEWOBJ_EX",
            "BUILD",
            "EXT1",
            "EXT2",
            "EXT4",
            "PUT",
            "BINPUT",
            "LONG_BINPUT",
            "PERSID",
            "BINPERSID",
        }
        strings = [arg for name, arg in ops if name == "SHORT_BINUNICODE"]
        # one module name, memoized: in the preamble of the names the pickler starts with (_preset),
        # and once more if the pickle names a reconstructor outside that table
        assert strings.count(WIRE) <= 2


@pytest.mark.usefixtures("no_key")
def test_huge_memo_index_is_refused_before_allocating() -> None:
    payload = program(b"]" + b"r" + (2**31).to_bytes(4, "little"))  # EMPTY_LIST LONG_BINPUT 2**31
    tracemalloc.start()
    try:
        with pytest.raises(CorruptBlob, match="LONG_BINPUT"):
            loads(forge(payload, referencing=False))
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The C unpickler would allocate and zero 2**31 memo slots (16 GiB) for those five bytes.
    assert peak < 64 * 2**20


@pytest.mark.usefixtures("no_key")
@pytest.mark.parametrize("opcode", [b"b", b"\x81", b"o", b"c", b"i", b"\x82", b"P", b"Q", b"p"])
def test_opcodes_agentrt_never_writes_are_refused(opcode: bytes) -> None:
    with pytest.raises(CorruptBlob, match="which agentrt never writes"):
        loads(forge(program(b"N" + opcode), referencing=True))
