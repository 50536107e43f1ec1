"""Everyday values a user keeps in a local, and what each blob mode does with them (issue 24).

A real module, so that a fresh interpreter restoring a blob finds the agents and
classes by ``module:qualname``.  Each :class:`Case` builds its value from scratch
(the same value in every process), says what a *signed* blob does with it --
``EXACT`` (it comes back equal, by ``same``) or the hazard code ``Machine.get()``
refuses it with -- and what an *unsigned* blob does.
"""

from __future__ import annotations

import array
import collections
import dataclasses
import datetime
import decimal
import enum
import fractions
import functools
import inspect
import ipaddress
import logging
import operator
import pathlib
import random
import re
import socket
import string
import threading
import types
import typing
import uuid
import weakref
import zoneinfo
from collections.abc import Callable
from typing import Any

import attrs
import httpx
import pydantic
import pydantic.v1
import structlog

from agentrt.lowlevel import suspend

EXACT = "exact"


# --- classes the values are made of (module level: importable by module:qualname) ---------


@dataclasses.dataclass
class Point:
    x: int
    y: list[int]


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenSlots:
    name: str
    size: float


class Pair(typing.NamedTuple):
    left: int
    right: str


@attrs.define
class AttrsThing:
    a: int
    tags: list[str] = attrs.Factory(list)


@attrs.frozen
class AttrsFrozen:
    a: int


class Model(pydantic.BaseModel):
    name: str
    score: float = 0.5
    items: list[int] = []


class Outer(pydantic.BaseModel):
    inner: Model
    note: str | None = None


class ModelV1(pydantic.v1.BaseModel):
    name: str
    tags: list[str] = []


class Plain:
    def __init__(self, a: int) -> None:
        self.a = a
        self.b = [a, a]

    def __eq__(self, other: object) -> bool:
        return type(other) is Plain and vars(self) == vars(other)


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a: int, b: str) -> None:
        self.a, self.b = a, b

    def __eq__(self, other: object) -> bool:
        return type(other) is Slotted and (self.a, self.b) == (other.a, other.b)


