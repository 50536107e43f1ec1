"""Object identity (shared references, cycles), big state, and one agent per value group
of api.md §2 held in locals across awaits."""

import dataclasses
import math
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from uuid import UUID

import attrs

from tests.corpus import other_module
from tests.corpus.protocol import ask, serializable
from tests.corpus.registry import case


@case(expect=([1, 2, 3, 4], True, True, True, {"x": [1, 2, 3, 4], "y": [1, 2, 3, 4]}))
async def shared_references():
    a = [1, 2]
    b = a
    holder = {"x": a, "y": a}
    pair = (a, a)
    await ask("hold")
    a.append(await ask(3))
    b.append(await ask(4))
    return b, a is b, holder["x"] is holder["y"] is a, pair[0] is b, holder


@serializable
@attrs.define(eq=False)
class Node:
    name: str
    next: object = None
    data: dict = attrs.Factory(dict)


@case(expect=(True, 3, 2, True, True, True, {"n": 3}, "b"))
async def cycles():
    lst = [1]
    lst.append(lst)  # a list containing itself
    d = {}
    d["self"] = d
    a = Node("a")
    b = Node("b", a)
    a.next = b  # an object graph with a cycle
    a.data["back"] = b
    await ask("hold")
    lst.append(await ask(2))
    b.data["n"] = await ask(3)
    return (
        lst[1] is lst,
        len(lst),
        lst[1][2],
        d["self"] is d,
        a.next.next is a,
        a.data["back"] is b,
        b.data,
        a.next.name,
    )


@case(expect=(100_000, 10_001, 4_999_949_994, 99_999, -1, "9999", "new"))
async def big_state():
    big = list(range(100_000))
    table = {i: str(i) for i in range(10_000)}
    first = await ask(len(big))
    big[await ask(5)] = -1
    table[await ask(10_000)] = "new"
    n = await ask(len(table))
    return first, n, sum(big), big[-1], big[5], table[9_999], table[10_000]


@case(
    expect=(
        2**100,
        -7,
        1.5,
        math.nan,
        math.inf,
        -math.inf,
        -0.0,
        complex(1.5, -2.0),
        True,
        None,
        -1.0,
        True,
        (math.nan, -0.0),
    )
)
async def values_numbers():
    i = 2**100
    neg = -7
    f = 1.5
    nan = float("nan")
    inf = float("inf")
    ninf = float("-inf")
    nz = -0.0
    c = complex(1.5, -2.0)
    t, n = True, None
    await ask("hold")
    back = await ask((nan, nz))
    return (i, neg, f, nan, inf, ninf, nz, c, t, n, math.copysign(1.0, nz), nan != nan, back)


@case(expect=("héllo ☃ \U0001f600", "", b"\x00\xffbytes", b"", 10_000, "tail"))
async def values_strings():
    s = "héllo ☃ \U0001f600"
    e = ""
    b = b"\x00\xffbytes"
    eb = b""
    long = "x" * 10_000
    await ask("hold")
    tail = await ask("tail")
    return s, e, b, eb, len(long), tail


@case(
    expect=(
        [1, [2, 3, 4], []],
        (1, (2,), ()),
        {1: "int", "s": [1], (1, 2): "tuple", None: 0, 2.5: "f"},
        [1, "s", (1, 2), None, 2.5],
        {1, "a", (1, 2)},
        frozenset({1, 2}),
        {"k": [{"z": (frozenset({1, 2}),)}]},
        ([], (), {}, set(), frozenset()),
    )
)
async def values_containers():
    lst = [1, [2, 3], []]
    tup = (1, (2,), ())
    d = {1: "int", "s": [1], (1, 2): "tuple", None: 0, 2.5: "f"}
    st = {1, "a", (1, 2)}
    fs = frozenset({1, 2})
    nested = {"k": [{"z": (fs,)}]}
    empty = ([], (), {}, set(), frozenset())
    await ask("hold")
    lst[1].append(await ask(4))
    return lst, tup, d, list(d), st, fs, nested, empty


