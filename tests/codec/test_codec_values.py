"""Round trips of the value set (api.md §2), identity, sharing and cycles."""

from __future__ import annotations

import collections
import datetime
import decimal
import math
import re
import uuid
from typing import Any

import pytest

from tests.codec import codec_samples as s
from tests.codec.helpers import roundtrip

UTC = datetime.UTC
PLUS2 = datetime.timezone(datetime.timedelta(hours=2), "CEST")

SIMPLE_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    2**100,
    -(2**70),
    1.5,
    math.inf,
    -math.inf,
    "",
    "héllo \u20ac \U0001f600",
    "\ud800",
    b"",
    b"\x00\xff",
    bytearray(b"ab"),
    [],
    [1, [2, [3]]],
    (),
    (1,),
    (1, (2, 3)),
    {},
    {"a": 1, 2: [3]},
    set(),
    {1, "a", (2, 3)},
    frozenset(),
    frozenset({1, 2}),
    1 + 2j,
    complex(-0.0, math.inf),
    datetime.date(2024, 2, 29),
    datetime.time(12, 30, 1, 5),
    datetime.time(1, 2, tzinfo=UTC),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 6),
    datetime.datetime(2024, 1, 2, tzinfo=UTC),
    datetime.datetime(2024, 1, 2, tzinfo=PLUS2),
    datetime.datetime(2021, 11, 7, 1, 30, fold=1),
    datetime.timedelta(days=-3, seconds=5, microseconds=7),
    UTC,
    PLUS2,
    decimal.Decimal("3.14159"),
    decimal.Decimal("-0"),
    decimal.Decimal("Infinity"),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    range(3),
    range(10, -5, -3),
    range(2**80),
    slice(1, None, 2),
    slice("a", [1]),
    ...,
    NotImplemented,
    collections.OrderedDict([("b", 1), ("a", 2)]),
    collections.Counter("hello"),
    collections.deque([1, 2, 3], maxlen=3),
    collections.deque(),
]


@pytest.mark.parametrize("value", SIMPLE_VALUES, ids=lambda v: type(v).__name__)
def test_simple_values_round_trip(value: Any) -> None:
    restored = roundtrip(value)
    assert type(restored) is type(value)
    assert restored == value or repr(restored) == repr(value)


def test_float_specials() -> None:
    nan, negzero = roundtrip([math.nan, -0.0])
    assert math.isnan(nan)
    assert math.copysign(1.0, negzero) == -1.0


def test_datetime_fold_and_tz_kept() -> None:
    value = datetime.datetime(2021, 11, 7, 1, 30, fold=1, tzinfo=PLUS2)
    restored = roundtrip(value)
    assert restored.fold == 1 and restored.tzinfo == PLUS2 and restored.tzname() == "CEST"
    assert roundtrip(UTC) is UTC


def test_decimal_nan() -> None:
    assert roundtrip(decimal.Decimal("NaN")).is_nan()


def test_pattern_rebuilt_from_pattern_and_flags() -> None:
    pattern = re.compile(r"(?P<word>\w+)-\d+", re.IGNORECASE | re.MULTILINE)
    restored = roundtrip(pattern)
    assert restored.pattern == pattern.pattern and restored.flags == pattern.flags
    assert restored.match("Abc-12").group("word") == "Abc"
    assert roundtrip(re.compile(rb"\x00+")).match(b"\x00\x00")


def test_defaultdict_keeps_factory_and_items() -> None:
    value = collections.defaultdict(list, {"a": [1]})
    restored = roundtrip(value)
    assert restored == value and restored.default_factory is list
    restored["new"].append(2)


def test_shared_references_stay_shared() -> None:
    shared = [1, 2]
    d = {"k": shared}
    value = {"a": shared, "b": shared, "t": (shared, d), "d": d}
    restored = roundtrip(value)
    assert restored["a"] is restored["b"] is restored["t"][0] is restored["d"]["k"]
    assert restored["t"][1] is restored["d"]


def test_cycles_through_lists_dicts_and_instances() -> None:
    lst: list[Any] = [1]
    lst.append(lst)
    d: dict[str, Any] = {}
    d["self"] = d
    node = s.Node(1)
    node.next = node
    bag = s.Bag(x=1)
    bag["me"] = bag
    tup_holder: list[Any] = []
    tup = (tup_holder,)
    tup_holder.append(tup)
    restored = roundtrip([lst, d, node, bag, tup])
    r_lst, r_d, r_node, r_bag, r_tup = restored
    assert r_lst[1] is r_lst and r_d["self"] is r_d and r_node.next is r_node and r_bag["me"] is r_bag
    assert r_tup[0][0] is r_tup


def test_serializable_instances() -> None:
    values = [
        s.Point(1, 2, ["a"]),
        s.FrozenPoint(3, 4),
        s.SlottedBelow([1]),
        s.DictAttrs(1, {"b": 2}),
        s.DC("n", [1, 2]),
        s.FrozenSlotsDC(1, "b"),
        s.SlotsDC(1),
    ]
    assert roundtrip(values) == values


def test_getstate_setstate_class_and_slots_and_subclasses() -> None:
    with_state, slotted, child, pair, name, bag = roundtrip(
        [s.WithState(5), s.Slotted(1, [2]), s.Child(3), s.Pair((1, 2)), s.Name("abc"), s.Bag(a=1)]
    )
    assert (with_state.value, with_state.cache) == (5, "restored")
    assert (slotted.a, slotted.b) == (1, [2])
    assert type(child) is s.Child and child.value == 3
    assert type(pair) is s.Pair and pair == (1, 2)
    assert type(name) is s.Name and name == "abc"
    assert type(bag) is s.Bag and bag == {"a": 1}


