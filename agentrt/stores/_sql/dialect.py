"""What differs between the SQL engines in the text of a statement: a small value per engine.

The state machine (:mod:`agentrt.stores._sql.store`) writes each statement once, in one form:
``?`` placeholders, the bare table names (``runs``, ``checkpoints``...), standard upserts
(``INSERT ... ON CONFLICT``, which SQLite and PostgreSQL both take) and PostgreSQL's row locks
(``FOR UPDATE``, ``FOR UPDATE SKIP LOCKED``).  :meth:`Dialect.sql` turns that text into the
engine's own, once per text (a cache): SQLite drops the row locks (its ``BEGIN IMMEDIATE``
write lock already serializes every writer), PostgreSQL takes ``%s`` and prefixes the tables
``agentrt_``.  Lists are the one place where the shapes differ (:meth:`Dialect.one_of`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any  # Any: a driver's connection and its parameter values

import attrs

__all__ = ["TABLES", "Dialect"]

#: Every table of a store, by its bare name.
TABLES = (
    "runs",
    "checkpoints",
    "replaced_checkpoints",
    "results",
    "events",
    "stream",
    "tenants",
    "workers",
    "meta",
)
_TABLE = re.compile(r"\b(" + "|".join(TABLES) + r")\b")
_ROW_LOCK = re.compile(r" FOR UPDATE( SKIP LOCKED)?\b")
#: How many statement texts a dialect remembers (lists of many lengths make new texts).
_MAX_CACHED = 1024
#: Parameters per statement of a multi-row insert: SQLite before 3.32 takes at most 999
_MAX_PARAMETERS = 999


@attrs.define(frozen=True)
class Dialect:
    """One SQL engine's spelling of the store's statements (see the module docstring)."""

    #: ``sqlite`` or ``postgresql``
    name: str
    #: what each table's bare name is prefixed with (PostgreSQL shares a database: ``agentrt_``)
    table_prefix: str
    #: the driver's placeholder (``?`` for sqlite3, ``%s`` for psycopg)
    placeholder: str
    #: whether ``FOR UPDATE`` row locks are kept (PostgreSQL) or dropped (SQLite's write lock is the store's)
    row_locks: bool
    #: a list parameter is one array (``= ANY(?)``) rather than one placeholder per item (``IN (?, ?)``)
    arrays: bool
    #: ``executemany(conn, sql, rows)``: the driver's way to run one statement for many rows
    executemany: Callable[[Any, str, Sequence[Sequence[Any]]], None]
    #: what the store lives in, for messages ("file", "database")
    container: str
    #: what makes ``ORDER BY`` of text compare code points, as Python sorts strings (SQLite's default)
    code_point_order: str = ""
    #: ``sql(text)``: ``text`` (the store's one form of a statement) in this engine's spelling --
    #: a dictionary lookup once a text was spelled (a step makes several; see :class:`_Spellings`)
    sql: Callable[[str], str] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "sql", _Spellings(self.spell).__getitem__)

    def spell(self, text: str) -> str:
        """``text`` in this engine's spelling, made anew (:attr:`sql` remembers it)."""
        if not self.row_locks:
            text = _ROW_LOCK.sub("", text)
        if self.table_prefix:
            text = _TABLE.sub(self.table_prefix + r"\1", text)
        if self.placeholder != "?":
            text = text.replace("%", "%%").replace("?", self.placeholder)
        return text

    def table(self, name: str) -> str:
        """The table ``name`` as this engine names it (for messages)."""
        return self.table_prefix + name

    def insert_rows(
        self, conn: Any, table: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]
    ) -> None:
        """Insert ``rows`` into ``table`` (its bare name; ``columns``: each one's name and SQL type)
        in one statement: a column each, unnested, where the engine takes arrays (PostgreSQL), else
        one multi-row ``VALUES`` (SQLite; more rows than its parameter limit take more statements).
        One statement, not one per row: a durable step's stream events are written by one."""
        names = ", ".join(name for name, _ in columns)
        if self.arrays:
            arrays = ", ".join(f"?::{sql_type}[]" for _, sql_type in columns)
            conn.execute(
                self.sql(f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays})"),
                [list(column) for column in zip(*rows, strict=True)],
            )
            return
        row = "(" + ", ".join("?" * len(columns)) + ")"
        per_statement = max(1, _MAX_PARAMETERS // len(columns))
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            values = ", ".join([row] * len(chunk))
            conn.execute(
                self.sql(f"INSERT INTO {table} ({names}) VALUES {values}"),
                [value for one in chunk for value in one],
            )

    def each_of(self, column: str, values: Sequence[str]) -> tuple[str, list[Any]]:
        """A table of ``values`` (text, not empty), one row each, its one column named ``column``:
        the text to put after ``FROM`` and its parameters.  For a lookup per value that an index
        answers (the newest stream id of each run: ``SELECT MAX(id) ... WHERE run_id = each.run_id``),
        where ``WHERE run_id = ANY(?) GROUP BY run_id`` let PostgreSQL's planner, misjudging how
        many rows a list of ids matches, scan the whole table at every durable step."""
        if self.arrays:
            return f"unnest(?::text[]) AS each_({column})", [list(values)]
        rows = ", ".join(["(?)"] * len(values))
        return f"(SELECT column1 AS {column} FROM (VALUES {rows})) AS each_", list(values)

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` is one of ``values`` (not empty): the condition's text and its parameters."""
        if self.arrays:
            return f"{column} = ANY(?)", [list(values)]
        return f"{column} IN ({', '.join('?' * len(values))})", list(values)


class _Spellings(dict[str, str]):
    """Statement text -> its spelling, made on first use: a hit is one C-level lookup, no Python call."""

    def __init__(self, spell: Callable[[str], str]) -> None:
        super().__init__()
        self._spell = spell

    def __missing__(self, text: str) -> str:
        if len(self) >= _MAX_CACHED:
            self.clear()
        out = self[text] = self._spell(text)
        return out
