"""One batch of stream events against a long stream: how numbering a batch scales with the store.

    python benchmarks/stream_batch.py                       # SQLite, a temporary file
    python benchmarks/stream_batch.py --store postgresql://...  # (a shared store needs AGENTRT_BLOB_KEY)

A batch numbers each run's events after that run's newest stream id.  The store read those ids
with ``run_id IN/ANY (...) GROUP BY run_id`` (every event of the runs listed, and on PostgreSQL,
once its statistics misjudged the list, a scan of the whole table); it now takes one backward step
of the ``(run_id, id)`` key per run (``agentrt.stores._sql.store.newest_stream_ids``).  Both
statements run here, interleaved, in the same store: 1,000 runs whose streams hold ``--events``
events in all, then batches of 100 runs with one event each (a worker's batch), timed whole (read
and insert, one transaction).  Cells: the median ms per batch over ``--rounds`` rounds of 5 batches,
with min-max.  No result file: the numbers are printed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import agentrt.stores._sql.store as sql_store
from agentrt.stores import NewRun, open_store
from agentrt.stores._sql.dialect import Dialect

RUNS = 1000
BATCH = 100


def grouped_statement(dialect: Dialect, run_ids: list[str]) -> tuple[str, list[Any]]:
    """The statement before: every event of the runs listed, grouped."""
    cond, params = dialect.one_of("run_id", run_ids)
    return f"SELECT run_id, COALESCE(MAX(id), 0) FROM stream WHERE {cond} GROUP BY run_id", params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--store", default=None, help="a store URL or path (default: a temporary SQLite file)"
    )
    parser.add_argument("--events", type=int, default=400_000, help="events in the stream before timing")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(args.store or str(Path(tmp) / "stream.db"))
        runs = [f"bench-{i}" for i in range(RUNS)]
        for run_id in runs:
            store.create_run(NewRun(run_id, "bench:agent", {}))
        for _ in range(0, args.events // RUNS, 20):
            store.append_streams([(run_id, "log", "{}", 0.0) for _ in range(20) for run_id in runs])
        statements = {
            "before (grouped)": grouped_statement,
            "after (key step per run)": sql_store.newest_stream_ids,
        }
        times: dict[str, list[float]] = {name: [] for name in statements}
        for rnd in range(args.rounds):
            batch = runs[(rnd * BATCH) % (RUNS - BATCH) :][:BATCH]
            for name, statement in statements.items():
                sql_store.newest_stream_ids = statement  # type: ignore[assignment]  # the A/B switch
                started = time.perf_counter()
                for _ in range(5):
                    store.append_streams([(run_id, "log", "{}", 0.0) for run_id in batch])
                times[name].append((time.perf_counter() - started) / 5 * 1e3)
        store.close()
    print(f"{type(store).__name__}, {args.events:,} events in {RUNS:,} runs, batches of {BATCH} runs:")
    for name, cells in times.items():
        print(
            f"  {name:<26} {statistics.median(cells):7.2f} ms per batch [{min(cells):.2f}-{max(cells):.2f}]"
        )


if __name__ == "__main__":
    main()
