"""DBOS side of benchmarks/workers.py: the same workflow as ``workers_agents:chain`` on DBOS.

Runs in the peers venv (benchmarks/.venv-peers, made by resume.py's ``ensure_peers_venv``), never
in agentrt's.  ``chain(steps, hold)`` makes ``steps`` sequential ``@DBOS.step`` calls (after one
``hold`` step that sleeps, for the recovery measurement), as ``workers_agents.chain`` makes tool
calls.

    python _dbos_worker.py worker URL EXECUTOR_ID   # a DBOS worker process: dequeues until SIGTERM
    python _dbos_worker.py submit URL PREFIX N STEPS [HOLD]   # enqueue N workflows (DBOSClient)
"""

from __future__ import annotations

import signal
import sys
import threading
import time

from dbos import DBOS, DBOSClient

QUEUE = "bench"
#: Like agentrt's worker --concurrency 32 in benchmarks/workers.py.
WORKER_CONCURRENCY = 32


def worker(url: str, executor_id: str) -> None:
    DBOS(
        config={
            "name": "agentrt-bench",
            "system_database_url": url,
            "run_admin_server": False,
            "executor_id": executor_id,
            "application_version": "bench",
        }
    )

    @DBOS.step()
    def bump(x: int) -> int:
        return x + 1

    @DBOS.step()
    def hold(seconds: float) -> float:
        time.sleep(seconds)
        return seconds

    @DBOS.workflow(name="chain")
    def chain(steps: int, hold_seconds: float = 0.0) -> int:
        if hold_seconds:
            hold(hold_seconds)
        n = 0
        for _ in range(steps):
            n = bump(n)
        return n

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    DBOS.launch()
    # DBOS's default polling interval (1 s): DBOS workers find queued work by polling.
    DBOS.register_queue(QUEUE, worker_concurrency=WORKER_CONCURRENCY)
    print("ready", flush=True)
    stop.wait()
    DBOS.destroy(workflow_completion_timeout_sec=5)


def submit(url: str, prefix: str, n: int, steps: int, hold_seconds: float) -> None:
    client = DBOSClient(system_database_url=url)
    try:
        for i in range(n):
            client.enqueue(
                {
                    "workflow_name": "chain",
                    "queue_name": QUEUE,
                    "workflow_id": f"{prefix}{i}",
                    "app_version": "bench",
                },
                steps,
                hold_seconds,
            )
    finally:
        client.destroy()


if __name__ == "__main__":
    kind, args = sys.argv[1], sys.argv[2:]
    if kind == "worker":
        worker(args[0], args[1])
    elif kind == "submit":
        submit(args[0], args[1], int(args[2]), int(args[3]), float(args[4]) if len(args) > 4 else 0.0)
    else:
        raise SystemExit(f"unknown mode {kind!r}")
