"""Workers: throughput of a fleet, recovery latency and database statements per durable step,
agentrt on SQLite and PostgreSQL beside DBOS on the same PostgreSQL cluster.

    python benchmarks/workers.py            # full: 1, 2, 4 workers x agentrt-SQLite, agentrt-PostgreSQL, DBOS
    python benchmarks/workers.py --quick    # smoke (CI): SQLite, 1 worker, a few runs; no timing claims
    python benchmarks/workers.py --recovery-only   # (b) alone: agentrt-SQLite, agentrt-PostgreSQL, DBOS

The workflow: ``workers_agents:chain`` (``steps`` sequential durable tool calls, so ``steps + 1``
durable steps per run: each call's result, and the run's end) and, for DBOS,
``_dbos_worker.chain`` (``steps`` ``@DBOS.step`` calls in one ``@DBOS.workflow``: each step's
output, and the workflow's end).

(a) Throughput: W worker processes (``agentrt worker --concurrency 32``; DBOS workers with a queue
    of ``worker_concurrency=32``) are started and left idle; then N runs are submitted (agentrt:
    ``queued`` rows; DBOS: ``DBOSClient.enqueue``); runs/s and durable steps/s from the first
    submit to the last finish.  On PostgreSQL the same window's statements are counted with
    ``pg_stat_statements`` (every statement of every worker and of the submitter, BEGIN/COMMIT
    included, less the benchmark's own progress polls) and its transactions with
    ``pg_stat_database.xact_commit``: statements and transactions per durable step.
(b) Recovery latency: a worker drives a run inside a long step and is SIGKILLed.  agentrt, at its
    default settings (``--poll-seconds`` 5, a lease of 10 s): a second, idle worker takes the run
    over (same machine: a waiting worker checks the pids of the lease owners of its machine every
    0.1 s, whatever its poll; on PostgreSQL also every owner's session lock, so a worker of another
    machine -- simulated: its lease owner names another host -- is seen dead as fast; see
    docs/deploy.md).  DBOS recovers
    a dead executor's workflows only when a process with the same executor id starts again (or
    through DBOS Conductor): measured (i) with an idle survivor only, (ii) restarting the killed
    executor at once, as a supervisor would.  "Moving again": agentrt, the survivor holds the
    run's lease; DBOS, the workflow's ``recovery_attempts`` went up (it is executing again).
(c) SQLite statements per durable step: one in-process worker drives runs; statements are
    counted with ``set_trace_callback``.

Like for like (issue 16): agentrt-PostgreSQL and DBOS run on the same cluster with the same
settings; agentrt-SQLite at its default durability (WAL, ``synchronous=NORMAL``); each system with
its default retention.  ``--rounds`` (default 3) interleaved rounds of every point, rotated so no
system always runs first; cells are medians with the IQR and min-max.

PostgreSQL: ``AGENTRT_BENCH_PG_URL`` (a server with pg_stat_statements loaded) or a throwaway
cluster (tests/pgcluster.py).  DBOS runs in benchmarks/.venv-peers (made by ``make bench``'s
set-up, like resume.py's).  Results, in the results folder (benchmarks/_env.py):
``workers[-quick].json``, ``workers.png`` and the table in ``workers.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

import _env  # noqa: E402  (benchmarks/_env.py: the results folder)

from agentrt import Runtime  # noqa: E402
from agentrt.stores import NewRun, open_store  # noqa: E402

SPEC = "workers_agents:chain"
#: One key for the benchmark's own process (it creates the runs, which signs their heads) and its
#: workers: a store's clients need the key its workers verify with.
BENCH_KEY = "benchmark-key-926f08afae1f31d412721b54c740579e48331b295778bd07a10b289474186411"


#: Runs each worker drives at once (``--concurrency``).
CONCURRENCY = {"n": 32}


def env(root: Path = ROOT) -> dict[str, str]:
    """The workers' environment; ``root``: the checkout whose ``agentrt`` they import (``--baseline``)."""
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(HERE), str(root), out.get("PYTHONPATH", "")])
    out.setdefault("AGENTRT_BLOB_KEY", BENCH_KEY)
    out.pop("AGENTRT_LEASE_SECONDS", None)  # the default lease
    return out


