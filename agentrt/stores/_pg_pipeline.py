"""One-statement writes of many runs of one event loop, sent together on one connection, no thread.

A worker drives many runs on one event loop, and each durable step writes its checkpoint with one
statement.  Made through a thread pool (the store is synchronous), each statement costs the worker
far more CPU than PostgreSQL spends on it: the hand-off to a thread and back, and the threads'
convoys on the GIL, put half of a busy worker's CPU in the kernel's scheduler.  Measured on this
project's 2-core machines, 100 tasks of one loop each making 40 one-row UPDATEs: ~200 us of the
process's CPU per statement through 4 threads and a pool of 4 connections, ~93 us through psycopg's
async pool, ~32 us sent as here (``benchmarks/pg_statements.py``).

:class:`StatementPipeline` gathers the statements the loop's tasks queue during one turn of the
loop (and while a batch is in flight), and sends them in one pipeline (psycopg's pipeline mode: one
round trip, one Sync) on one async connection.  The batch is one implicit transaction: if any of its
statements fails, none of them took effect, and each is made again on its own, so each caller gets
its own statement's result or error, as if it had been made alone.  A connection the server dropped
is replaced and the batch made once more (none of it was committed).  A batch holds the row locks
of several runs at once, so it sends its statements in the order of their keys (a checkpoint's:
its run id), the order a lease renewal locks a worker's runs in: the two cannot deadlock.  Another
transaction that locks many runs in another order (a cancel of a tree of runs) may: PostgreSQL
fails one of the two after ``deadlock_timeout`` (1 s by default), and a failed batch is made
statement by statement.

Each caller awaits its own statement; a task cancelled meanwhile waits for the statement to end
before it sees the cancellation (as :class:`~agentrt._runtime.storeio.StoreIO` does): nothing it does
after it is cancelled overtakes the write it was making.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any  # Any: psycopg rows and parameters

import psycopg

__all__ = ["StatementPipeline"]

#: ``(key, sql, params, future)``: a statement waiting for its batch
_Queued = tuple[str, str, Any, "asyncio.Future[tuple[Any, ...] | None]"]


class StatementPipeline:
    """Statements of one event loop's tasks, sent a turn of the loop at a time (module docstring)."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[psycopg.AsyncConnection[Any]]],
        connection_lost: Callable[[BaseException], bool],
    ) -> None:
        self._connect = connect
        self._connection_lost = connection_lost
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._queue: list[_Queued] = []
        self._sender: asyncio.Task[None] | None = None
        self._closed = False
        #: psycopg's pipeline mode needs libpq 14 or newer (psycopg-binary bundles one): without it,
        #: the gathered statements are made one after another, still on the loop
        self._together_ok = psycopg.AsyncPipeline.is_supported()

    async def fetchone(self, sql: str, params: Any, key: str = "") -> tuple[Any, ...] | None:
        """Make one statement (with the others of this turn of the loop, in the order of their
        ``key``: the row it locks); its first row (None: none), or the ``psycopg.Error`` it raised
        made alone."""
        if self._closed:
            raise RuntimeError("the statement pipeline is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[Any, ...] | None] = loop.create_future()
        self._queue.append((key, sql, params, future))
        if self._sender is None:
            self._sender = loop.create_task(self._send())
        cancelled: asyncio.CancelledError | None = None
        while True:
            try:
                row = await asyncio.shield(future)
            except asyncio.CancelledError as exc:
                if future.done():
                    raise
                cancelled = exc  # the statement is on its way: wait for it, then be cancelled
                continue
            if cancelled is not None:
                raise cancelled
            return row

    async def aclose(self) -> None:
        """Wait for the statements queued, then close the connection."""
        self._closed = True
        if self._sender is not None:
            await asyncio.gather(self._sender, return_exceptions=True)
        await self._drop()

    def abandon(self) -> None:
        """Close the connection at once, without its event loop (one that has ended): the statements
        it had are gone with that loop."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            conn.pgconn.finish()

    async def _send(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                batch.sort(key=_by_key)
                await self._batch(batch)
        finally:
            self._sender = None

    async def _batch(self, batch: list[_Queued]) -> None:
        for attempt in (1, 2):
            if not self._together_ok:
                await self._one_by_one(batch)
                return
            try:
                conn = await self._connection()
                rows = await (self._alone(conn, batch[0]) if len(batch) == 1 else self._together(conn, batch))
            except psycopg.Error as exc:
                if self._connection_lost(exc):
                    await self._drop()
                    if attempt == 1:
                        continue  # nothing of the batch was committed: once more, on a new connection
                    _fail(batch, exc)
                    return
                if len(batch) == 1:
                    _fail(batch, exc)
                    return
                await self._one_by_one(batch)
                return
            except Exception as exc:  # no connection to be had (the store's error): each caller's
                _fail(batch, exc)
                return
            except BaseException as exc:  # the sender cancelled: every caller hears of it first
                _fail(batch, exc)
                raise
            for (_key, _sql, _params, future), row in zip(batch, rows, strict=True):
                if not future.done():
                    future.set_result(row)
            return

    @staticmethod
    async def _alone(conn: psycopg.AsyncConnection[Any], queued: _Queued) -> list[tuple[Any, ...] | None]:
        cursor = await conn.execute(queued[1], queued[2])
        return [await cursor.fetchone() if cursor.description is not None else None]

    @staticmethod
    async def _together(
        conn: psycopg.AsyncConnection[Any], batch: list[_Queued]
    ) -> list[tuple[Any, ...] | None]:
        cursors = []
        async with conn.pipeline():
            for _key, sql, params, _future in batch:
                cursor = conn.cursor()
                await cursor.execute(sql, params)
                cursors.append(cursor)
        return [await c.fetchone() if c.description is not None else None for c in cursors]

    async def _one_by_one(self, batch: list[_Queued]) -> None:
        """A batch that failed as a whole: each statement made alone, each caller told its own outcome."""
        for i, queued in enumerate(batch):
            try:
                (row,) = await self._alone(await self._connection(), queued)
            except psycopg.Error as exc:
                if self._connection_lost(exc):
                    await self._drop()
                    _fail(batch[i:], exc)
                    return
                _fail([queued], exc)
            except Exception as exc:  # no connection to be had (the store's error): the rest fail with it
                _fail(batch[i:], exc)
                return
            else:
                if not queued[3].done():
                    queued[3].set_result(row)

    async def _connection(self) -> psycopg.AsyncConnection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = await self._connect()
        return self._conn

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a connection already broken closes as it can
                await conn.close()


def _by_key(queued: _Queued) -> str:
    return queued[0]


def _fail(batch: list[_Queued], exc: BaseException) -> None:
    for _key, _sql, _params, future in batch:
        if not future.done():
            future.set_exception(exc)
