"""The PostgreSQL store's checkpoint statement: a durable step's every write in one statement.

Made by :meth:`PostgresStore.save_checkpoint` on a pooled connection, and by
:meth:`PostgresStore.save_checkpoint_pipelined` in a pipeline of the loop's statements
(:mod:`agentrt.stores._pg_pipeline`): the same text and parameters either way.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any  # Any: a pending request is JSON data

from agentrt.stores._rows import dumps
from agentrt.stores._sql.packing import pack
from agentrt.stores.base import EventRow, prune_due

__all__ = ["checkpoint_statement"]


def checkpoint_statement(
    run_id: str,
    owner: str,
    seq: int,
    blob: bytes,
    pending: Any,
    events: list[EventRow],
    epoch: int | None,
    journal: Sequence[tuple[int, int, bool, bytes]],
    code_required: str | None,
    *,
    retention: int | None,
    head: str,
) -> tuple[str, dict[str, Any]]:
    """A checkpoint's one statement and its parameters: the fenced UPDATE of the run row feeds the
    checkpoint's insert and every other write, so none lands unless the writer still holds the
    lease at its epoch; its one row is the number of run rows it fenced (0: not this writer's
    lease, or no run).  One statement: one round trip, its own transaction."""
    now = time.time()
    pending_json = dumps(pending)
    # Old checkpoints and results are pruned in batches (see prune_due), here in the same statement.
    cutoff = seq - retention if retention is not None and prune_due(seq, retention) else None
    params: dict[str, Any] = {
        "run": run_id, "owner": owner, "epoch": epoch, "seq": seq, "blob": pack(blob),
        "pending": pending_json, "now": now, "cutoff": cutoff, "code": code_required,
        "head": head,
    }  # fmt: skip
    if events:
        params.update(
            eseq=[e[0] for e in events], en=[e[1] for e in events], ekind=[e[2] for e in events],
            elevel=[e[3] for e in events], edata=[dumps(e[4]) or "null" for e in events],
        )  # fmt: skip
    if len(journal) == 1:  # the common step: one result; scalars cost psycopg a fifth of arrays
        ((jseq, jidx, jok, jblob),) = journal
        params.update(jseq=jseq, jidx=jidx, jok=bool(jok), jblob=pack(jblob))
    else:
        params.update(jseq=[j[0] for j in journal], jidx=[j[1] for j in journal])
        params.update(jok=[bool(j[2]) for j in journal], jblob=[pack(j[3]) for j in journal])
    gc = (
        ", gc1 AS (DELETE FROM agentrt_checkpoints WHERE run_id IN (SELECT run_id FROM fenced) "
        "AND seq <= %(cutoff)s), gc2 AS (DELETE FROM agentrt_results "
        "WHERE run_id IN (SELECT run_id FROM fenced) AND seq <= %(cutoff)s), "
        "gc3 AS (DELETE FROM agentrt_replaced_checkpoints "
        "WHERE run_id IN (SELECT run_id FROM fenced) AND seq <= %(cutoff)s) "
        if cutoff is not None
        else " "
    )
    events_cte = (
        ", ev AS (INSERT INTO agentrt_events (run_id, seq, n, kind, level, data, created_at) "
        "SELECT f.run_id, e.seq, e.n, e.kind, e.level, e.data, %(now)s FROM fenced f, "
        "unnest(%(eseq)s::int[], %(en)s::int[], %(ekind)s::text[], %(elevel)s::text[], "
        "%(edata)s::text[]) AS e(seq, n, kind, level, data) ON CONFLICT DO NOTHING)"
        if events
        else ""
    )
    # The journal (the results that led here) is inserted by the same statement, without ON
    # CONFLICT: a result already there (a driver that lost its lease wrote it) fails the whole
    # statement, so nothing of it is written.
    journal_cte = (
        ""
        if not journal
        else ", jr AS (INSERT INTO agentrt_results (run_id, seq, idx, ok, blob, created_at) "
        "SELECT f.run_id, %(jseq)s::int, %(jidx)s::int, %(jok)s::bool, %(jblob)s::bytea, %(now)s "
        "FROM fenced f)"
        if len(journal) == 1
        else ", jr AS (INSERT INTO agentrt_results (run_id, seq, idx, ok, blob, created_at) "
        "SELECT f.run_id, j.seq, j.idx, j.ok, j.blob, %(now)s FROM fenced f, "
        "unnest(%(jseq)s::int[], %(jidx)s::int[], %(jok)s::bool[], %(jblob)s::bytea[]) "
        "AS j(seq, idx, ok, blob))"
    )
    sql = (
        "WITH fenced AS (UPDATE agentrt_runs SET seq = %(seq)s, pending = %(pending)s, "
        "status = 'running', waiting_on = NULL, wake_at = NULL, updated_at = %(now)s, "
        "code_required = %(code)s, blocked = NULL, head = %(head)s "
        "WHERE run_id = %(run)s AND lease_owner = %(owner)s "
        "AND (%(epoch)s::bigint IS NULL OR epoch = %(epoch)s::bigint) RETURNING run_id), "
        "ck AS (INSERT INTO agentrt_checkpoints (run_id, seq, blob, pending, created_at) "
        "SELECT run_id, %(seq)s, %(blob)s, %(pending)s, %(now)s FROM fenced "
        "ON CONFLICT (run_id, seq) DO UPDATE SET blob = EXCLUDED.blob, pending = EXCLUDED.pending, "
        f"created_at = EXCLUDED.created_at){journal_cte}{events_cte}{gc}SELECT count(*) FROM fenced"
    )
    return sql, params
