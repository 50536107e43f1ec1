"""``SqlStore``: the second half of the run state machine over SQL (:mod:`agentrt.stores._sql.core`
the first): checkpoints, the journal, parking, blocking, reopening, finishing, retention, events,
the durable stream, tenants and the worker registry.  Each write that carries ``owner`` (and
``epoch``) first locks the run row and checks the lease (:meth:`SqlCore._check_owner`), in the
transaction of the write: a worker paused past its lease never writes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any  # Any: driver rows and connections; JSON columns

from agentrt.exceptions import RunNotFound
from agentrt.stores._rows import dumps, json_column, load_json_or_damaged, stream_json
from agentrt.stores._sql.core import SqlCore, translated
from agentrt.stores._sql.dialect import Dialect
from agentrt.stores._sql.packing import pack, unpack
from agentrt.stores.base import (
    FINAL,
    CheckpointInfo,
    EventRecord,
    EventRow,
    ReplacedCheckpoint,
    RunStatus,
    StoreError,
    StreamEvent,
    StreamItem,
    add_usage,
    is_answered,
    prune_due,
)
from agentrt.stores.registry import (
    PRUNE_AFTER_SECONDS,
    PRUNE_BATCH,
    PRUNE_EVERY_SECONDS,
    WorkerInfo,
    bounded,
    from_json,
    to_json,
)

__all__ = ["APPEND_NUMBERED", "STREAM_COLUMNS", "SqlStore", "newest_stream_ids"]

#: The stream table's columns and their types, for rows numbered before they are inserted
#: (:meth:`Dialect.insert_rows`; a run's ids are 1, 2, 3... with no gap: the key refuses a taken one).
STREAM_COLUMNS = (
    ("run_id", "TEXT"),
    ("id", "BIGINT"),
    ("kind", "TEXT"),
    ("data", "TEXT"),
    ("created_at", "DOUBLE PRECISION"),
)


def newest_stream_ids(dialect: Dialect, run_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """The statement (in the store's one form) and parameters that read each run's newest stream id
    (0 for none): one backward step of the ``(run_id, id)`` key per run, however long the stream."""
    each, params = dialect.each_of("run_id", run_ids)
    return (
        "SELECT each_.run_id, (SELECT COALESCE(MAX(s.id), 0) FROM stream s "
        f"WHERE s.run_id = each_.run_id) FROM {each}",
        params,
    )


#: A batch of stream events numbered by the statement that inserts them (engines that take arrays):
#: its run's last id -- one backward step of the key -- plus the event's place in the batch's events
#: of that run.  Parameters: run ids, places, kinds, data, times.
APPEND_NUMBERED = (
    "INSERT INTO stream (run_id, id, kind, data, created_at) SELECT e.run_id, "
    "COALESCE((SELECT MAX(s.id) FROM stream s WHERE s.run_id = e.run_id), 0) + e.place, "
    "e.kind, e.data, e.created_at FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], "
    "?::double precision[]) AS e(run_id, place, kind, data, created_at)"
)

_INSERT_RESULT = (
    "INSERT INTO results (run_id, seq, idx, ok, blob, created_at) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT DO NOTHING"
)


class SqlStore(SqlCore):
    """The Store protocol over SQL; an engine subclasses it (see :mod:`agentrt.stores._sql.core`)."""

    # ------------------------------------------------------------------ checkpoints

    @translated
    def save_checkpoint(
        self,
        run_id: str,
        owner: str,
        seq: int,
        blob: bytes,
        pending: Any,
        events: list[EventRow],
        *,
        epoch: int | None = None,
        journal: Sequence[tuple[int, int, bool, bytes]] = (),
        code_required: str | None = None,
    ) -> None:
        """Store checkpoint ``seq``; ``journal`` holds ``(seq, idx, ok, blob)`` results to journal in the
        same transaction (the result that answered the previous request: one commit per step)."""
        now = time.time()
        pending_json = dumps(pending)
        head = self._head(run_id, seq, blob, False)
        fence = "" if epoch is None else " AND epoch = ?"
        with self._tx() as conn:
            # The common step -- the run is ours, running, with nothing to clear -- is fenced and
            # recorded by this one statement, which leaves the indexed columns out (naming them
            # rewrites their index entries, which cost as much as the rest of the step).
            cur = conn.execute(
                self._sql(
                    "UPDATE runs SET seq = ?, pending = ?, updated_at = ?, code_required = ?, head = ? "
                    f"WHERE run_id = ? AND lease_owner = ?{fence} AND status = 'running' "
                    "AND waiting_on IS NULL AND wake_at IS NULL"
                ),
                (
                    seq,
                    pending_json,
                    now,
                    code_required,
                    head,
                    run_id,
                    owner,
                    *(() if epoch is None else (epoch,)),
                ),
            )
            if cur.rowcount != 1:  # not ours (LeaseLost), or it was waiting: the general case
                self._check_owner(conn, run_id, owner, epoch)
                conn.execute(
                    self._sql(
                        "UPDATE runs SET seq = ?, pending = ?, status = 'running', waiting_on = NULL, "
                        "wake_at = NULL, updated_at = ?, code_required = ?, blocked = NULL, head = ? "
                        "WHERE run_id = ?"
                    ),
                    (seq, pending_json, now, code_required, head, run_id),
                )
            for r_seq, idx, ok, r_blob in journal:
                cur = conn.execute(
                    self._sql(_INSERT_RESULT), (run_id, r_seq, idx, bool(ok), pack(r_blob), now)
                )
                if cur.rowcount != 1:  # only a driver that lost its lease could meet this
                    raise self._journaled_twice(run_id, [(r_seq, idx)])
            conn.execute(
                self._sql(
                    "INSERT INTO checkpoints (run_id, seq, blob, pending, created_at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (run_id, seq) DO UPDATE SET blob = excluded.blob, "
                    "pending = excluded.pending, created_at = excluded.created_at"
                ),
                (run_id, seq, pack(blob), pending_json, now),
            )
            self._insert_events(conn, run_id, events, now)
            if prune_due(seq, self.retention):
                self._prune(conn, run_id, seq)

    def _journaled_twice(self, run_id: str, results: Sequence[tuple[int, int]]) -> StoreError:
        """Why a checkpoint whose journal holds a result already stored was refused (``results``:
        the ``(seq, member)`` it journals; only a driver that lost its lease meets this)."""
        which = ("" if len(results) == 1 else "one of ") + ", ".join(
            f"seq {seq} member {idx}" for seq, idx in results
        )
        return StoreError(
            f"store {self._label}: run {run_id!r} already has a result for {which}, journaled by "
            "another driver; nothing was written, and the run is driven again from its stored "
            "checkpoint and journal"
        )

    def _prune(self, conn: Any, run_id: str, seq: int) -> None:
        """Drop the checkpoints and journal entries older than the newest ``retention``."""
        if self.retention is not None and seq > self.retention:
            cutoff = seq - self.retention
            for table in ("checkpoints", "results", "replaced_checkpoints"):
                conn.execute(
                    self._sql(f"DELETE FROM {table} WHERE run_id = ? AND seq <= ?"), (run_id, cutoff)
                )

    def _next_event_n(self, conn: Any, run_id: str, seq: int) -> int:
        """The ``n`` of the next event recorded at ``seq`` (after those already there)."""
        (last_n,) = conn.execute(
            self._sql("SELECT max(n) FROM events WHERE run_id = ? AND seq = ?"), (run_id, seq)
        ).fetchone()
        return 0 if last_n is None else int(last_n) + 1

    @translated
    def rewrite_checkpoint(
        self,
        run_id: str,
        owner: str,
        seq: int,
        blob: bytes,
        pending: Any,
        event: tuple[str, str | None, Any],
        *,
        journal: Sequence[tuple[int, bool, bytes]] = (),
        code_required: str | None = None,
        epoch: int | None = None,
    ) -> int:
        now = time.time()
        pending_json = dumps(pending)
        with self._tx() as conn:
            status = self._check_owner(conn, run_id, owner, epoch)[1]
            (newest,) = conn.execute(
                self._sql("SELECT max(seq) FROM checkpoints WHERE run_id = ?"), (run_id,)
            ).fetchone()
            n = self._next_event_n(conn, run_id, seq)
            if newest is not None and seq == newest:
                conn.execute(
                    self._sql(
                        "INSERT INTO replaced_checkpoints (run_id, seq, n, blob, created_at) "
                        "SELECT run_id, seq, ?, blob, created_at FROM checkpoints "
                        "WHERE run_id = ? AND seq = ?"
                    ),
                    (n, run_id, seq),
                )
                conn.execute(
                    self._sql("UPDATE checkpoints SET blob = ?, pending = ? WHERE run_id = ? AND seq = ?"),
                    (pack(blob), pending_json, run_id, seq),
                )
                conn.execute(
                    self._sql("UPDATE runs SET code_required = ?, head = ? WHERE run_id = ?"),
                    (code_required, self._head(run_id, seq, blob, status in FINAL), run_id),
                )
            elif newest is None or seq > newest:
                for idx, ok, r_blob in journal:
                    conn.execute(self._sql(_INSERT_RESULT), (run_id, seq, idx, bool(ok), pack(r_blob), now))
                conn.execute(
                    self._sql(
                        "INSERT INTO checkpoints (run_id, seq, blob, pending, created_at) "
                        "VALUES (?, ?, ?, ?, ?)"
                    ),
                    (run_id, seq, pack(blob), pending_json, now),
                )
                conn.execute(
                    self._sql(
                        "UPDATE runs SET seq = ?, pending = ?, status = 'running', waiting_on = NULL, "
                        "wake_at = NULL, code_required = ?, updated_at = ?, blocked = NULL, output = NULL, "
                        "error = NULL, error_blob = NULL, head = ? WHERE run_id = ?"
                    ),
                    (seq, pending_json, code_required, now, self._head(run_id, seq, blob, False), run_id),
                )
            else:
                raise StoreError(
                    f"store {self._label}: run {run_id!r} has checkpoints up to {newest}; an upgrade "
                    f"rewrites the newest one or adds one after it, not checkpoint {seq}"
                )
            self._insert_events(conn, run_id, [(seq, n, *event)], now)
        return n

    @translated
    def block_run(
        self,
        run_id: str,
        owner: str,
        blocked: dict[str, Any],
        events: list[EventRow],
        *,
        epoch: int | None = None,
    ) -> bool:
        now = time.time()
        with self._tx() as conn:
            if self._check_owner_or_finished(conn, run_id, owner, epoch) is None:
                return False
            self._insert_events(conn, run_id, events, now)
            conn.execute(
                self._sql(
                    "UPDATE runs SET status = 'blocked', blocked = ?, waiting_on = NULL, wake_at = NULL, "
                    "lease_owner = NULL, lease_expires = NULL, updated_at = ? WHERE run_id = ?"
                ),
                (dumps(blocked), now, run_id),
            )
        return True

    @translated
    def reopen_run(
        self, run_id: str, owner: str, event: tuple[str, str | None, Any], *, epoch: int | None = None
    ) -> int:
        now = time.time()
        with self._tx() as conn:
            seq = self._check_owner(conn, run_id, owner, epoch)[3]
            n = self._next_event_n(conn, run_id, seq)
            # a finished run's row forgot its pending request; its checkpoint did not
            conn.execute(
                self._sql(
                    "UPDATE runs SET status = 'running', blocked = NULL, output = NULL, error = NULL, "
                    "error_blob = NULL, waiting_on = NULL, wake_at = NULL, updated_at = ?, head = ?, "
                    "pending = COALESCE((SELECT c.pending FROM checkpoints c WHERE c.run_id = ? "
                    "AND c.seq = ?), pending) WHERE run_id = ?"
                ),
                (now, self._head_at(conn, run_id, seq, False), run_id, seq, run_id),
            )
            self._insert_events(conn, run_id, [(seq, n, *event)], now)
        return n

    @translated
    def replaced_checkpoints(self, run_id: str) -> list[ReplacedCheckpoint]:
        rows = self._read(
            "SELECT seq, n, blob, created_at FROM replaced_checkpoints WHERE run_id = ? ORDER BY seq, n",
            (run_id,),
        )
        return [ReplacedCheckpoint(s, n, unpack(b), t) for s, n, b, t in rows]

    @translated
    def latest_checkpoint(self, run_id: str) -> tuple[int, bytes] | None:
        rows = self._read(
            "SELECT seq, blob FROM checkpoints WHERE run_id = ? ORDER BY seq DESC LIMIT 1", (run_id,)
        )
        return (rows[0][0], unpack(rows[0][1])) if rows else None

    @translated
    def get_checkpoint(self, run_id: str, seq: int) -> bytes | None:
        rows = self._read("SELECT blob FROM checkpoints WHERE run_id = ? AND seq = ?", (run_id, seq))
        return unpack(rows[0][0]) if rows else None

    @translated
    def list_checkpoints(self, run_id: str) -> list[CheckpointInfo]:
        rows = self._read(
            "SELECT seq, blob, created_at, pending FROM checkpoints WHERE run_id = ? ORDER BY seq", (run_id,)
        )  # the size of each blob, not of the row that keeps it (packing)
        return [
            CheckpointInfo(s, len(unpack(b)), t, load_json_or_damaged(p, "pending")) for s, b, t, p in rows
        ]

    # ------------------------------------------------------------------ journal

    @translated
    def put_result(
        self,
        run_id: str,
        seq: int,
        idx: int,
        ok: bool,
        blob: bytes,
        usage: dict[str, int] | None = None,
        *,
        owner: str | None = None,
        epoch: int | None = None,
    ) -> bool:
        now = time.time()
        with self._tx() as conn:
            # The run row is locked first: serializes with claims (fencing) and with set_waiting (wake-ups).
            row: tuple[Any, ...] | None
            if owner is not None:
                row = self._check_owner(conn, run_id, owner, epoch)
            else:
                try:
                    row = self._locked(conn, run_id)
                except RunNotFound:
                    row = None
            cur = conn.execute(self._sql(_INSERT_RESULT), (run_id, seq, idx, bool(ok), pack(blob), now))
            if cur.rowcount != 1:
                return False
            if row is None:
                return True
            _owner, status, _epoch, run_seq, pending, _cancel, total = row
            if usage:
                total = add_usage(json_column(total, "usage", run_id, self.location), usage)
                conn.execute(self._sql("UPDATE runs SET usage = ? WHERE run_id = ?"), (dumps(total), run_id))
            if status == RunStatus.WAITING and run_seq == seq:
                self._wake_if_answered(conn, run_id, seq, pending, now)
        return True

    def _wake_if_answered(self, conn: Any, run_id: str, seq: int, pending: object, now: float) -> None:
        """A parked run whose request at ``seq`` is now answered is due (``wake_at``), and said so."""
        if is_answered(json_column(pending, "pending", run_id, self.location), self._oks(conn, run_id, seq)):
            conn.execute(self._sql("UPDATE runs SET wake_at = ? WHERE run_id = ?"), (now, run_id))
            self._notify(conn)

    def _oks(self, conn: Any, run_id: str, seq: int) -> dict[int, bool]:
        rows = conn.execute(
            self._sql("SELECT idx, ok FROM results WHERE run_id = ? AND seq = ?"), (run_id, seq)
        ).fetchall()
        return {idx: bool(ok) for idx, ok in rows}

    @translated
    def get_results(self, run_id: str, seq: int) -> dict[int, tuple[bool, bytes]]:
        rows = self._read("SELECT idx, ok, blob FROM results WHERE run_id = ? AND seq = ?", (run_id, seq))
        return {idx: (bool(ok), unpack(blob)) for idx, ok, blob in rows}

    # ------------------------------------------------------------------ status

    @translated
    def set_waiting(
        self,
        run_id: str,
        owner: str,
        waiting_on: str,
        wake_at: float | None,
        events: list[EventRow],
        *,
        epoch: int | None = None,
    ) -> None:
        now = time.time()
        with self._tx() as conn:
            _owner, _status, _epoch, seq, pending, cancel, _usage = self._check_owner(
                conn, run_id, owner, epoch
            )
            pending = json_column(pending, "pending", run_id, self.location)
            if cancel or is_answered(pending, self._oks(conn, run_id, seq)):
                wake_at = now  # answered while the driver decided to park: a worker goes on with it
                self._notify(conn)
            self._prune(conn, run_id, seq)  # at rest, exactly the newest ``retention`` are kept
            self._insert_events(conn, run_id, events, now)
            conn.execute(
                self._sql(
                    "UPDATE runs SET status = 'waiting', waiting_on = ?, wake_at = ?, updated_at = ?, "
                    "blocked = NULL WHERE run_id = ?"
                ),
                (waiting_on, wake_at, now, run_id),
            )

    @translated
    def finish_run(
        self,
        run_id: str,
        owner: str,
        status: str,
        *,
        output: Any = None,
        error: dict[str, Any] | None = None,
        error_blob: bytes | None = None,
        events: list[EventRow] = (),  # type: ignore[assignment]  # an immutable empty default; never mutated
        epoch: int | None = None,
    ) -> bool:
        assert status in FINAL
        now = time.time()
        with self._tx() as conn:
            row = self._check_owner_or_finished(conn, run_id, owner, epoch)
            if row is None:
                return False
            self._prune(conn, run_id, row[3])  # at rest, exactly the newest ``retention`` are kept
            self._insert_events(conn, run_id, events, now)
            conn.execute(
                self._sql(
                    "UPDATE runs SET status = ?, output = ?, error = ?, error_blob = ?, pending = NULL, "
                    "waiting_on = NULL, blocked = NULL, wake_at = NULL, updated_at = ?, head = ? "
                    "WHERE run_id = ?"
                ),
                (
                    str(status),
                    dumps(output),
                    dumps(error),
                    error_blob,
                    now,
                    self._head_at(conn, run_id, row[3], True),
                    run_id,
                ),
            )
        return True

    # ------------------------------------------------------------------ events

    def _insert_events(self, conn: Any, run_id: str, events: list[EventRow], now: float) -> None:
        if events:
            self.dialect.executemany(
                conn,
                self._sql(
                    "INSERT INTO events (run_id, seq, n, kind, level, data, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
                ),
                [
                    (run_id, seq, n, kind, level, dumps(data) or "null", now)
                    for seq, n, kind, level, data in events
                ],
            )

    @translated
    def add_events(
        self, run_id: str, events: list[EventRow], *, owner: str | None = None, epoch: int | None = None
    ) -> None:
        with self._tx() as conn:
            if owner is not None:
                self._check_owner(conn, run_id, owner, epoch)
            self._insert_events(conn, run_id, events, time.time())

    @translated
    def list_events(self, run_id: str, limit: int | None = None) -> list[EventRecord]:
        if limit:
            rows = self._read(
                "SELECT seq, n, kind, level, data, created_at FROM (SELECT * FROM events WHERE run_id = ? "
                "ORDER BY seq DESC, n DESC LIMIT ?) e ORDER BY seq, n",
                (run_id, int(limit)),
            )
        else:
            rows = self._read(
                "SELECT seq, n, kind, level, data, created_at FROM events WHERE run_id = ? ORDER BY seq, n",
                (run_id,),
            )
        return [EventRecord(s, n, k, lv, load_json_or_damaged(d, "data"), t) for s, n, k, lv, d, t in rows]

    # ------------------------------------------------------------------ the durable stream, tenants

    @translated
    def append_stream(self, run_id: str, kind: str, data: Any) -> int:
        with self._statement() as conn:
            return self._append_one(conn, run_id, kind, stream_json(data), time.time())

    def _append_one(self, conn: Any, run_id: str, kind: str, data_json: str, created: float) -> int:
        """One event, numbered in the statement that inserts it.  Two writers appending to one run at
        once may compute the same id: the key makes the later one insert nothing, and it tries again
        with the id after (its own earlier inserts are visible to it, so its events keep their order)."""
        while True:
            rows = conn.execute(
                self._sql(
                    "INSERT INTO stream (run_id, id, kind, data, created_at) "
                    "SELECT ?, COALESCE(MAX(id), 0) + 1, ?, ?, ? FROM stream WHERE run_id = ? "
                    "ON CONFLICT (run_id, id) DO NOTHING RETURNING id"
                ),
                (run_id, kind, data_json, created, run_id),
            ).fetchall()
            if rows:
                return int(rows[0][0])

    @translated
    def append_streams(self, events: Sequence[StreamItem]) -> None:
        """Append ``(run_id, kind, data_json, created_at)`` events of one or more runs in one
        transaction, each run's in the order given after its last id (``Capability.BATCHED_STREAM``).

        Numbered from each run's last id: where the engine takes arrays, by the one statement that
        inserts them (:meth:`_append_numbered`: one round trip), elsewhere read first, in the same
        transaction (two statements, one commit).  A writer in another process that appended to one
        of these runs meanwhile took an id the batch meant to use: the key refuses the insert, nothing
        of the batch is written, and it is written again event by event, each numbered where it is
        inserted (:meth:`_append_one`)."""
        if not events:
            return
        try:
            if self.dialect.arrays:
                with self._statement() as conn:
                    self._append_numbered(conn, events)
                return
            newest, runs = newest_stream_ids(self.dialect, list(dict.fromkeys(e[0] for e in events)))
            with self._tx() as conn:
                last = dict(conn.execute(self._sql(newest), runs).fetchall())
                rows = []
                for run_id, kind, data_json, created in events:
                    last[run_id] = n = last.get(run_id, 0) + 1
                    rows.append((run_id, n, kind, data_json, created))
                self.dialect.insert_rows(conn, "stream", STREAM_COLUMNS, rows)
                return
        except self._conflict_errors:
            pass
        with self._tx() as conn:
            for event in events:
                self._append_one(conn, *event)

    def _append_numbered(self, conn: Any, events: Sequence[StreamItem]) -> None:
        """The batch in one statement where the engine takes arrays (one round trip, its own commit):
        each event is its run's last id plus its place among the batch's events of that run, the
        last ids read by the statement that inserts (it does not see its own rows)."""
        place: dict[str, int] = {}
        places = []
        for event in events:
            place[event[0]] = n = place.get(event[0], 0) + 1
            places.append(n)
        run_ids, kinds, data, created = zip(*events, strict=True)
        conn.execute(
            self._sql(APPEND_NUMBERED), [list(run_ids), places, list(kinds), list(data), list(created)]
        )

    @translated
    def read_stream(self, run_id: str, after: int = 0, limit: int | None = None) -> list[StreamEvent]:
        sql = "SELECT id, kind, data, created_at FROM stream WHERE run_id = ? AND id > ? ORDER BY id"
        params: tuple[Any, ...] = (run_id, int(after))
        if limit:
            sql += " LIMIT ?"
            params += (int(limit),)
        return [
            StreamEvent(i, k, load_json_or_damaged(d, "data"), t) for i, k, d, t in self._read(sql, params)
        ]

    @translated
    def set_tenant(self, run_id: str, tenant: str) -> None:
        with self._tx() as conn:
            conn.execute(
                self._sql("INSERT INTO tenants (run_id, tenant) VALUES (?, ?) ON CONFLICT DO NOTHING"),
                (run_id, tenant),
            )

    @translated
    def get_tenant(self, run_id: str) -> str | None:
        # a tenant row counts only beside its run (a squatted id of an older agentrt's does not)
        rows = self._read(
            "SELECT t.tenant FROM tenants t JOIN runs r ON r.run_id = t.run_id WHERE t.run_id = ?", (run_id,)
        )
        return rows[0][0] if rows else None

    @translated
    def tenant_runs(self, tenant: str) -> set[str]:
        rows = self._read(
            "SELECT t.run_id FROM tenants t JOIN runs r ON r.run_id = t.run_id WHERE t.tenant = ?", (tenant,)
        )
        return {r[0] for r in rows}

    # ------------------------------------------------------------------ the worker registry

    @translated
    def advertise_worker(self, info: WorkerInfo) -> None:
        info = bounded(info)
        now = time.time()
        with self._tx() as conn:
            conn.execute(
                self._sql(
                    "INSERT INTO workers (owner, host, pid, started_at, last_seen, info) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (owner) DO UPDATE SET host = excluded.host, "
                    "pid = excluded.pid, started_at = excluded.started_at, last_seen = excluded.last_seen, "
                    "info = excluded.info"
                ),
                (info.owner, info.host, info.pid, info.started_at, info.last_seen, to_json(info)),
            )
            if now - self._pruned_at >= PRUNE_EVERY_SECONDS:
                conn.execute(
                    self._sql(
                        "DELETE FROM workers WHERE owner IN "
                        "(SELECT owner FROM workers WHERE last_seen < ? LIMIT ?)"
                    ),
                    (now - PRUNE_AFTER_SECONDS, PRUNE_BATCH),
                )
                self._pruned_at = now

    @translated
    def list_workers(self) -> list[WorkerInfo]:
        rows = self._read(
            "SELECT owner, host, pid, started_at, last_seen, info FROM workers ORDER BY started_at, owner"
        )
        return [from_json(*row) for row in rows]

    @translated
    def forget_worker(self, owner: str) -> None:
        with self._tx() as conn:
            conn.execute(self._sql("DELETE FROM workers WHERE owner = ?"), (owner,))
