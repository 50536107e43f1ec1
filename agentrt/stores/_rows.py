"""Decoding a stored row's columns without letting one bad value break every view of the store.

A row is data someone may have damaged (a disk fault, a hand edit, an attacker with write access
to the database).  Raising while building one record would stop ``agentrt runs``, ``workers``,
``upgrade --dry-run`` and ``GET /runs`` for every run; instead each column is decoded here, a bad
one is replaced by its default, and the record carries ``damaged = (column, why)`` for the views
to report.  The first damaged column is the one named; the others are still defaulted.
"""

from __future__ import annotations

import json
from typing import Any  # Any: decoded JSON column values

__all__ = ["RowDecoder", "json_column", "load_json_or_damaged"]


class RowDecoder:
    """Decodes the columns of one row, remembering the first one that was damaged."""

    __slots__ = ("damaged",)

    def __init__(self) -> None:
        self.damaged: tuple[str, str] | None = None

    def mark(self, column: str, why: str) -> None:
        """Record that ``column`` is damaged (only the first damaged column is named)."""
        if self.damaged is None:
            self.damaged = (column, why)

    def json(self, column: str, text: object, kind: type | tuple[type, ...] | None = None) -> Any:
        """The JSON value of ``text`` (None for NULL); None and marked when it is not JSON of ``kind``."""
        if text is None:
            return None
        if isinstance(text, (bytes, bytearray, memoryview)):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as exc:
                self.mark(column, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
                return None
        if not isinstance(text, str):
            self.mark(column, f"a {type(text).__name__}, not JSON text")
            return None
        try:
            value = json.loads(text)
        except RecursionError:
            self.mark(column, "JSON nested too deeply")
            return None
        except ValueError as exc:
            self.mark(column, f"invalid JSON: {exc}")
            return None
        if kind is not None and value is not None and not isinstance(value, kind):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            self.mark(column, f"JSON {type(value).__name__}, not {_json_name(names)}")
            return None
        return value

    def of(self, column: str, value: object, kind: type | tuple[type, ...], default: Any = None) -> Any:
        """``value`` when NULL-or-``kind`` (an int for a float column too), else ``default`` and marked."""
        if value is None:
            return default if default is not None else None
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            self.mark(column, f"a boolean, not a number: {value!r}")
            return default
        if isinstance(value, kind) or (kind is float and isinstance(value, int)):
            return value
        self.mark(column, f"a {type(value).__name__} where a {_kind_name(kind)} belongs: {_short(value)}")
        return default

    def required(self, column: str, value: object, kind: type, default: Any) -> Any:
        """Like :meth:`of`, and a NULL is damage too (the column is NOT NULL in the schema)."""
        if value is None:
            self.mark(column, "NULL where a value belongs")
            return default
        return self.of(column, value, kind, default)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))


def _json_name(names: str) -> str:
    return names.replace("dict", "object").replace("list", "array").replace("str", "string")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def json_column(text: object, column: str, run_id: str, location: str, kind: type = dict) -> Any:
    """A JSON column the store itself acts on (a run's ``pending``, ``usage``), or :class:`RowDamaged`
    naming the run and column: a store never acts on a default it made up for a damaged value."""
    decoder = RowDecoder()
    value = decoder.json(column, text, kind)
    if decoder.damaged is not None:
        from agentrt.exceptions import RowDamaged

        column, why = decoder.damaged
        raise RowDamaged(
            f"store {location}: run {run_id!r} has a damaged {column} column ({why}); nothing was "
            f"written. Repair or clear the column (`agentrt show {run_id}` names it), then try again",
            run_id,
            column,
        )
    return value


def load_json_or_damaged(text: object, column: str) -> Any:
    """A JSON column of a list row (an event's data): its value, or ``{"damaged": {column, why}}``."""
    decoder = RowDecoder()
    value = decoder.json(column, text)
    if decoder.damaged is not None:
        return {"damaged": {"column": decoder.damaged[0], "why": decoder.damaged[1]}}
    return value