def test_instance_attributes_shared_with_outside() -> None:
    tags = ["x"]
    p = s.Point(1, tags=tags)
    restored_p, restored_tags = roundtrip([p, tags])
    assert restored_p.tags is restored_tags


def test_enums_by_reference() -> None:
    members = [s.Color.RED, s.Perm.R | s.Perm.W, s.Perm.X, s.Level.HIGH]
    restored = roundtrip(members)
    assert restored[0] is s.Color.RED and restored[2] is s.Perm.X and restored[3] is s.Level.HIGH
    assert restored[1] == s.Perm.R | s.Perm.W


def test_exceptions_keep_args_cause_context_notes_and_attributes() -> None:
    try:
        try:
            raise s.AppError("inner", 1)
        except s.AppError as inner:
            raise s.RichError("outer", 42) from inner
    except s.RichError as exc:
        exc.add_note("a note")
        caught = exc
    restored = roundtrip(caught)
    assert type(restored) is s.RichError and restored.args == ("outer",) and restored.code == 42
    assert restored.__notes__ == ["a note"]
    assert type(restored.__cause__) is s.AppError and restored.__cause__.args == ("inner", 1)
    assert restored.__context__ is restored.__cause__ and restored.__suppress_context__
    assert restored.__traceback__ is None  # tracebacks are dropped


def test_builtin_exceptions_with_c_fields() -> None:
    os_error = FileNotFoundError(2, "No such file", "/tmp/x")
    stop = StopIteration(5)
    group = ExceptionGroup("many", [ValueError(1), KeyError("k")])
    r_os, r_stop, r_group, r_exit = roundtrip([os_error, stop, group, SystemExit(3)])
    assert (r_os.errno, r_os.strerror, r_os.filename) == (2, "No such file", "/tmp/x")
    assert str(r_os) == str(os_error)
    assert r_stop.value == 5 and r_exit.code == 3
    assert type(r_group) is ExceptionGroup and r_group.message == "many"
    assert [type(e) for e in r_group.exceptions] == [ValueError, KeyError]


def test_exception_with_context_cycle() -> None:
    a, b = ValueError("a"), ValueError("b")
    a.__context__ = b
    b.__context__ = a
    ra = roundtrip(a)
    assert ra.__context__.__context__ is ra


class TestIterators:
    def test_list_iterator_resumes_on_the_same_list(self) -> None:
        lst = [10, 20, 30]
        it = iter(lst)
        next(it)
        r_lst, r_it = roundtrip([lst, it])
        r_lst.append(40)
        assert list(r_it) == [20, 30, 40]

    def test_list_iterator_inside_its_own_list(self) -> None:
        lst: list[Any] = [1, 2, 3]
        it = iter(lst)
        next(it)
        lst.append(it)
        restored = roundtrip(lst)
        assert next(restored[3]) == 2

    @pytest.mark.parametrize(
        "make",
        [
            lambda: iter((1, 2, 3)),
            lambda: iter("abc"),
            lambda: iter("àbc"),
            lambda: iter(b"abc"),
            lambda: iter(bytearray(b"abc")),
            lambda: iter(range(5)),
            lambda: iter(range(2**70, 2**70 + 3)),
            lambda: reversed([1, 2, 3]),
            lambda: reversed((1, 2, 3)),
            lambda: reversed(range(4)),
            lambda: iter({"a": 1, "b": 2, "c": 3}),
            lambda: iter({"a": 1, "b": 2}.values()),
            lambda: iter({"a": 1, "b": 2}.items()),
            lambda: reversed({"a": 1, "b": 2, "c": 3}),
            lambda: iter({1, 2, 3}),
            lambda: iter(frozenset({1, 2, 3})),
            lambda: enumerate(["a", "b", "c"], 5),
            lambda: zip([1, 2, 3], "abc"),  # noqa: B905 - plain zip on purpose
            lambda: zip([1, 2], [3, 4], strict=True),
            lambda: map(abs, [-1, -2, -3]),
            lambda: filter(None, [0, 1, 2, 0, 3]),
            lambda: map(s.top_level, [1, 2], [3, 4]),
        ],
    )
    def test_iterator_resumes_at_its_position(self, make: Any) -> None:
        it = make()
        first = next(it)
        restored = roundtrip(it)
        assert type(restored) is type(it)
        assert list(restored) == list(it)
        assert first is not None or first is None

    def test_exhausted_iterators(self) -> None:
        its = [iter([1]), iter({"a": 1}), iter((1,)), reversed([1])]
        for it in its:
            list(it)
        for restored, original in zip(roundtrip(its), its, strict=True):
            assert type(restored) is type(original)
            assert list(restored) == []

    def test_dict_iterator_shares_the_dict(self) -> None:
        d = {"a": 1, "b": 2, "c": 3}
        it = iter(d.items())
        next(it)
        r_d, r_it = roundtrip([d, it])
        r_d["c"] = 30
        assert list(r_it) == [("b", 2), ("c", 30)]


def test_reverse_iterators_at_their_last_element() -> None:
    for make in (lambda: reversed([1, 2, 3]), lambda: reversed((1, 2, 3)), lambda: reversed("abc")):
        it = make()
        next(it)
        next(it)  # one element left: the reverse index is 0
        restored = roundtrip(it)
        assert list(restored) == list(it)
