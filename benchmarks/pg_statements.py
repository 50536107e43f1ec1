"""What one PostgreSQL statement costs a worker's CPU, by how an event loop's tasks make it.

    python benchmarks/pg_statements.py                      # a throwaway cluster (tests/pgcluster.py)
    python benchmarks/pg_statements.py --url postgresql://...  # an existing server (a database is made)

100 tasks of one event loop (a worker's 100 runs at once) each make ``--per-task`` one-row UPDATEs,
one after another, three ways:

- ``threads``: each statement through a pool of 4 threads and 4 pooled connections (what the
  PostgreSQL store did for every call: the store is synchronous);
- ``async pool``: psycopg's ``AsyncConnectionPool`` of 4, each statement awaited on the loop;
- ``pipelined``: ``agentrt.stores._pg_pipeline.StatementPipeline`` -- the statements queued during
  one turn of the loop sent together on one async connection (a step's checkpoint, now).

Cells: the process's CPU (user + system) and wall time per statement, medians of ``--rounds``
interleaved rounds with min-max.  No result file: the numbers are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentrt.stores._pg_pipeline import StatementPipeline
from tests import pgcluster

TASKS = 100
SQL = "UPDATE t SET v = v + 1 WHERE id = %s"


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def timed(tasks: Callable[[int], Awaitable[None]]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the 100 tasks run at once."""
    wall, used = time.perf_counter(), cpu()
    await asyncio.gather(*(tasks(i) for i in range(TASKS)))
    return cpu() - used, time.perf_counter() - wall


async def through_threads(url: str, per_task: int) -> tuple[float, float]:
    pool = ConnectionPool(url, kwargs={"autocommit": True}, min_size=4, max_size=4, open=True)
    pool.wait()
    threads = ThreadPoolExecutor(4)
    loop = asyncio.get_running_loop()

    def one(i: int) -> None:
        with pool.connection() as conn:
            conn.execute(SQL, (i,))

    async def task(i: int) -> None:
        for _ in range(per_task):
            await loop.run_in_executor(threads, one, i)

    try:
        return await timed(task)
    finally:
        threads.shutdown()
        pool.close()


async def through_async_pool(url: str, per_task: int) -> tuple[float, float]:
    pool = AsyncConnectionPool(url, kwargs={"autocommit": True}, min_size=4, max_size=4, open=False)
    await pool.open(wait=True)

    async def task(i: int) -> None:
        for _ in range(per_task):
            async with pool.connection() as conn:
                await conn.execute(SQL, (i,))

    try:
        return await timed(task)
    finally:
        await pool.close()


async def pipelined(url: str, per_task: int) -> tuple[float, float]:
    async def connect() -> psycopg.AsyncConnection:
        return await psycopg.AsyncConnection.connect(url, autocommit=True)

    pipeline = StatementPipeline(connect, lambda exc: False)

    async def task(i: int) -> None:
        for _ in range(per_task):
            await pipeline.fetchone(SQL, (i,))

    try:
        return await timed(task)
    finally:
        await pipeline.aclose()


WAYS = {"threads": through_threads, "async pool": through_async_pool, "pipelined": pipelined}


@contextlib.contextmanager
def database(url: str | None) -> Iterator[str]:
    with contextlib.ExitStack() as stack:
        admin = url or stack.enter_context(pgcluster.cluster("-c fsync=off"))
        db = pgcluster.fresh_database(admin, "bench_statements")
        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)")
            conn.execute(f"INSERT INTO t SELECT g, 0 FROM generate_series(0, {TASKS - 1}) g")
        try:
            yield db
        finally:
            pgcluster.drop_database(admin, "bench_statements")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=None, help="an existing server's URL (default: a throwaway cluster)")
    parser.add_argument("--per-task", type=int, default=40, help="statements each of the 100 tasks makes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round of 5 statements a task")
    args = parser.parse_args()
    rounds, per_task = (1, 5) if args.quick else (args.rounds, args.per_task)
    samples: dict[str, list[tuple[float, float]]] = {way: [] for way in WAYS}
    if args.url is None and pgcluster.find_bindir() is None:
        raise SystemExit(
            "pg_statements.py needs a PostgreSQL server: pass --url postgresql://..., or install the "
            "server binaries (apt-get install postgresql; AGENTRT_PG_BIN names another directory) for "
            "a throwaway cluster"
        )
    with database(args.url) as url:
        for _ in range(rounds):
            for way, run in WAYS.items():
                used, wall = asyncio.run(run(url, per_task))
                samples[way].append((used / (TASKS * per_task), wall / (TASKS * per_task)))
    print(
        f"{TASKS} tasks x {per_task} statements, {rounds} rounds (median, min-max), "
        f"Python {sys.version.split()[0]}"
    )
    print("| way | worker CPU per statement | wall per statement |")
    print("|---|---:|---:|")
    for way, cells in samples.items():
        cpus, walls = [c for c, _ in cells], [w for _, w in cells]
        print(
            f"| {way} | {1e6 * statistics.median(cpus):.0f} us ({1e6 * min(cpus):.0f}-{1e6 * max(cpus):.0f}) "
            f"| {1e6 * statistics.median(walls):.0f} us ({1e6 * min(walls):.0f}-{1e6 * max(walls):.0f}) |"
        )


if __name__ == "__main__":
    main()