#: ``python -c`` for ``agentrt worker`` as if on another machine: its lease owner names another host,
#: so no worker here can check its pid (only its PostgreSQL session says it died).
ELSEWHERE = (
    "import sys, agentrt.stores.base as b; b._HOST = 'elsewhere.example'; "
    "from agentrt.cli import main; sys.argv[0] = 'agentrt'; raise SystemExit(main())"
)


def worker(
    store: str, poll: float = 5.0, root: Path = ROOT, elsewhere: bool = False
) -> subprocess.Popen[bytes]:
    entry = ["-c", ELSEWHERE] if elsewhere else ["-m", "agentrt"]
    return subprocess.Popen(
        [sys.executable, *entry, "worker", "--store", store, "--concurrency", str(CONCURRENCY["n"]),
         "--poll-seconds", str(poll), "--log-format", "none"],
        env=env(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=root,  # `-m` puts the working directory first on sys.path: it must be root's checkout
    )  # fmt: skip


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


PG_SETTINGS = "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"


class PgCounter:
    """Statements (``pg_stat_statements``) and commits (``pg_stat_database``) of one database, read
    from the cluster's admin database (so the counter's own queries are not counted)."""

    def __init__(self, admin_url: str, db_url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(admin_url, autocommit=True)
        self.conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        self.db = db_url.rsplit("/", 1)[1]

    def read(self) -> tuple[int, int]:
        self.conn.execute("SELECT pg_stat_clear_snapshot()")
        row = self.conn.execute(
            "SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s "
            "JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = %s), "
            "(SELECT xact_commit FROM pg_stat_database WHERE datname = %s)",
            (self.db, self.db),
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def close(self) -> None:
        self.conn.close()


def wait_done(count: Callable[[], int], runs: int, started: float, what: str) -> tuple[float, int]:
    """Poll ``count`` until it reaches ``runs``; (seconds since ``started``, polls made)."""
    polls = 0
    while True:
        polls += 1
        done = count()
        if done >= runs:
            return time.monotonic() - started, polls
        if time.monotonic() - started > 900:
            raise TimeoutError(f"{what}: {done}/{runs} runs done after 900 s")
        time.sleep(0.05)


def row(system: str, n_workers: int, runs: int, steps: int, seconds: float) -> dict[str, Any]:
    return {
        "system": system,
        "workers": n_workers,
        "runs": runs,
        "steps_per_run": steps + 1,
        "seconds": round(seconds, 3),
        "runs_per_s": round(runs / seconds, 1),
        "durable_steps_per_s": round(runs * (steps + 1) / seconds, 1),
    }


def read_after(counter: PgCounter) -> tuple[int, int]:
    """Statements now (pg_stat_statements is current); commits a moment later (the backends report
    them to pg_stat_database with a delay of up to a second)."""
    statements = counter.read()[0]
    time.sleep(1.1)
    return statements, counter.read()[1]


def add_counts(out: dict[str, Any], before: tuple[int, int], after: tuple[int, int], polls: int) -> None:
    durable = out["runs"] * out["steps_per_run"]
    statements = after[0] - before[0] - polls  # less the benchmark's own progress polls
    xacts = after[1] - before[1] - polls
    out["statements_per_step"] = round(statements / durable, 2)
    out["transactions_per_step"] = round(xacts / durable, 2)


def throughput(
    store_url: str,
    n_workers: int,
    runs: int,
    steps: int,
    counter: PgCounter | None = None,
    root: Path = ROOT,
    label: str = "",
) -> dict[str, Any]:
    """Runs/s and durable steps/s of ``n_workers`` workers of checkout ``root``.  The runs are made
    and checked by the same checkout (benchmarks/_agentrt_submit.py), and this process reads the
    store only with plain SQL: a before/after never has one agentrt migrate the other's store."""
    postgres = store_url.startswith("postgresql://")
    prefix = f"w{n_workers}-{time.time_ns()}-"
    submitter = subprocess.Popen(
        [sys.executable, str(HERE / "_agentrt_submit.py"), store_url, SPEC, prefix, str(runs), str(steps)],
        env=env(root), cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert submitter.stdin is not None and submitter.stdout is not None
    procs: list[subprocess.Popen[bytes]] = []
    poller: Any = None
    try:
        if submitter.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the submitter of {root} did not start (exit {submitter.wait()})")
        procs = [worker(store_url, root=root) for _ in range(n_workers)]
        time.sleep(3.0)  # the workers are up and idle: process start-up is not measured
        if postgres:
            import psycopg

            poller = psycopg.connect(store_url, autocommit=True)
            sql = "SELECT count(*) FROM agentrt_runs WHERE status = 'completed' AND starts_with(run_id, %s)"
        else:
            import sqlite3

            poller = sqlite3.connect(store_url.removeprefix("sqlite:///"), timeout=30)
            sql = "SELECT count(*) FROM runs WHERE status = 'completed' AND instr(run_id, ?) = 1"

        def count() -> int:
            return int(poller.execute(sql, (prefix,)).fetchone()[0])

        before = counter.read() if counter else (0, 0)
        started = time.monotonic()
        submitter.stdin.write("go\n")
        submitter.stdin.flush()
        if submitter.stdout.readline().strip() != "created":
            raise RuntimeError(f"the submitter of {root} failed (exit {submitter.wait()})")
        seconds, polls = wait_done(count, runs, started, f"agentrt {n_workers} workers")
        after = read_after(counter) if counter else (0, 0)
        submitter.stdin.write("check\n")
        submitter.stdin.flush()
        assert int(submitter.stdout.readline()) == runs, "runs completed with a wrong output"
    finally:
        stop(procs)
        if poller is not None:
            poller.close()
        submitter.kill()
        submitter.wait()
    system = ("agentrt-postgres" if postgres else "agentrt-sqlite") + label
    out = row(system, n_workers, runs, steps, seconds)
    out["concurrency"] = CONCURRENCY["n"]
    if counter:
        add_counts(out, before, after, polls)
    return out


# ------------------------------------------------------------------------------- DBOS


def dbos_worker(python: str, url: str, executor: str) -> subprocess.Popen[str]:
    log = tempfile.TemporaryFile()  # noqa: SIM115 - the worker writes to it for its whole life
    proc = subprocess.Popen(
        [python, str(HERE / "_dbos_worker.py"), "worker", url, executor],
        stdout=subprocess.PIPE, stderr=log, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        proc.kill()
        code = proc.wait()
        log.seek(0)
        raise RuntimeError(f"the DBOS worker {executor} did not start (exit {code}): {log.read()[-1500:]!r}")
    return proc


def dbos_submit(python: str, url: str, prefix: str, runs: int, steps: int, hold: float = 0.0) -> None:
    subprocess.run(
        [python, str(HERE / "_dbos_worker.py"), "submit", url, prefix, str(runs), str(steps), str(hold)],
        check=True, capture_output=True,
    )  # fmt: skip


def dbos_throughput(
    python: str, url: str, n_workers: int, runs: int, steps: int, counter: PgCounter
) -> dict[str, Any]:
    import psycopg

    prefix = f"dbos-w{n_workers}-{time.time_ns()}-"
    procs = [dbos_worker(python, url, f"bench-{n_workers}-{i}") for i in range(n_workers)]
    poller = psycopg.connect(url, autocommit=True)
    sql = (
        "SELECT count(*) FROM dbos.workflow_status "
        "WHERE status = 'SUCCESS' AND starts_with(workflow_uuid, %s)"
    )
    try:
        time.sleep(1.0)
        before = counter.read()
        started = time.monotonic()
        dbos_submit(python, url, prefix, runs, steps)
        seconds, polls = wait_done(
            lambda: int(poller.execute(sql, (prefix,)).fetchone()[0]),  # type: ignore[index]
            runs, started, f"DBOS {n_workers} workers",
        )  # fmt: skip
        after = read_after(counter)
        outputs = poller.execute(
            "SELECT output FROM dbos.workflow_status WHERE starts_with(workflow_uuid, %s)", (prefix,)
        ).fetchall()
        assert len(outputs) == runs
    finally:
        poller.close()
        stop(procs)  # type: ignore[arg-type]
    out = row("dbos-postgres", n_workers, runs, steps, seconds)
    add_counts(out, before, after, polls)
    return out


def dbos_recovery(python: str, url: str, restart: bool, give_up: float = 20.0) -> dict[str, Any]:
    """Kill the DBOS worker driving a workflow inside a 60 s step; with ``restart`` start a process
    with the killed executor's id at once, else leave only an idle survivor."""
    import psycopg

    run_id = f"dbos-recover-{time.time_ns()}"
    victim = dbos_worker(python, url, "victim" + run_id[-6:])
    conn = psycopg.connect(url, autocommit=True)
    sql = "SELECT status, executor_id, recovery_attempts FROM dbos.workflow_status WHERE workflow_uuid = %s"
    procs = [victim]
    try:
        dbos_submit(python, url, run_id, 1, 2, hold=60.0)
        run_id += "0"
        waited = time.monotonic()
        while True:
            got = conn.execute(sql, (run_id,)).fetchone()
            if got and got[0] == "PENDING" and got[1].startswith("victim"):
                break
            if time.monotonic() - waited > 60:
                raise TimeoutError(f"the DBOS victim did not start the workflow: {got}")
            time.sleep(0.01)
        if not restart:
            procs.append(dbos_worker(python, url, "survivor" + run_id[-7:]))
            time.sleep(1.0)  # the survivor is up and idle
        time.sleep(0.3)  # inside the 60 s step
        attempts = got[2]
        victim.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        victim.wait()
        if restart:
            procs.append(dbos_worker(python, url, got[1]))
        while True:
            now = conn.execute(sql, (run_id,)).fetchone()
            assert now is not None
            if now[2] > attempts:
                moving: float | None = round(time.monotonic() - killed, 3)
                break
            if time.monotonic() - killed > give_up:
                moving = None
                break
            time.sleep(0.005)
    finally:
        conn.close()
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    how = "restart of the killed executor" if restart else "idle survivor only"
    return {"system": "dbos-postgres", "how": how, "kill_to_moving_s": moving, "gave_up_after_s": give_up}


def recovery(store_url: str, poll: float = 5.0, elsewhere: bool = False) -> dict[str, Any]:
    """Kill the agentrt worker driving a run inside a 60 s tool call, an idle survivor up (both at
    the default settings: ``poll`` is ``agentrt worker``'s default); ``elsewhere``: the killed
    worker's lease owner names another host (PostgreSQL: only its session says it died)."""
    store = open_store(store_url)
    try:
        run_id = f"recover-{time.time_ns()}"
        victim = worker(store_url, poll, elsewhere=elsewhere)
        time.sleep(1.0)
        store.create_run(NewRun(run_id, SPEC, {"steps": 2, "hold": 60.0}, status="queued"))
        while (store.get_run(run_id).lease_owner or "").split("/")[1:2] != [str(victim.pid)]:
            time.sleep(0.01)
        time.sleep(0.3)  # inside the 60 s tool call
        survivor = worker(store_url, poll)
        time.sleep(3.0)  # the survivor is up and idle
        seq_before = store.get_run(run_id).seq
        victim.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        victim.wait()
        try:
            while True:
                rec = store.get_run(run_id)
                if rec.lease_owner and rec.lease_owner.split("/")[1] == str(survivor.pid):
                    claimed = time.monotonic() - killed
                    break
                if time.monotonic() - killed > 120:
                    raise TimeoutError("the run was not taken over within 120 s")
                time.sleep(0.005)
        finally:
            stop([survivor])
        system = "agentrt-postgres" if store_url.startswith("postgresql://") else "agentrt-sqlite"
        how = f"idle survivor, default settings (poll {poll:g} s, lease 10 s)"
        if elsewhere:
            how += ", the killed worker on another machine (simulated: its owner names another host)"
        return {"system": system, "how": how, "poll_seconds": poll,
                "kill_to_moving_s": round(claimed, 3), "seq_at_kill": seq_before}  # fmt: skip
    finally:
        store.close()


def sqlite_statements_per_step(store_url: str, runs: int, steps: int) -> dict[str, Any]:
    store = open_store(store_url)
    counted = {"n": 0}
    store._conn.set_trace_callback(lambda sql: counted.__setitem__("n", counted["n"] + 1))  # type: ignore[attr-defined]
    from workers_agents import chain

    try:
        rt_start = time.monotonic()

        async def drive() -> None:
            async with Runtime(store, poll_seconds=0.2) as rt:
                ids = [await rt.start(chain, {"steps": steps}) for _ in range(runs)]
                for run_id in ids:
                    await rt.wait(run_id, timeout=600)

        asyncio.run(drive())
        seconds = time.monotonic() - rt_start
    finally:
        store._conn.set_trace_callback(None)  # type: ignore[attr-defined]
        store.close()
    total_steps = runs * (steps + 1)
    return {
        "statements": counted["n"],
        "durable_steps": total_steps,
        "statements_per_step": round(counted["n"] / total_steps, 2),
        "seconds": round(seconds, 3),
    }


# ------------------------------------------------------------------------------- report

#: The durability each system runs at (issue 16: like for like).
DURABILITY = {
    "agentrt-sqlite": "SQLite WAL, synchronous=NORMAL (the default)",
    "agentrt-postgres": "PostgreSQL, the benchmark's cluster (fsync=off), synchronous_commit=on",
    "dbos-postgres": "PostgreSQL, the same cluster and settings",
}


def spread(samples: list[float]) -> dict[str, Any]:
    """Median, interquartile range and min-max of one cell's samples (one per round)."""
    ordered = sorted(samples)
    if len(ordered) >= 4:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1, q3 = ordered[0], ordered[-1]
    return {"median": statistics.median(ordered), "q1": q1, "q3": q3, "min": ordered[0],
            "max": ordered[-1], "samples": samples}  # fmt: skip


def merge_throughput(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One point's rounds: the medians, with the spread of the rates."""
    out = dict(rows[0])
    out["rounds"] = len(rows)
    for key in (
        "seconds",
        "runs_per_s",
        "durable_steps_per_s",
        "statements_per_step",
        "transactions_per_step",
    ):
        if key in out:
            cell = spread([r[key] for r in rows])
            out[key] = round(cell["median"], 2)
            if key in ("runs_per_s", "durable_steps_per_s"):
                out[f"{key}_spread"] = cell
    out["durability"] = DURABILITY.get(out["system"].split("@")[0], "")
    return out


def merge_recovery(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One recovery setting's rounds: the median of those that recovered, and how many did not."""
    out = dict(rows[0])
    took = [r["kill_to_moving_s"] for r in rows if r["kill_to_moving_s"] is not None]
    out["rounds"] = len(rows)
    out["not_recovered"] = len(rows) - len(took)
    out["kill_to_moving_s"] = round(statistics.median(took), 3) if took else None
    if took:
        out["kill_to_moving_spread"] = spread(took)
    return out


def _cell(row: dict[str, Any], key: str) -> str:
    value = row[key]
    s = row.get(f"{key}_spread")
    rounds = row.get("rounds", 1)
    if not s or rounds < 2:
        return f"{value}"
    if rounds < 4:  # no quartiles to speak of: the range
        return f"{value} ({s['min']:.1f}–{s['max']:.1f})"
    return f"{value} [{s['q1']:.1f}–{s['q3']:.1f}] ({s['min']:.1f}–{s['max']:.1f})"


def table(results: dict[str, Any]) -> str:
    rounds = results.get("rounds", 1)
    lines = [
        f"Each cell: the median of {rounds} interleaved round{'s' if rounds != 1 else ''}"
        + (" [IQR] (min–max)" if rounds >= 4 else " (min–max)" if rounds > 1 else "")
        + "; every system at the durability shown.",
        "",
        "| system | durability | workers | runs/s | durable steps/s | statements / step "
        "| transactions / step |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in results["throughput"]:
        lines.append(
            f"| {r['system']} | {DURABILITY.get(r['system'].split('@')[0], '')} | {r['workers']} | "
            f"{_cell(r, 'runs_per_s')} | "
            f"{_cell(r, 'durable_steps_per_s')} | {r.get('statements_per_step', '')} | "
            f"{r.get('transactions_per_step', '')} |"
        )
    lines += ["", "| recovery | how | kill -> run moving again (median) | rounds |", "|---|---|---:|---:|"]
    for r in results["recovery"]:
        took = r["kill_to_moving_s"]
        shown = f"{took} s" if took is not None else f"not within {r['gave_up_after_s']:g} s"
        if took is not None and r.get("not_recovered"):
            shown += f" ({r['not_recovered']} not within {r['gave_up_after_s']:g} s)"
        s = r.get("kill_to_moving_spread")
        if s and r.get("rounds", 1) > 1:
            shown += f" [{s['min']:.2f}–{s['max']:.2f}]"
        lines.append(f"| {r['system']} | {r['how']} | {shown} | {r.get('rounds', 1)} |")
    sqlite = results.get("sqlite_per_step")
    if sqlite:
        lines += ["", f"agentrt-SQLite statements per durable step (in-process, set_trace_callback): "
                      f"{sqlite['statements_per_step']}"]  # fmt: skip
    return "\n".join(lines) + "\n"


def plot(results_path: Path, png: Path) -> str:
    """The plot, drawn in an interpreter with matplotlib (the peers venv); the reason if none."""
    python = HERE / ".venv-peers" / "bin" / "python"
    if not python.exists():
        return "no benchmarks/.venv-peers (matplotlib)"
    proc = subprocess.run(
        [str(python), str(HERE / "_plot_workers.py"), str(results_path), str(png)],
        capture_output=True,
        text=True,
    )
    return "ok" if proc.returncode == 0 else proc.stderr.strip()[-500:]


def main() -> int:
    os.environ.setdefault("AGENTRT_BLOB_KEY", BENCH_KEY)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke mode: SQLite, 1 worker, few runs")
    parser.add_argument("--runs", type=int, default=None, help="runs per throughput point (default 400)")
    parser.add_argument(
        "--rounds", type=int, default=None, help="interleaved rounds of every point (default 3; quick 1)"
    )
    parser.add_argument(
        "--systems",
        default="sqlite,postgres,dbos",
        help="comma-separated: sqlite (agentrt), postgres (agentrt), dbos (default: all three)",
    )
    parser.add_argument(
        "--workers", default=None, help="comma-separated worker counts per point (default 1,2,4; quick 1)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=32, help="runs each worker drives at once (default 32)"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="DIR",
        help="also run agentrt's points with the agentrt package of DIR (e.g. an exported older commit), "
        "labelled @baseline, interleaved on the same server: a before/after in one run",
    )
    parser.add_argument("--no-recovery", action="store_true", help="throughput points only")
    parser.add_argument("--recovery-only", action="store_true", help="recovery points only (b)")
    args = parser.parse_args()
    systems = set(args.systems.split(","))
    runs, steps = (20, 3) if args.quick else (400, 10)
    runs = args.runs or runs
    rounds = args.rounds or (1 if args.quick else 3)
    fleet = (1,) if args.quick else (1, 2, 4)
    if args.workers:
        fleet = tuple(int(n) for n in args.workers.split(","))
    CONCURRENCY["n"] = args.concurrency
    variants: list[tuple[Path, str]] = [(ROOT, "")]
    if args.baseline is not None:
        variants.append((args.baseline.resolve(), "@baseline"))
    command = " ".join(["python benchmarks/workers.py", *sys.argv[1:]])
    results: dict[str, Any] = {
        "python": sys.version.split()[0], "cores": os.cpu_count(), "runs": runs, "steps": steps,
        "rounds": rounds, "command": command, "durability": DURABILITY, "throughput": [], "recovery": [],
    }  # fmt: skip
    # Every measurement of every system is a point; the rounds interleave them all, so a change of
    # load on the shared machine falls on every system alike.
    points: list[tuple[tuple[str, int], Callable[[], dict[str, Any]]]] = []
    recoveries: list[tuple[tuple[str, str], Callable[[], dict[str, Any]]]] = []
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="agentrt-bench-"))
        sqlite_url = f"sqlite:///{tmp}/bench.db"
        if "sqlite" in systems or args.quick:
            for n in () if args.recovery_only else fleet:
                for root, label in variants:
                    points.append(
                        (
                            ("agentrt-sqlite" + label, n),
                            lambda n=n, root=root, label=label: throughput(
                                f"sqlite:///{tmp}/bench{label[1:]}.db", n, runs, steps, root=root, label=label
                            ),
                        )
                    )
            if not args.quick and not args.no_recovery:
                recoveries.append((("agentrt-sqlite", "default"), lambda: recovery(sqlite_url)))
            if not args.recovery_only:
                results["sqlite_per_step"] = sqlite_statements_per_step(  # a count: the same in every round
                    f"sqlite:///{tmp}/per-step.db", 5 if args.quick else 50, steps
                )
                print(json.dumps(results["sqlite_per_step"]), flush=True)
        if not args.quick and systems & {"postgres", "dbos"}:
            admin = os.environ.get("AGENTRT_BENCH_PG_URL")
            if admin is None:
                try:
                    from tests import pgcluster

                    admin = stack.enter_context(pgcluster.cluster(PG_SETTINGS))
                except (FileNotFoundError, RuntimeError) as exc:
                    print(f"PostgreSQL skipped: {exc}", file=sys.stderr)
            if admin:
                postgres(admin, runs, steps, results, systems, fleet, points, recoveries, stack, variants)
                if args.no_recovery:
                    recoveries.clear()
                if args.recovery_only:
                    points.clear()
        samples: dict[Any, list[dict[str, Any]]] = {}
        for r in range(rounds):
            shift = r % len(points) if points else 0
            for key, measure in points[shift:] + points[:shift]:
                samples.setdefault(("t", key), []).append(measure())
                print(f"round {r + 1}/{rounds}: {json.dumps(samples['t', key][-1])}", flush=True)
            shift = r % len(recoveries) if recoveries else 0
            for key, measure in recoveries[shift:] + recoveries[:shift]:
                samples.setdefault(("r", key), []).append(measure())
                print(f"round {r + 1}/{rounds}: {json.dumps(samples['r', key][-1])}", flush=True)
        results["throughput"] = [merge_throughput(samples["t", key]) for key, _ in points]
        results["recovery"] = [merge_recovery(samples["r", key]) for key, _ in recoveries]
    results["table"] = table(results)
    complete = len(systems) == 3 and args.baseline is None and not args.workers and not args.no_recovery
    complete = complete and not args.recovery_only
    complete = complete and args.concurrency == 32
    name = "workers-quick" if args.quick else "workers" if complete else "workers-partial"
    name = "workers-recovery" if args.recovery_only else name
    path = _env.results_dir() / f"{name}.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(results["table"])
    print(f"wrote {path}")
    if name == "workers":
        (path.parent / "workers.md").write_text(
            f"# Workers: agentrt beside DBOS\n\n`{results['command']}` -- {runs} runs of {steps} steps, "
            f"{rounds} interleaved rounds, Python {results['python']}, {results['cores']} cores, one machine "
            "(a throwaway PostgreSQL cluster, fsync off, for agentrt and DBOS alike).\n\n"
            "![workers](workers.png)\n\n" + results["table"]
        )
        print(f"plot: {plot(path, path.parent / 'workers.png')}")
    return 0


def postgres(
    admin: str,
    runs: int,
    steps: int,
    results: dict[str, Any],
    systems: set[str],
    fleet: tuple[int, ...],
    points: list[tuple[tuple[str, int], Callable[[], dict[str, Any]]]],
    recoveries: list[tuple[tuple[str, str], Callable[[], dict[str, Any]]]],
    stack: contextlib.ExitStack,
    variants: list[tuple[Path, str]],
) -> None:
    """Add the PostgreSQL points (agentrt, then DBOS on the same cluster) to ``points``."""
    from tests import pgcluster

    if "postgres" in systems:
        url = pgcluster.fresh_database(admin, "bench_agentrt")
        for root, label in variants:  # a database per checkout: each agentrt keeps its own schema
            db_url = pgcluster.fresh_database(admin, "bench_agentrt" + label.replace("@", "_"))
            counter = PgCounter(admin, db_url)
            stack.callback(counter.close)
            for n in fleet:
                points.append(
                    (
                        ("agentrt-postgres" + label, n),
                        lambda n=n, root=root, label=label, db_url=db_url, counter=counter: throughput(
                            db_url, n, runs, steps, counter, root=root, label=label
                        ),
                    )
                )
        recoveries.append((("agentrt-postgres", "default"), lambda: recovery(url)))
        recoveries.append((("agentrt-postgres", "elsewhere"), lambda: recovery(url, elsewhere=True)))
    if "dbos" not in systems:
        return
    sys.path.insert(0, str(HERE))
    import resume

    python, why = resume.ensure_peers_venv()
    if python is None:
        results["dbos_skipped"] = why
        print(f"DBOS skipped: {why}", file=sys.stderr)
        return
    dbos_url = pgcluster.fresh_database(admin, "bench_dbos")
    dbos_counter = PgCounter(admin, dbos_url)
    stack.callback(dbos_counter.close)
    for n in fleet:
        points.append(
            (
                ("dbos-postgres", n),
                lambda n=n: dbos_throughput(python, dbos_url, n, runs, steps, dbos_counter),
            )
        )
    for restart in (False, True):
        recoveries.append(
            (
                ("dbos-postgres", f"{restart}"),
                lambda restart=restart: dbos_recovery(python, dbos_url, restart),
            )
        )


if __name__ == "__main__":
    sys.exit(main())
