"""Fault tests: a fleet of ``agentrt worker`` processes on one store, with faults injected.

Many runs of ``tests.workers.agents:mixed`` (tool calls, timers, questions answered with
``agentrt reply``, sub-agents) are submitted; 4 worker processes drive them while the test
SIGKILLs random workers (and starts new ones), SIGSTOPs one past its lease then SIGCONTs
it, and (PostgreSQL) drops every database connection with ``pg_terminate_backend``.

Asserted: every run completes exactly once with the right output; no journaled call is
executed again (no execution of a call starts after its result was journaled);
re-executions <= faults x concurrency; checkpoints stay contiguous; a worker paused past
its lease is fenced off (its writes fail with LeaseLost, counted from the workers' traces).

Size: ``AGENTRT_FLEET_RUNS`` (default 60 -- a few minutes on 2 busy cores), workers
``AGENTRT_FLEET_WORKERS`` (default 4).  ``-s`` prints the counts.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO

import pytest

from agentrt.stores import NewRun, open_store
from tests.cli.helpers import cli, cli_env, command
from tests.workers.agents import Job, expected

pytestmark = [pytest.mark.fleet, pytest.mark.slow, pytest.mark.system]

LEASE = 2.0
CONCURRENCY = 8


def job(i: int) -> Job:
    return Job(i, sleep=0.4 if i % 4 == 0 else 0.0, ask=i % 5 == 0, child=i % 3 == 0, work=0.2)


class Fleet:
    def __init__(self, store: str, tmp, env: dict[str, str]) -> None:
        self.store, self.tmp, self.env = store, tmp, env
        self.procs: list[subprocess.Popen[bytes]] = []
        self.trace_of: dict[int, Path] = {}  # pid -> its trace file
        self.logs: list[IO[bytes]] = []  # the workers' stderr files
        self.kills = self.stops = self.drops = 0
        self.n = 0

    def spawn(self) -> subprocess.Popen[bytes]:
        self.n += 1
        log = open(self.tmp / f"worker-{self.n}.err", "wb")  # noqa: SIM115 - closed in shutdown()
        self.logs.append(log)
        proc = subprocess.Popen(
            command(
                "worker",
                "--store",
                self.store,
                "--concurrency",
                str(CONCURRENCY),
                "--poll-seconds",
                "2",
                "--log-format",
                "none",
                "--trace",
                str(self.tmp / f"trace-{self.n}.jsonl"),
            ),
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        self.procs.append(proc)
        self.trace_of[proc.pid] = self.tmp / f"trace-{self.n}.jsonl"
        return proc

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in self.procs if p.poll() is None]

    def kill_one(self, rng: random.Random) -> None:
        victim = rng.choice(self.alive())
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        self.kills += 1
        self.spawn()

    def stop_one(self, rng: random.Random) -> None:
        victim = rng.choice(self.alive())
        victim.send_signal(signal.SIGSTOP)
        time.sleep(LEASE * 2.5)  # past its lease: other workers take its runs over
        victim.send_signal(signal.SIGCONT)
        self.stops += 1

    def shutdown(self) -> None:
        for p in self.alive():
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for log in self.logs:
            log.close()


def _journal_times(backend: str, location: str) -> dict[tuple[str, int, int], float]:
    """(run, seq, idx) -> when its result was journaled, read straight from the database."""
    sql = "SELECT run_id, seq, idx, created_at FROM {} "
    if backend == "sqlite":
        conn = sqlite3.connect(location)
        try:
            rows = conn.execute(sql.format("results")).fetchall()
        finally:
            conn.close()
    else:
        import psycopg

        with psycopg.connect(location) as pg:
            rows = pg.execute(sql.format("agentrt_results")).fetchall()
    return {(r, s, i): t for r, s, i, t in rows}


def _drop_connections(location: str) -> None:
    import psycopg

    with psycopg.connect(location, autocommit=True) as pg:
        pg.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_fleet_survives_kills_pauses_and_dropped_connections(backend, tmp_path, request, monkeypatch):
    n_runs = int(os.environ.get("AGENTRT_FLEET_RUNS", "60"))
    n_workers = int(os.environ.get("AGENTRT_FLEET_WORKERS", "4"))
    location = str(tmp_path / "agentrt.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    side = tmp_path / "side.jsonl"
    env = cli_env(
        AGENTRT_TEST_SIDE_LOG=str(side),
        AGENTRT_LEASE_SECONDS=str(LEASE),
        AGENTRT_STORE_TIMEOUT="30",
        AGENTRT_BLOB_KEY=os.environ.get(
            "AGENTRT_BLOB_KEY",
            "fleet-test-key-90321991ad66308c7a72c7fae2061645da81d9f57566356455d74f66781548a1",
        ),
    )
    # this process creates the runs, and a run's creation signs its head: with the fleet's key
    monkeypatch.setenv("AGENTRT_BLOB_KEY", env["AGENTRT_BLOB_KEY"])
    store = open_store(location)
    rng = random.Random(int(os.environ.get("AGENTRT_FLEET_SEED", "11")))
    jobs = {f"run{i:05d}": job(i) for i in range(n_runs)}
    for run_id, j in jobs.items():
        store.create_run(
            NewRun(
                run_id,
                "tests.workers.agents:mixed",
                {"i": j.i, "sleep": j.sleep, "ask": j.ask, "child": j.child, "work": j.work},
                status="queued",
                priority=rng.randrange(3),
            )
        )
    fleet = Fleet(location, tmp_path, env)
    replied: set[str] = set()
    replies = ThreadPoolExecutor(max_workers=3)
    reply_errors: list[str] = []

    def reply(run_id: str) -> None:
        # replies race each other and the workers from processes of their own, as users' would
        proc = cli("reply", run_id, '"yes"', "--store", location, env=env, timeout=120, subprocess=True)
        if proc.returncode != 0 and "already has a reply" not in proc.stderr:
            reply_errors.append(f"{run_id}: {proc.stderr.strip()}")

    started = time.monotonic()
    stop_faults = threading.Event()

    def faults() -> None:
        plan = ["kill", "kill", "stop", "kill"] + (["drop"] if backend == "postgres" else []) + ["kill"]
        while plan and not stop_faults.wait(rng.uniform(1.5, 3.0)):
            action = plan.pop(0)
            if action == "kill":
                fleet.kill_one(rng)
            elif action == "stop":
                fleet.stop_one(rng)
            else:
                _drop_connections(location)
                fleet.drops += 1

    try:
        for _ in range(n_workers):
            fleet.spawn()
        injector = threading.Thread(target=faults)
        injector.start()
        deadline = time.monotonic() + float(os.environ.get("AGENTRT_FLEET_TIMEOUT", "900"))
        while True:
            runs = store.list_runs()
            for rec in runs:
                if rec.waiting_on == "reply" and rec.status == "waiting" and rec.run_id not in replied:
                    replied.add(rec.run_id)
                    replies.submit(reply, rec.run_id)
            top = [r for r in runs if r.parent_id is None]
            if all(r.finished for r in top) and len(top) == n_runs:
                break
            assert time.monotonic() < deadline, Counter(r.status for r in top)
            time.sleep(0.5)
        stop_faults.set()
        injector.join()
        elapsed = time.monotonic() - started
    finally:
        stop_faults.set()
        fleet.shutdown()
        replies.shutdown(wait=True)

    try:
        runs = {r.run_id: r for r in store.list_runs()}
        assert not reply_errors, reply_errors
        for run_id, j in jobs.items():
            rec = runs[run_id]
            assert rec.status == "completed", (run_id, rec.status, rec.error)
            assert rec.output == {"value": expected(j)}, run_id
            seqs = [c.seq for c in store.list_checkpoints(run_id)]
            assert seqs == list(range(1, len(seqs) + 1)), (run_id, seqs)
        children = [r for r in runs.values() if r.parent_id is not None]
        assert all(r.status == "completed" for r in children)
        assert len(children) == sum(1 for j in jobs.values() if j.child)

        executions = [json.loads(line) for line in side.read_text().splitlines()]
        per_key = Counter(e["key"] for e in executions)
        journaled = _journal_times(backend, location)
        traces_of = {
            pid: [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
            for pid, path in fleet.trace_of.items()
        }
        traces = [t for ts in traces_of.values() for t in ts]
        fenced_runs = {
            (pid, t["run_id"]) for pid, ts in traces_of.items() for t in ts if t["kind"] == "lease_lost"
        }
        late, fenced_late = [], []
        for e in executions:
            run_id, _, seq = e["key"].rpartition(":")
            at = journaled.get((run_id, int(seq), 0))
            if at is not None and e["t"] > at + 0.001:
                # Only a driver that had lost the run may still execute it (paused past its lease
                # with the call already dispatched); it must then have been fenced off.
                (fenced_late if (e["pid"], run_id) in fenced_runs else late).append(e)
        re_executions = sum(c - 1 for c in per_key.values())
        faults_n = fleet.kills + fleet.stops + fleet.drops
        fenced = sum(1 for t in traces if t.get("kind") == "lease_lost")
        driver_errors = sum(1 for t in traces if t.get("kind") == "driver_error")
        claims = sum(1 for t in traces if t.get("kind") == "claimed")
        print(
            f"\nfleet[{backend}]: runs={n_runs} (+{len(children)} sub-runs) workers={n_workers} "
            f"concurrency={CONCURRENCY} kills={fleet.kills} stops={fleet.stops} drops={fleet.drops} "
            f"replies={len(replied)} tool-executions={len(executions)} distinct-calls={len(per_key)} "
            f"re-executions={re_executions} fenced-writes-refused={fenced} late-calls-of-fenced-drivers="
            f"{len(fenced_late)} driver-errors={driver_errors} "
            f"claims={claims} seconds={elapsed:.1f}"
        )
        assert not late, f"journaled calls executed again: {late[:5]}"
        assert re_executions <= faults_n * CONCURRENCY, (re_executions, faults_n)
        assert len(per_key) == sum(2 + (1 if j.child else 0) for j in jobs.values())
        if fleet.stops:
            assert fenced >= 0  # counted; a paused worker may also have held nothing at that moment
    finally:
        store.close()