@case(
    expect=(
        datetime(2024, 2, 29, 13, 45, 30, 123456),
        datetime(2024, 1, 1, tzinfo=UTC),
        date(1999, 12, 31),
        time(23, 59, 59, 999999),
        timedelta(days=-1, seconds=5, microseconds=7),
        datetime(2024, 2, 28, 13, 45, 35, 123463),
        "UTC",
    )
)
async def values_datetime():
    dt = datetime(2024, 2, 29, 13, 45, 30, 123456)
    dtu = datetime(2024, 1, 1, tzinfo=UTC)
    da = date(1999, 12, 31)
    tm = time(23, 59, 59, 999999)
    td = timedelta(days=-1, seconds=5, microseconds=7)
    await ask("hold")
    await ask("hold2")
    return dt, dtu, da, tm, td, dt + td, dtu.tzname()


@case(
    expect=(
        Decimal("1.10"),
        Decimal("-0.000"),
        Decimal("NaN"),
        UUID("12345678-1234-5678-1234-567812345678"),
        "1.10",
        "12345678123456781234567812345678",
    )
)
async def values_decimal_uuid():
    d = Decimal("1.10")
    dz = Decimal("-0.000")
    dnan = Decimal("NaN")
    u = UUID("12345678-1234-5678-1234-567812345678")
    await ask("hold")
    await ask("hold2")
    return d, dz, dnan, u, str(d), u.hex


@case(expect=(range(1, 20, 3), range(0), slice(1, None, 2), slice(None), [4, 10, 16], [1, 7, 13, 19]))
async def values_range_slice():
    r = range(1, 20, 3)
    r0 = range(0)
    s = slice(1, None, 2)
    s2 = slice(None)
    await ask("hold")
    await ask("hold2")
    return r, r0, s, s2, list(r)[s], list(r)[s2][::2]


@case(
    expect=(
        [2, "b", "y", 2, 11, "k2", 2, ("k2", 2), 2],
        [[3, 4], ["c"], ["z"], [3], [12, 13], ["k3"], [3], [("k3", 3)], [3]],
    )
)
async def values_iterators():
    lst = [1, 2, 3]
    it_list = iter(lst)
    next(it_list)
    it_tuple = iter(("a", "b", "c"))
    next(it_tuple)
    it_str = iter("xyz")
    next(it_str)
    it_bytes = iter(b"\x01\x02\x03")
    next(it_bytes)
    it_range = iter(range(10, 14))
    next(it_range)
    d = {"k1": 1, "k2": 2, "k3": 3}
    it_keys = iter(d)
    next(it_keys)
    it_vals = iter(d.values())
    next(it_vals)
    it_items = iter(d.items())
    next(it_items)
    it_set = iter({1, 2, 3})
    next(it_set)
    await ask("hold")
    lst.append(await ask(4))  # the iterator still reads the same list
    its = [it_list, it_tuple, it_str, it_bytes, it_range, it_keys, it_vals, it_items, it_set]
    firsts = [next(it) for it in its]
    await ask("hold2")
    return firsts, [list(it) for it in its]


def double(x):
    return x * 2


def is_even(x):
    return x % 2 == 0


@case(
    expect=([(11, "b"), (2, "y"), 2, 2, 4, 2, 3], [[(12, "c")], [(3, "z")], [1], [1], [6], [4, 6, 8], [4, 5]])
)
async def values_iter_objects():
    e = enumerate(["a", "b", "c"], start=10)
    next(e)
    z = zip([1, 2, 3], "xyz")
    next(z)
    r = reversed([1, 2, 3])
    next(r)
    rt = reversed((1, 2, 3))
    next(rt)
    m = map(double, [1, 2, 3])
    next(m)
    f = filter(is_even, range(10))
    next(f)
    fl = filter(lambda v: v > 1, [1, 2, 3, 4, 5])
    next(fl)
    await ask("hold")
    objs = [e, z, r, rt, m, f, fl]
    firsts = [next(o) for o in objs]
    await ask("hold2")
    return firsts, [list(o) for o in objs]


def letters():
    for ch in "abc":  # noqa: UP028 - a for-loop generator frame, not a delegating one
        yield ch
    return "end"


@case(expect=("a", "b", ["c"], "end"))
async def values_generator():
    g = letters()
    first = next(g)
    await ask("hold")
    second = next(g)
    await ask("hold2")
    third = next(g)
    try:
        next(g)
    except StopIteration as stop:
        end = stop.value
    return first, second, [third], end


