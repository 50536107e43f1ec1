"""The submitter of benchmarks/workers.py's agentrt points, run with the checkout under test.

    python _agentrt_submit.py STORE_URL SPEC PREFIX RUNS STEPS    # (cwd and PYTHONPATH: that checkout)

It opens the store (making or migrating its schema as that checkout's agentrt does), prints
``ready`` and waits for a line on stdin; then it creates the ``queued`` runs and prints
``created``.  Given another line it prints how many of the runs completed with the expected
output.  Run as a subprocess of the checkout the workers run (``--baseline``), so that the
runs of a before/after are made and read by the same agentrt as drives them -- a newer agentrt
would migrate the store under an older worker.
"""

from __future__ import annotations

import sys

from agentrt.stores import NewRun, open_store


def main() -> None:
    url, spec, prefix, runs, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    store = open_store(url)
    try:
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range(runs):
            store.create_run(NewRun(f"{prefix}{i}", spec, {"steps": steps}, status="queued"))
        print("created", flush=True)
        sys.stdin.readline()
        done = [r for r in store.list_runs(status="completed") if r.run_id.startswith(prefix)]
        print(sum(r.output == {"n": steps} for r in done), flush=True)
    finally:
        store.close()


if __name__ == "__main__":
    main()
