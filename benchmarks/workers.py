"""Workers: throughput of a fleet, recovery latency, and database statements per durable step.

    python benchmarks/workers.py            # full: 1, 2, 4 workers x SQLite, PostgreSQL
    python benchmarks/workers.py --quick    # smoke (CI): SQLite, 1 worker, a few runs; no timing claims

(a) Throughput: W ``agentrt worker`` processes are started and left idle; then N runs of
    ``workers_agents:chain`` (``steps`` sequential tool calls, so ``steps + 1`` durable steps
    each) are submitted as ``queued``; runs/s and durable steps/s from the first submit to the
    last finish.
(b) Recovery latency: a worker drives a run inside a long tool call and is SIGKILLed while a
    second worker idles; the time from the kill to the run's next checkpoint (same machine: the
    dead owner pid is seen at the second worker's next claim, which it makes at its poll).
(c) Statements per durable step: one in-process worker drives runs; SQLite statements are
    counted with ``set_trace_callback``; for PostgreSQL the committed transactions
    (``pg_stat_database.xact_commit``) are counted.

PostgreSQL: ``AGENTRT_BENCH_PG_URL`` or a throwaway cluster (tests/pgcluster.py).  DBOS is not
compared in this version.  Results: ``benchmarks/results/workers[-quick].json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

from agentrt import Runtime  # noqa: E402
from agentrt.stores import NewRun, open_store  # noqa: E402

SPEC = "workers_agents:chain"


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(HERE), str(ROOT), out.get("PYTHONPATH", "")])
    out.setdefault("AGENTRT_BLOB_KEY", "benchmark-key")
    out["AGENTRT_LEASE_SECONDS"] = "5"
    return out


def worker(store: str, poll: float = 5.0) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentrt", "worker", "--store", store, "--concurrency", "32",
         "--poll-seconds", str(poll), "--log-format", "none"],
        env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
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


def throughput(store_url: str, n_workers: int, runs: int, steps: int) -> dict[str, Any]:
    store = open_store(store_url)
    try:
        prefix = f"w{n_workers}-{time.time_ns()}-"
        procs = [worker(store_url) for _ in range(n_workers)]
        time.sleep(3.0)  # the workers are up and idle: process start-up is not measured
        started = time.monotonic()
        for i in range(runs):
            store.create_run(NewRun(f"{prefix}{i}", SPEC, {"steps": steps}, status="queued"))
        try:
            while True:
                done = [r for r in store.list_runs(status="completed") if r.run_id.startswith(prefix)]
                if len(done) == runs:
                    break
                if time.monotonic() - started > 600:
                    raise TimeoutError(f"{len(done)}/{runs} runs done after 600 s")
                time.sleep(0.05)
            seconds = time.monotonic() - started
        finally:
            stop(procs)
        assert all(r.output == {"n": steps} for r in done)
        return {
            "workers": n_workers,
            "runs": runs,
            "steps_per_run": steps + 1,
            "seconds": round(seconds, 3),
            "runs_per_s": round(runs / seconds, 1),
            "durable_steps_per_s": round(runs * (steps + 1) / seconds, 1),
        }
    finally:
        store.close()


def recovery(store_url: str, poll: float) -> dict[str, Any]:
    store = open_store(store_url)
    try:
        run_id = f"recover-{time.time_ns()}"
        victim = worker(store_url, poll)
        time.sleep(1.0)
        store.create_run(NewRun(run_id, SPEC, {"steps": 2, "hold": 60.0}, status="queued"))
        while (store.get_run(run_id).lease_owner or "").split("/")[1:2] != [str(victim.pid)]:
            time.sleep(0.01)
        time.sleep(0.3)  # inside the 60 s tool call
        survivor = worker(store_url, poll)
        time.sleep(2.0)  # the survivor is up and idle
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
        return {"poll_seconds": poll, "kill_to_claim_s": round(claimed, 3), "seq_at_kill": seq_before}
    finally:
        store.close()


def statements_per_step(store_url: str, runs: int, steps: int) -> dict[str, Any]:
    store = open_store(store_url)
    counted = {"n": 0}
    postgres = store_url.startswith("postgresql://")

    def xacts() -> int:
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as conn:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            row = conn.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
            ).fetchone()
            return int(row[0])

    if not postgres:
        store._conn.set_trace_callback(lambda sql: counted.__setitem__("n", counted["n"] + 1))  # type: ignore[attr-defined]
    from workers_agents import chain

    before = xacts() if postgres else 0
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
        if not postgres:
            store._conn.set_trace_callback(None)  # type: ignore[attr-defined]
        store.close()
    total_steps = runs * (steps + 1)
    if postgres:
        time.sleep(0.6)  # statistics are reported by the backends with a small delay
        n = xacts() - before
        what = "transactions"
    else:
        n = counted["n"]
        what = "statements"
    return {what: n, "durable_steps": total_steps, f"{what}_per_step": round(n / total_steps, 2),
            "seconds": round(seconds, 3)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke mode: SQLite, 1 worker, few runs")
    parser.add_argument("--runs", type=int, default=None, help="runs per throughput point (default 400)")
    args = parser.parse_args()
    runs, steps = (20, 3) if args.quick else (400, 10)
    runs = args.runs or runs
    results: dict[str, Any] = {"python": sys.version.split()[0], "cores": os.cpu_count(), "backends": {}}
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="agentrt-bench-"))
        backends = {"sqlite": f"sqlite:///{tmp}/bench.db"}
        if not args.quick:
            url = os.environ.get("AGENTRT_BENCH_PG_URL")
            if url is None:
                try:
                    from tests import pgcluster

                    url = stack.enter_context(pgcluster.cluster())
                except (FileNotFoundError, RuntimeError) as exc:
                    print(f"PostgreSQL skipped: {exc}", file=sys.stderr)
            if url:
                os.environ.setdefault("AGENTRT_BLOB_KEY", "benchmark-key")
                backends["postgres"] = url
        for name, url in backends.items():
            out: dict[str, Any] = {"throughput": []}
            for n_workers in (1,) if args.quick else (1, 2, 4):
                row = throughput(url, n_workers, runs, steps)
                out["throughput"].append(row)
                print(f"{name}: {json.dumps(row)}", flush=True)
            out["per_step"] = statements_per_step(url, 5 if args.quick else 50, steps)
            print(f"{name}: {json.dumps(out['per_step'])}", flush=True)
            if not args.quick:
                out["recovery"] = [recovery(url, poll) for poll in (5.0, 1.0)]
                print(f"{name}: {json.dumps(out['recovery'])}", flush=True)
            results["backends"][name] = out
    path = HERE / "results" / f"workers{'-quick' if args.quick else ''}.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
