"""The encoder's preset memo and the payload preamble that defines it (``agentrt._codec._preset``)."""

from __future__ import annotations

import dataclasses
import datetime
import io
import pickle
import pickletools

import pytest

from agentrt import _codec
from agentrt._codec import _format, _preset, _wire
from tests.codec import codec_samples as samples
from tests.codec.blobtools import split

KEY = b"preset-test-key-" + bytes(range(32))


@dataclasses.dataclass
class Point:
    x: int
    y: float


def _payload(value: object, key: bytes = KEY) -> bytes:
    return split(_codec.dumps(value, key=key))[1]


def _preamble_ops(payload: bytes) -> list[tuple[str, object]]:
    """The opcodes before the preamble's last memo write (index SIZE - 1), with their arguments."""
    ops: list[tuple[str, object]] = []
    memoized = 0
    for op, arg, _ in pickletools.genops(payload):
        ops.append((op.name, arg))
        memoized += op.name == "MEMOIZE"
        if memoized == _preset.SIZE:
            return ops
    raise AssertionError("the payload memoizes fewer entries than the preset")


def _globals_named(ops: list[tuple[str, object]]) -> list[str]:
    strings = [str(arg) for name, arg in ops if name == "SHORT_BINUNICODE"]
    return [name for name in strings if name != _wire.WIRE_MODULE]


class _OldReader(pickle.Unpickler):
    """A reader that knows nothing of the preset: a stock unpickler, wire names as stand-ins."""

    def find_class(self, module: str, name: str) -> object:
        assert module == _wire.WIRE_MODULE and name in _wire.ALL_NAMES
        return lambda *args: (name, args)


def test_a_plain_value_fills_the_preset_with_none_and_names_nothing() -> None:
    payload = _payload({"a": [1, 2], "b": "text"})
    ops = _preamble_ops(payload)
    assert [name for name, _ in ops] == ["PROTO", "FRAME", "NONE", *["MEMOIZE"] * _preset.SIZE]
    assert pickle.loads(payload) == {"a": [1, 2], "b": "text"}  # a stock pickle, no global


def test_the_preamble_names_exactly_the_table_names_the_pickle_reads() -> None:
    # an unmarked dataclass in a signed blob: its pickle reduction (``call``, outside the table), its
    # class by name and its state
    ops = _preamble_ops(_payload(Point(1, 2.5)))
    assert set(_globals_named(ops)) == {"state", "ref"}
    ops = _preamble_ops(_payload(samples.Point(1, 2)))  # an @agentrt.serializable one: ``obj``
    assert set(_globals_named(ops)) == {"obj", "state", "ref"}
    # a datetime's reconstructor is not in the table: the pickler writes it as before, inside the pickle
    ops = _preamble_ops(_payload([datetime.date(2026, 12, 2)]))
    assert ops[2:] == [("NONE", None), *[("MEMOIZE", None)] * _preset.SIZE]


def test_the_referencing_flag_follows_the_names_read() -> None:
    def flags(value: object) -> int:
        return _codec.dumps(value, key=KEY)[7]

    assert flags(samples.Point(1, 2)) & _format.FLAG_REFERENCING  # obj, ref: table names
    assert not flags([datetime.date(2026, 12, 2), ...]) & _format.FLAG_REFERENCING  # date, const


@pytest.mark.parametrize(
    "value",
    [None, 7, "x" * 100_000, ["y" * 100_000, "z"], [Point(1, 0.5)] * 2],
    ids=["tiny, unframed", "int", "a string too big for a frame", "a frame after a big string", "shared"],
)
def test_pickles_with_and_without_a_first_frame_read_back(value: object) -> None:
    blob = _codec.dumps(value, key=KEY)
    payload = split(blob)[1]
    assert payload[2] == 0x95  # the preamble is always inside a frame
    assert _codec.loads(blob, keys=(KEY,)) == value


def test_identity_survives_the_shifted_memo() -> None:
    point = Point(3, 0.25)
    shared = [1, 2]
    restored = _codec.loads(_codec.dumps([point, point, shared, shared], key=KEY), keys=(KEY,))
    assert restored[0] is restored[1] and restored[2] is restored[3]
    assert restored == [point, point, shared, shared]


def test_a_reader_that_knows_nothing_of_the_preset_reads_the_payload() -> None:
    payload = _payload([Point(1, 2.5), datetime.date(2026, 12, 2)])
    loaded: list[tuple[str, tuple[object, ...]]] = _OldReader(io.BytesIO(payload)).load()
    names = [name for name, _ in loaded]
    assert names == ["call", "date"]


def test_unsigned_blobs_read_in_strict_mode_and_through_the_dry_run() -> None:
    plain = _codec.dumps([datetime.date(2026, 12, 2)], key=b"")
    assert _codec.loads(plain, keys=()) == [datetime.date(2026, 12, 2)]
    marked = samples.Point(1, 2)  # an @agentrt.serializable class: unsigned blobs hold it
    referencing = _codec.dumps(marked, key=b"")
    assert referencing[7] & _format.FLAG_REFERENCING
    assert _codec.loads(referencing, keys=(), allow_modules=(samples.__name__,)) == marked
