"""What the validator can know about a value without running anything.

A :class:`Value` is the abstract result of an expression: "an asyncio Task from
``asyncio.create_task()``", "a ``re.Match``", "an instance of class ``Foo`` (not
marked serializable)".  Expressions nothing is known about have no Value (``None``),
and the validator never reports those: it reports only what it can name.
"""

from __future__ import annotations

import enum

import attrs

from agentrt.validate._resolve import Symbol

__all__ = ["Kind", "Value", "a", "worst"]


class Kind(enum.Enum):
    FUTURE = "future"  # asyncio Future / Task                      AR101 error
    COROUTINE = "coroutine"  # agent coroutine, not awaited yet     AR101 portability
    ASYNC_GENERATOR = "async-generator"  # made by agent code       (fine; AR108 relies on it)
    MATCH = "match"  # re.Match                                      AR103 error
    MATCH_ITERATOR = "match-iterator"  # re.finditer()               AR103 error
    PATTERN = "pattern"  # re.Pattern                                AR103 portability
    WEAKREF = "weakref"  # weakref.*                                 AR104 error
    INSTANCE = "instance"  # class not marked @serializable          AR105 portability (local class: error)
    RESOURCE = "resource"  # file, socket, lock, client, loop, ...   AR112 error
    BOUND_METHOD = "bound-method"  # of an INSTANCE / RESOURCE       AR106 error (INSTANCE: portability)
    FUNCTION = "function"  # module-level / imported function        AR106 portability
    PARTIAL = "partial"  # functools.partial                         AR106 portability
    CALLABLE_PARAMETER = "callable-parameter"  # a callback argument AR106 portability
    EXTERNAL_NAME = "external-name"  # imported name of unknown kind AR106 portability, if called
    FRAME = "frame"  # frame objects, memoryview                     AR111 error
    CONTAINER = "container"  # a display / comprehension holding `element`


@attrs.frozen
class Value:
    """An abstract value.  ``what`` reads well inside parentheses in a message:
    ``variable 'f' (file object from open()) is live ...``."""

    kind: Kind
    what: str
    family: str | None = None  # RESOURCE: file, socket, lock, thread, executor, db, http, loop, asyncio, ...
    # (BOUND_METHOD: "instance" when bound to an object of an importable class)
    origin: str | None = None  # dotted name of what made it ("asyncio.create_task", "mymod.Foo")
    element: Value | None = None  # CONTAINER / iterators: what iterating over it yields
    elements: tuple[Value | None, ...] | None = None  # fixed-size tuples (unpacking)
    methods: frozenset[str] = frozenset()  # INSTANCE: method names defined by its class
    enter_self: bool = True  # `with X as v`: whether __enter__ returns X itself
    callee: str | None = None  # FUNCTION / EXTERNAL_NAME: dotted name it refers to
    symbol: Symbol | None = attrs.field(default=None, eq=False)  # FUNCTION, ASYNC_GENERATOR: its def


_RANK = {
    Kind.FUTURE: 3,
    Kind.MATCH: 3,
    Kind.MATCH_ITERATOR: 3,
    Kind.WEAKREF: 3,
    Kind.INSTANCE: 3,
    Kind.RESOURCE: 3,
    Kind.BOUND_METHOD: 3,
    Kind.FRAME: 3,
    Kind.COROUTINE: 2,
    Kind.PATTERN: 2,
    Kind.FUNCTION: 2,
    Kind.PARTIAL: 2,
    Kind.CALLABLE_PARAMETER: 2,
    Kind.EXTERNAL_NAME: 1,
    Kind.ASYNC_GENERATOR: 1,
    Kind.CONTAINER: 0,
}


def a(phrase: str) -> str:
    """``phrase`` with its indefinite article: ``a('instance of X')`` -> ``'an instance of X'``."""
    vowel = phrase[:1].lower() in "aeiou" or phrase.startswith(("HTTP", "SQL", "RLock"))
    return f"{'an' if vowel else 'a'} {phrase}"


def rank(value: Value | None) -> int:
    if value is None:
        return -1
    if value.kind is Kind.CONTAINER:
        return rank(value.element)
    return _RANK[value.kind]


def worst(*values: Value | None) -> Value | None:
    """The most serious of ``values`` (the first one on ties), ``None`` if none is known."""
    best: Value | None = None
    for value in values:
        if rank(value) > rank(best):
            best = value
    return best
