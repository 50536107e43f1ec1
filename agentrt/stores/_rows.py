"""Encoding a row's columns, and decoding them without letting one bad value break every view of the store.

A row is data someone may have damaged (a disk fault, a hand edit, an attacker with write access
to the database).  Raising while building one record would stop ``agentrt runs``, ``workers``,
``upgrade --dry-run`` and ``GET /runs`` for every run; instead each column is decoded here, a bad
one is replaced by its default, and the record carries ``damaged = (column, why)`` for the views
to report.  The first damaged column is the one named; the others are still defaulted.
"""

from __future__ import annotations

import json
from typing import Any  # Any: decoded JSON column values

import attrs

from agentrt.stores.base import RunRecord

__all__ = [
    "RUN_COLUMNS",
    "RowDecoder",
    "dumps",
    "json_column",
    "load_json_or_damaged",
    "run_record",
    "stream_json",
]

#: The columns of a run row, in the order :func:`run_record` takes them.
RUN_COLUMNS = (
    "run_id, agent, status, input, output, error, error_blob, seq, pending, waiting_on, wake_at, "
    "parent_id, parent_seq, parent_idx, created_at, updated_at, lease_owner, lease_expires, usage, "
    "epoch, priority, cancel_requested, deadline, code_required, blocked, head"
)

#: ``json.dumps(value, separators=(",", ":"))``'s encoder, without building it at every call
_COMPACT = json.JSONEncoder(separators=(",", ":"))
_C_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # the C accelerator, when there is one
#: ... and the stream's: what JSON lacks is kept as its repr (an event never fails for its data)
_STREAM = json.JSONEncoder(default=repr, separators=(",", ":"))


def stream_json(data: Any) -> str:
    """An event's data as a store's stream keeps it: compact JSON, anything JSON lacks as its repr
    (the runtime's own events take a faster encoder to the same text, ``_runtime.stream``)."""
    return _STREAM.encode(data)


def dumps(value: Any) -> str | None:
    """Compact JSON text (the same as ``json.dumps(value, separators=(",", ":"))``), or None."""
    if value is None:
        return None
    if _C_MAKE_ENCODER is None or type(value) is not dict:
        return _COMPACT.encode(value)
    # a dict (every JSON column but a run's input): the C encoder with a fresh cycle check
    encode = _C_MAKE_ENCODER(
        {}, _COMPACT.default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True
    )
    return "".join(encode(value, 0))


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


def run_record(row: tuple[Any, ...]) -> RunRecord:
    """The record of a run row (its :data:`RUN_COLUMNS`): a damaged column is defaulted and named in
    ``RunRecord.damaged``, never raised."""
    (run_id, agent, status, input_, output, error, error_blob, seq, pending, waiting_on, wake_at,
     parent_id, parent_seq, parent_idx, created_at, updated_at, lease_owner, lease_expires, usage,
     epoch, priority, cancel_requested, deadline, code_required, blocked, head,
     ) = row  # fmt: skip
    d = RowDecoder()
    number = (int, float)
    rec = RunRecord(
        run_id=d.required("run_id", run_id, str, str(run_id)),
        agent=d.required("agent", agent, str, "?"),
        status=d.required("status", status, str, "?"),
        input=d.json("input", input_),
        output=d.json("output", output),
        error=d.json("error", error, dict),
        error_blob=d.of("error_blob", error_blob, (bytes, memoryview)),
        seq=d.of("seq", seq, int, 0),
        pending=d.json("pending", pending, dict),
        waiting_on=d.of("waiting_on", waiting_on, str),
        wake_at=d.of("wake_at", wake_at, number),
        parent_id=d.of("parent_id", parent_id, str),
        parent_seq=d.of("parent_seq", parent_seq, int),
        parent_idx=d.of("parent_idx", parent_idx, int),
        created_at=d.of("created_at", created_at, number, 0.0),
        updated_at=d.of("updated_at", updated_at, number, 0.0),
        lease_owner=d.of("lease_owner", lease_owner, str),
        lease_expires=d.of("lease_expires", lease_expires, number),
        usage=_usage(d, usage),
        epoch=d.of("epoch", epoch, int, 0),
        priority=d.of("priority", priority, int, 0),
        cancel_requested=bool(d.of("cancel_requested", cancel_requested, (int, bool), 0)),
        deadline=d.of("deadline", deadline, number),
        code_required=d.of("code_required", code_required, str),
        blocked=d.json("blocked", blocked, dict),
        head=head if isinstance(head, str) else None,
    )
    return rec if d.damaged is None else attrs.evolve(rec, damaged=d.damaged)


def _usage(d: RowDecoder, text: object) -> dict[str, int]:
    """The ``usage`` column: a JSON object of counts (anything else is damage)."""
    usage = d.json("usage", text, dict) or {}
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in usage.values()):
        d.mark("usage", "a JSON object whose values are not all integer counts")
        return {}
    return usage