class Versioned:
    """Custom __getstate__/__setstate__ that renames a field."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __getstate__(self) -> dict[str, int]:
        return {"count": self.n}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.n = state["count"]

    def __eq__(self, other: object) -> bool:
        return type(other) is Versioned and other.n == self.n


class Tags(list):  # type: ignore[type-arg]  # an unmarked list subclass with an attribute
    pass


class Registry(dict):  # type: ignore[type-arg]
    pass


class Color(enum.Enum):
    RED = 1


class Perm(enum.IntFlag):
    R = 4
    W = 2


class AppError(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message, status)
        self.status = status


class ReducesToLambda:
    def __reduce__(self) -> Any:
        return (lambda: ReducesToLambda(), ())


class BadSetstate:
    """Pickles, but cannot be restored: set() would fail, so get() refuses it."""

    def __init__(self) -> None:
        self.a = 1

    def __setstate__(self, state: Any) -> None:
        raise ValueError("state from an older version")


def _local_instance() -> Any:
    class Local:
        pass

    return Local()


def _validation_error() -> pydantic.ValidationError:
    try:
        Model(name=3)  # type: ignore[arg-type]  # the point: it does not validate
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("Model(name=3) validated")


def _chat_completion() -> Any:
    from openai.types.chat import ChatCompletion

    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-x",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "hi"},
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )


def _anthropic_message() -> Any:
    from anthropic.types import Message

    return Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )


def _random() -> random.Random:
    r = random.Random(42)
    r.random()
    return r


def _httpx_client() -> httpx.Client:
    return httpx.Client(
        base_url="http://127.0.0.1:9/api",
        timeout=httpx.Timeout(3.0, read=7.0),
        headers={"X-Team": "blue", "Authorization": "Bearer secret-token", "X-Api-Key": "k-1"},
    )


def _openai_client() -> Any:
    import openai

    return openai.OpenAI(
        api_key="sk-never-in-a-blob",
        base_url="http://127.0.0.1:9/v1",
        timeout=12.0,
        max_retries=1,
        default_headers={"X-Team": "blue"},
    )


def _anthropic_client() -> Any:
    import anthropic

    return anthropic.AsyncAnthropic(
        api_key="sk-ant-never-in-a-blob", base_url="http://127.0.0.1:9", timeout=9.0
    )


# --- comparing what came back ---------------------------------------------------------------


def make_adder(n: int) -> Callable[[int], int]:
    """A closure: rebuilt by code identity and cells."""

    def add(x: int) -> int:
        return x + n

    return add


def _list_iterator() -> Any:
    iterator = iter([1, 2, 3])
    next(iterator)
    return iterator


def _enumerate() -> Any:
    iterator = enumerate("abc", 10)
    next(iterator)
    return iterator


@dataclasses.dataclass
class Counter2:
    """A dataclass whose bound method crosses the await."""

    n: int

    def bump(self) -> int:
        return self.n + 1


def _client_config(client: Any) -> Any:
    timeout = client.timeout
    return (
        type(client),
        str(client.base_url),
        timeout if isinstance(timeout, (int, float)) else (timeout.connect, timeout.read),
        getattr(client, "max_retries", None),
    )


def _same_error(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a.args == b.args and vars(a) == vars(b)


def _same_validation_error(a: Any, b: Any) -> bool:
    return type(a) is type(b) and str(a) == str(b) and a.errors() == b.errors()


@dataclasses.dataclass(frozen=True)
class Case:
    """One value: how to make it, what each blob mode does with it, how to compare it."""

    name: str
    make: Callable[[], Any]
    signed: str  # EXACT or the hazard code Machine.get() refuses it with
    unsigned: str  # the same, for an unsigned blob
    same: Callable[[Any, Any], bool] = operator.eq


def _by(key: Callable[[Any], Any]) -> Callable[[Any, Any], bool]:
    return lambda a, b: type(a) is type(b) and key(a) == key(b)


CASES: tuple[Case, ...] = (
    # already in the unsigned value list: exact in both modes
    Case("dict of plain data", lambda: {"a": [1, 2.5, "x"], "b": None}, EXACT, EXACT),
    Case("Decimal", lambda: decimal.Decimal("1.10"), EXACT, EXACT),
    Case("deque", lambda: collections.deque([1, 2], maxlen=5), EXACT, EXACT),
    Case("defaultdict", lambda: collections.defaultdict(list, {"a": [1]}), EXACT, EXACT),
    Case("enum member", lambda: Color.RED, EXACT, EXACT),
    Case("IntFlag combination", lambda: Perm.R | Perm.W, EXACT, EXACT),
    Case("exception of an importable class", lambda: AppError("no", 404), EXACT, EXACT, _same_error),
    Case("re.Pattern", lambda: re.compile("a+b", re.I), EXACT, EXACT),
    Case(
        "datetime with timezone",
        lambda: datetime.datetime(2024, 5, 6, 7, 8, tzinfo=datetime.UTC),
        EXACT,
        EXACT,
    ),
    Case(
        "date, time, timedelta",
        lambda: (datetime.date(2024, 2, 29), datetime.time(1, 2), datetime.timedelta(3)),
        EXACT,
        EXACT,
    ),
    Case("UUID", lambda: uuid.UUID(int=12345), EXACT, EXACT),
    Case("complex, range, slice", lambda: (1 + 2j, range(1, 9, 2), slice(1, None, 3)), EXACT, EXACT),
    Case(
        "set, frozenset, bytes, bytearray",
        lambda: ({1, 2}, frozenset("ab"), b"\x00", bytearray(b"x")),
        EXACT,
        EXACT,
    ),
    Case(
        "OrderedDict and Counter",
        lambda: (collections.OrderedDict(a=1), collections.Counter("aab")),
        EXACT,
        EXACT,
    ),
    Case("list iterator at a position", _list_iterator, EXACT, EXACT, _by(list)),
    Case("enumerate at a position", _enumerate, EXACT, EXACT, _by(list)),
    Case("closure", lambda: make_adder(5), EXACT, EXACT, lambda a, b: a(1) == b(1) == 6),
    Case(
        "functools.partial",
        lambda: functools.partial(make_adder, 2),
        EXACT,
        EXACT,
        lambda a, b: a()(1) == b()(1),
    ),
    Case(
        "bound method of a dataclass instance",
        lambda: Counter2(4).bump,
        EXACT,
        "AR106",
        lambda a, b: a() == b() == 5,
    ),
    # newly carried by signed blobs, refused by unsigned ones
    Case("dataclass", lambda: Point(1, [2, 3]), EXACT, "AR105"),
    Case("frozen slotted dataclass", lambda: FrozenSlots("n", 1.5), EXACT, "AR105"),
    Case("NamedTuple", lambda: Pair(1, "r"), EXACT, "AR105"),
    Case("attrs class", lambda: AttrsThing(1, ["t"]), EXACT, "AR105"),
    Case("frozen attrs class", lambda: AttrsFrozen(2), EXACT, "AR105"),
    Case("pydantic model", lambda: Model(name="m", items=[1]), EXACT, "AR105"),
    Case("nested pydantic model", lambda: Outer(inner=Model(name="i")), EXACT, "AR105"),
    Case("pydantic v1 model", lambda: ModelV1(name="v1", tags=["a"]), EXACT, "AR105"),
    Case("openai ChatCompletion", _chat_completion, EXACT, "AR105"),
    Case("anthropic Message", _anthropic_message, EXACT, "AR105"),
    Case("pydantic ValidationError", _validation_error, EXACT, "AR111", _same_validation_error),
    Case("plain class", lambda: Plain(3), EXACT, "AR105"),
    Case("slotted class", lambda: Slotted(1, "b"), EXACT, "AR105"),
    Case("__getstate__/__setstate__ class", lambda: Versioned(7), EXACT, "AR105"),
    Case("list subclass", lambda: Tags(["a", "b"]), EXACT, "AR105"),
    Case("dict subclass", lambda: Registry(a=1), EXACT, "AR105"),
    Case("Fraction", lambda: fractions.Fraction(1, 3), EXACT, "AR105"),
    Case("Path", lambda: pathlib.Path("/tmp/agentrt/x.txt"), EXACT, "AR105"),
    Case("PurePosixPath", lambda: pathlib.PurePosixPath("a/b"), EXACT, "AR105"),
    Case("ChainMap", lambda: collections.ChainMap({"a": 1}, {"b": 2}), EXACT, "AR105"),
    Case("UserDict", lambda: collections.UserDict(a=1), EXACT, "AR105"),
    Case("array", lambda: array.array("d", [1.0, 2.5]), EXACT, "AR111"),
    Case("operator.itemgetter", lambda: operator.itemgetter("a", "b"), EXACT, "AR111", _by(repr)),
    Case("operator.attrgetter", lambda: operator.attrgetter("a.b"), EXACT, "AR111", _by(repr)),
    Case("operator.methodcaller", lambda: operator.methodcaller("get", "a"), EXACT, "AR111", _by(repr)),
    Case("random.Random", _random, EXACT, "AR105", _by(lambda r: r.getstate())),
    Case("ZoneInfo", lambda: zoneinfo.ZoneInfo("Europe/Paris"), EXACT, "AR111"),
    Case(
        "decimal.Context",
        lambda: decimal.Context(prec=6, rounding=decimal.ROUND_DOWN),
        EXACT,
        "AR111",
        _by(repr),
    ),
    Case("SimpleNamespace", lambda: types.SimpleNamespace(a=1, b=[2]), EXACT, "AR111"),
    Case("ipaddress", lambda: ipaddress.ip_address("10.0.0.1"), EXACT, "AR105"),
    Case("string.Template", lambda: string.Template("$who"), EXACT, "AR105", _by(lambda t: t.template)),
    Case("logging.Logger", lambda: logging.getLogger("agentrt.tests.table"), EXACT, "AR105", operator.is_),
    Case("structlog logger", lambda: structlog.get_logger("table"), EXACT, "AR105", _by(repr)),
    Case(
        "structlog bound logger",
        lambda: structlog.get_logger("table").bind(run="r-1"),
        EXACT,
        "AR105",
        _by(lambda logger: logger._context),
    ),
    # clients agentrt reopens (signed only); secrets are not in the blob (test_value_table)
    Case("httpx.Client", _httpx_client, EXACT, "AR112", _by(_client_config)),
    Case("openai.OpenAI", _openai_client, EXACT, "AR112", _by(_client_config)),
    Case("anthropic.AsyncAnthropic", _anthropic_client, EXACT, "AR112", _by(_client_config)),
    # refused in both modes, at get()
    Case("threading.Lock", threading.Lock, "AR112", "AR112"),
    Case("socket", lambda: socket.socket(), "AR112", "AR112"),
    Case("weakref.ref", lambda: weakref.ref(Color), "AR104", "AR104"),
    Case("re.Match", lambda: re.match("a", "a"), "AR103", "AR103"),
    Case("itertools.count", lambda: __import__("itertools").count(3), "AR111", "AR111"),
    Case("itertools.chain", lambda: __import__("itertools").chain([1], [2]), "AR111", "AR111"),
    Case("reduction calling a lambda", ReducesToLambda, "AR111", "AR105"),
    Case("instance of a local class", _local_instance, "AR111", "AR105"),
    Case("__setstate__ that fails", BadSetstate, "AR111", "AR105"),
    Case("mappingproxy", lambda: types.MappingProxyType({"a": 1}), "AR111", "AR111"),
    Case("memoryview", lambda: memoryview(b"ab"), "AR111", "AR111"),
)

BY_NAME: dict[str, Case] = {case.name: case for case in CASES}


def close(value: Any) -> None:
    """Release what a value holds (sockets, HTTP clients) once a test is done with it."""
    if not isinstance(value, socket.socket) and not hasattr(type(value), "base_url"):
        return
    if not inspect.iscoroutinefunction(value.close):  # an async client closes in an event loop
        value.close()


# --- the agents that hold the values across an await ----------------------------------------


async def hold(name: str) -> bool:
    """Build the value of case ``name``, keep it (twice) across an await, compare it after."""
    value = BY_NAME[name].make()  # the case itself (lambdas) is not kept across the await
    alias = value
    await suspend(("holding", name))
    case = BY_NAME[name]
    again = case.make()
    try:
        return alias is value and case.same(value, again)
    finally:
        close(value)
        close(again)


async def hold_values(values: list[Any]) -> list[Any]:
    """Keep ``values`` across one await and return them (the property test)."""
    await suspend("holding")
    return values