class ValueTypeError(LookupError):
    pass


@case(
    expect=(
        ("k",),
        "ValueTypeError",
        ("top", 2),
        ["note one"],
        "ValueError",
        ("root",),
        True,
        True,
        "FileNotFoundError",
        (2, "nf"),
        None,
        ["ValueError", "TypeError"],
        "g",
        "noted",
    )
)
async def values_exceptions():
    plain = KeyError("k")
    try:
        try:
            raise ValueError("root")
        except ValueError as root:
            raise ValueTypeError("top", 2) from root
    except ValueTypeError as top:
        chained = top
    chained.add_note("note one")
    try:
        try:
            raise OSError(2, "nf")
        except OSError:
            raise RuntimeError("during")
    except RuntimeError as r:
        implicit = r
    group = ExceptionGroup("g", [ValueError(1), TypeError(2)])
    await ask("hold")
    note = await ask("noted")
    return (
        plain.args,
        type(chained).__name__,
        chained.args,
        chained.__notes__,
        type(chained.__cause__).__name__,
        chained.__cause__.args,
        chained.__context__ is chained.__cause__,
        chained.__suppress_context__,
        type(implicit.__context__).__name__,
        implicit.__context__.args,
        implicit.__cause__,
        [type(x).__name__ for x in group.exceptions],
        group.message,
        note,
    )


@serializable
@dataclasses.dataclass
class Pair:
    a: object
    b: object


@case(expect=(42, True, Pair(1, 2), True, 2, "A", True, True, "remote_double", double))
async def values_functions_classes():
    f = double
    cls = Pair
    builtin = len
    method = str.upper
    exc_cls = KeyError
    afn = other_module.remote_double
    await ask("hold")
    await ask("hold2")
    return (
        f(21),
        f is double,
        cls(1, 2),
        cls is Pair,
        builtin([1, 2]),
        method("a"),
        exc_cls is KeyError,
        afn is other_module.remote_double,
        afn.__qualname__,
        f,
    )


@serializable
@attrs.define
class Settings:
    name: str
    retries: int = 3
    tags: list = attrs.Factory(list)


@serializable
@attrs.frozen
class FrozenCfg:
    key: str
    limit: float


@case(expect=(Settings("svc", 5, ["a", "b"]), FrozenCfg("k", 0.5), 5))
async def values_attrs_instance():
    s = Settings("svc", tags=["a"])
    fz = FrozenCfg("k", 0.5)
    await ask("hold")
    s.retries = await ask(5)
    s.tags.append(await ask("b"))
    return s, fz, s.retries


@serializable
@dataclasses.dataclass(frozen=True, slots=True)
class FrozenPair:
    left: int
    right: tuple


@case(expect=(Pair([1, 9], "x"), FrozenPair(1, (2, 3)), True))
async def values_dataclass_instance():
    p = Pair([1], "x")
    fp = FrozenPair(1, (2, 3))
    same = p
    await ask("hold")
    p.a.append(await ask(9))
    return same, fp, same is p


@serializable
@dataclasses.dataclass
class Tally:
    count: int = 0

    def incr(self, by=1):
        self.count += by
        return self.count


@case(expect=(6, 6, True, Tally(6)))
async def values_bound_method():
    t = Tally()
    incr = t.incr  # a bound method of a serializable instance
    incr()
    await ask("hold")
    a = incr(await ask(5))
    await ask("hold2")
    return a, t.count, incr.__self__ is t, t


@serializable
class Custom:
    """A plain class with __getstate__/__setstate__ (a derived cache is rebuilt)."""

    def __init__(self, a):
        self.a = a
        self._cache = {"derived": a * 2}

    def __getstate__(self):
        return {"a": self.a}

    def __setstate__(self, state):
        self.a = state["a"]
        self._cache = {"derived": self.a * 2}

    def __eq__(self, other):
        return type(other) is Custom and other.a == self.a

    __hash__ = None


@case(expect=(4, 8, Custom(4)))
async def values_getstate_class():
    # The class rebuilds its cache in __setstate__; keep it consistent without a
    # checkpoint too, so every mode sees the same object.
    c = Custom(3)
    await ask("hold")
    c.__setstate__({"a": await ask(4)})
    await ask("hold2")
    return c.a, c._cache["derived"], c
