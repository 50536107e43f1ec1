"""Frames as a blob describes them, decoded for ``agentrt dump``: data, never live frames.

A dump must not run anything a blob names, not even the synthesized prologues
that priming runs.  So when a load is made to *describe* (``loads(...,
describe=True)``), the frame extension validates each frame record exactly as a
restore would (the code it names, the site, the NULL mask, the value-stack
slots) but builds no resume code and no coroutine: it returns a
:class:`FrameRecord`, whose ``state`` is the :class:`FrameState` the record
holds, in the same form ``capture`` gives for a live frame.  The awaitable of an
``async for`` step and of ``anext(..., default)`` become :class:`StepRecord` and
:class:`AnextRecord` around the records they wrap.
"""

from __future__ import annotations

from types import CodeType
from typing import Any  # Any: decoded locals and stack entries are any value

from agentrt._frames._capture import FrameState, Kind

__all__ = ["RECORD_TYPES", "AnextRecord", "FrameRecord", "StepRecord", "record_owner"]


class FrameRecord:
    """One decoded frame record: its code, kind, module and (once the graph is complete) state.

    ``__iter__`` / ``__next__`` let a record stand where a generator is iterated
    (``enumerate(gen)`` rebuilds around it); ``__next__`` refuses, so nothing ever
    steps a record.
    """

    __slots__ = ("__weakref__", "cells", "code", "kind", "module", "state", "status")

    def __init__(self, kind: Kind, code: CodeType, module: str, status: int, cells: tuple[Any, ...]) -> None:
        self.kind = kind
        self.code = code
        self.module = module
        self.status = status
        self.cells = cells
        self.state: FrameState | None = None

    def __iter__(self) -> FrameRecord:
        return self

    def __next__(self) -> Any:
        raise TypeError(f"{self.code.co_qualname} was decoded for a dump: a frame record cannot be run")

    def __repr__(self) -> str:
        return f"<frame record of {self.kind.name.lower()} {self.code.co_qualname}>"

    def shown_type(self) -> str:
        """The type name of the live object this record stands for (what a dump shows)."""
        return _TYPE_OF_KIND[self.kind]


class StepRecord:
    """The awaitable of one ``async for`` / ``__anext__`` / ``asend`` step of a recorded async generator."""

    __slots__ = ("agen",)

    def __init__(self, agen: FrameRecord) -> None:
        self.agen = agen

    def shown_type(self) -> str:
        return "async_generator_asend"


class AnextRecord:
    """The awaitable of ``anext(aiterator, default)``: what it wraps and its default."""

    __slots__ = ("default", "wrapped")

    def __init__(self, wrapped: FrameRecord | StepRecord, default: Any) -> None:
        self.wrapped = wrapped
        self.default = default

    def shown_type(self) -> str:
        return "anext_awaitable"


RECORD_TYPES = (FrameRecord, StepRecord, AnextRecord)
_TYPE_OF_KIND = {
    Kind.COROUTINE: "coroutine",
    Kind.GENERATOR: "generator",
    Kind.ASYNC_GENERATOR: "async_generator",
}


def record_owner(value: Any) -> Any:
    """The frame record an awaitable record stands for (``value`` itself otherwise)."""
    if type(value) is AnextRecord:
        value = value.wrapped
    if type(value) is StepRecord:
        return value.agen
    return value
