"""The cost of one durable step (a tool call through ``Runtime`` on SQLite), beside its floor.

    python benchmarks/step.py            # full: 9 interleaved rounds of 400 calls per row
    python benchmarks/step.py --quick    # smoke: 2 rounds of 40 calls (proves it works; no ratio asserted)

Rows, all in the same process and the same interleaved rounds, at each durability setting
(``synchronous=NORMAL`` and ``synchronous=FULL``, both in WAL mode -- the columns):

* **agentrt async tool**: an agent whose loop awaits an ``async def`` tool N times; per call =
  (time of the N-call run - time of a 0-call run) / N, so starting and finishing a run is not
  counted.  The store is a fresh ``SqliteStore`` with the default retention (100).
* **agentrt sync tool**: the same with a plain ``def`` tool (run on agentrt's thread pool).
* **floor: plain sqlite3**: the same two transactions per call with the same blob sizes (the
  journal entry's and the checkpoint's, read back from the agentrt run's store), with the standard
  library's ``sqlite3``, WAL, at the same ``synchronous`` setting: ``INSERT`` the result,
  ``COMMIT``; ``INSERT`` the checkpoint + ``UPDATE`` the run's row, ``COMMIT``.
* **tool called directly** (async and sync) and **a bare thread hop**
  (``loop.run_in_executor`` of a no-op on a one-thread pool): the parts no runtime can remove.

Targets (issue 16): async tool <= 2x the floor; sync tool <= 2.5x the floor + a bare thread hop.
Every cell is the median over rounds with the interquartile range and min-max.  The statements
and commits agentrt issues per call are counted with ``sqlite3``'s trace callback.

Results: ``step-<python>[-quick].json`` in the results folder (benchmarks/_env.py).

    python benchmarks/step.py --instructions   # CPU instructions per call (callgrind), load-proof

``--instructions`` runs each row (agentrt async, sync and inline at NORMAL, and the floor) in a
fresh process under ``valgrind --tool=callgrind`` with 0 and N calls (``PYTHONHASHSEED=0``, so
dicts lay out alike) and reports the difference per call, with what the checkpoint encode
(``_pickle`` dumps), SQLite's statements and the JSON encoder take of it.  Instruction counts
leave out the kernel's writes, so they are a before/after measure, not the ratio to the floor.
Results: ``benchmarks/results/step-instructions-<python>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
import _env  # noqa: E402  (benchmarks/_env.py: the results folder, the no-install switch)

RESULTS = _env.results_dir()
TARGET_ASYNC = 2.0
TARGET_SYNC = 2.5
DURABILITY = ("NORMAL", "FULL")

import attrs  # noqa: E402

from agentrt import Task, agent, tool  # noqa: E402


@tool
async def async_step(i: int) -> dict[str, Any]:
    """One step: returns a small dict."""
    return {"i": i, "ok": True}


@tool
def sync_step(i: int) -> dict[str, Any]:
    """One step, as a plain function: returns a small dict."""
    return {"i": i, "ok": True}


@tool(inline=True)
def inline_step(i: int) -> dict[str, Any]:
    """One step, as a plain function called on the loop's thread (``@tool(inline=True)``)."""
    return {"i": i, "ok": True}


@attrs.frozen
class StepInput:
    n: int
    sync: bool = False
    inline: bool = False


@attrs.frozen
class StepOutput:
    acc: int


async def step_run(input: StepInput, task: Task) -> StepOutput:
    acc = 0
    for i in range(input.n):
        if input.inline:
            result = await task.tools.inline_step(i=i)
        elif input.sync:
            result = await task.tools.sync_step(i=i)
        else:
            result = await task.tools.async_step(i=i)
        acc += result["i"]
    return StepOutput(acc)


step_agent = agent(
    input=StepInput, output=StepOutput, tools=[async_step, sync_step, inline_step], run=step_run, name="step"
)


def _agent() -> Any:
    from agentrt._sdk.agent import load_agent

    return load_agent("benchmarks.step:step_agent")  # checkpoints name a real module


# ------------------------------------------------------------------------------------ agentrt


async def _agentrt_run(
    db: Path, n: int, sync: bool, synchronous: str, trace: Counter[str] | None, inline: bool = False
) -> float:
    from agentrt import Runtime
    from agentrt.stores import SqliteStore

    store = SqliteStore(db, synchronous=synchronous)  # the default retention
    if trace is not None:
        store._conn.set_trace_callback(lambda sql: trace.update([sql.split()[0].upper()]))  # type: ignore[union-attr]
    async with Runtime(store, step_budget_seconds=None) as rt:
        t0 = time.perf_counter()
        run_id = await rt.start(_agent(), {"n": n, "sync": sync, "inline": inline})
        out = await rt.wait(run_id, timeout=600)
        elapsed = time.perf_counter() - t0
    store.close()
    assert out.acc == n * (n - 1) // 2, out
    return elapsed


def agentrt_per_call(
    work: Path, n: int, sync: bool, synchronous: str, tag: str, inline: bool = False
) -> float:
    empty = asyncio.run(_agentrt_run(work / f"{tag}-0.db", 0, sync, synchronous, None, inline))
    full = asyncio.run(_agentrt_run(work / f"{tag}-n.db", n, sync, synchronous, None, inline))
    return (full - empty) / n


def statements_per_call(work: Path, n: int, sync: bool) -> dict[str, float]:
    base: Counter[str] = Counter()
    asyncio.run(_agentrt_run(work / "trace-0.db", 0, sync, "NORMAL", base))
    full: Counter[str] = Counter()
    asyncio.run(_agentrt_run(work / "trace-n.db", n, sync, "NORMAL", full))
    per = {k: (full[k] - base[k]) / n for k in full}
    return {k: round(v, 2) for k, v in sorted(per.items()) if v}


def blob_sizes(db: Path) -> tuple[int, int]:
    """Mean journal-entry and checkpoint blob sizes of an agentrt store."""
    conn = sqlite3.connect(db)
    try:
        ckpt = conn.execute("SELECT avg(length(blob)) FROM checkpoints").fetchone()[0]
        cols = [r[1] for r in conn.execute("PRAGMA table_info(results)")]
        col = next((c for c in ("value", "blob", "payload", "data") if c in cols), None)
        result = conn.execute(f"SELECT avg(length({col})) FROM results").fetchone()[0] if col else 64
        return int(result or 64), int(ckpt or 0)
    finally:
        conn.close()


# ------------------------------------------------------------------------------------ floor


def floor_per_call(
    db: Path, n: int, synchronous: str, result_size: int, ckpt_size: int, one_tx: bool = False
) -> float:
    """Two transactions per call with plain sqlite3: the journal entry, then the checkpoint
    (``one_tx``: both in one transaction, as agentrt writes a step since issue 16 -- shown beside
    the issue's two-transaction floor, which the targets keep)."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, seq INTEGER)")
    conn.execute(
        "CREATE TABLE results (run_id TEXT, seq INTEGER, idx INTEGER, blob BLOB, "
        "PRIMARY KEY (run_id, seq, idx))"
    )
    conn.execute("CREATE TABLE checkpoints (run_id TEXT, seq INTEGER, blob BLOB, PRIMARY KEY (run_id, seq))")
    conn.execute("INSERT INTO runs VALUES ('r', 0)")
    result_blob, ckpt_blob = os.urandom(result_size), os.urandom(ckpt_size)
    t0 = time.perf_counter()
    for seq in range(1, n + 1):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO results VALUES ('r', ?, 0, ?)", (seq, result_blob))
        if not one_tx:
            conn.execute("COMMIT")
            conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO checkpoints VALUES ('r', ?, ?)", (seq, ckpt_blob))
        conn.execute("UPDATE runs SET seq = ? WHERE run_id = 'r'", (seq,))
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - t0
    conn.close()
    return elapsed / n


# ------------------------------------------------------------------------------------ direct


def direct_async_per_call(n: int) -> float:
    fn = async_step.fn

    async def loop() -> float:
        t0 = time.perf_counter()
        for i in range(n):
            await fn(i=i)
        return time.perf_counter() - t0

    return asyncio.run(loop()) / n


def direct_sync_per_call(n: int) -> float:
    fn = sync_step.fn
    t0 = time.perf_counter()
    for i in range(n):
        fn(i=i)
    return (time.perf_counter() - t0) / n


def thread_hop_per_call(n: int) -> float:
    def noop() -> None:
        return None

    async def loop() -> float:
        running = asyncio.get_running_loop()
        with ThreadPoolExecutor(max_workers=1) as pool:
            await running.run_in_executor(pool, noop)  # the thread exists before the clock starts
            t0 = time.perf_counter()
            for _ in range(n):
                await running.run_in_executor(pool, noop)
            return time.perf_counter() - t0

    return asyncio.run(loop()) / n


# ------------------------------------------------------------------------------------ main


def spread(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    q1, q3 = (
        (statistics.quantiles(ordered, n=4, method="inclusive")[::2])
        if len(ordered) >= 4
        else (ordered[0], ordered[-1])
    )
    return {
        "median_us": statistics.median(ordered) * 1e6,
        "q1_us": q1 * 1e6,
        "q3_us": q3 * 1e6,
        "min_us": ordered[0] * 1e6,
        "max_us": ordered[-1] * 1e6,
        "rounds": len(ordered),
    }


def run(rounds: int, n: int, work: Path) -> dict[str, Any]:
    asyncio.run(_agentrt_run(work / "sizes.db", max(n, 20), False, "NORMAL", None))  # warm-up + blob sizes
    result_size, ckpt_size = blob_sizes(work / "sizes.db")
    rows: dict[str, Any] = {}
    measures: dict[str, Any] = {}
    for sync_mode in DURABILITY:
        measures[f"floor: plain sqlite3 [{sync_mode}]"] = lambda r, s=sync_mode: floor_per_call(
            work / f"floor-{s}-{r}.db", n, s, result_size, ckpt_size
        )
        measures[f"agentrt async tool [{sync_mode}]"] = lambda r, s=sync_mode: agentrt_per_call(
            work, n, False, s, f"async-{s}-{r}"
        )
        measures[f"agentrt sync tool [{sync_mode}]"] = lambda r, s=sync_mode: agentrt_per_call(
            work, n, True, s, f"sync-{s}-{r}"
        )
        measures[f"agentrt sync tool, inline [{sync_mode}]"] = lambda r, s=sync_mode: agentrt_per_call(
            work, n, True, s, f"inline-{s}-{r}", inline=True
        )
        measures[f"floor: plain sqlite3, 1 tx [{sync_mode}]"] = lambda r, s=sync_mode: floor_per_call(
            work / f"floor1-{s}-{r}.db", n, s, result_size, ckpt_size, one_tx=True
        )
    measures["tool called directly (async)"] = lambda r: direct_async_per_call(n * 20)
    measures["tool called directly (sync)"] = lambda r: direct_sync_per_call(n * 20)
    measures["bare thread hop"] = lambda r: thread_hop_per_call(n * 5)
    samples: dict[str, list[float]] = {name: [] for name in measures}
    names = list(measures)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            samples[name].append(measures[name](r))
    for name, values in samples.items():
        rows[name] = spread(values)
    hop = rows["bare thread hop"]["median_us"]
    targets = {}
    for sync_mode in DURABILITY:
        floor = rows[f"floor: plain sqlite3 [{sync_mode}]"]["median_us"]
        a = rows[f"agentrt async tool [{sync_mode}]"]["median_us"]
        s = rows[f"agentrt sync tool [{sync_mode}]"]["median_us"]
        targets[f"async tool / floor [{sync_mode}]"] = {
            "ratio": a / floor,
            "target": TARGET_ASYNC,
            "met": a / floor <= TARGET_ASYNC,
        }
        sync_ratio = (s - hop) / floor
        targets[f"(sync tool - thread hop) / floor [{sync_mode}]"] = {
            "ratio": sync_ratio,
            "target": TARGET_SYNC,
            "met": sync_ratio <= TARGET_SYNC,
        }
        inline = rows[f"agentrt sync tool, inline [{sync_mode}]"]["median_us"]
        targets[f"inline sync tool / floor [{sync_mode}]"] = {
            "ratio": inline / floor,
            "target": TARGET_ASYNC,
            "met": inline / floor <= TARGET_ASYNC,
        }
        one = rows[f"floor: plain sqlite3, 1 tx [{sync_mode}]"]["median_us"]
        targets[f"async tool / 1-tx floor [{sync_mode}]"] = {
            "ratio": a / one,
            "target": None,
            "met": None,
        }
    return {
        "rows": rows,
        "targets": targets,
        "blob_bytes": {"journal_entry": result_size, "checkpoint": ckpt_size},
        "statements_per_call": {
            "async tool": statements_per_call(work, n, False),
            "sync tool": statements_per_call(work, n, True),
        },
    }


# ------------------------------------------------------------------------------- instructions

#: C functions whose inclusive instruction counts split a step (callgrind_annotate --inclusive).
_PARTS = {
    "checkpoint encode and journal pickle": ("_pickle_Pickler_dump", "_pickle_dumps"),
    "SQLite statements": ("pysqlite_connection_execute", "pysqlite_connection_executemany"),
    "JSON encoding": ("encoder_call",),
}


def _instruction_worker(row: str, n: int) -> None:
    """One row's run with ``n`` calls (the driver run under callgrind)."""
    import agentrt._runtime.driver as driver

    driver.SLICE_SECONDS = 3600.0  # valgrind is ~50x slower: yield as rarely as a normal run does
    with tempfile.TemporaryDirectory(prefix="agentrt-step-") as tmp:
        work = Path(tmp)
        asyncio.run(_agentrt_run(work / "warm.db", 3, row == "sync", "NORMAL", None, row == "inline"))
        if row == "floor":
            if n:
                floor_per_call(work / "floor.db", n, "NORMAL", 123, 858)
        else:
            asyncio.run(_agentrt_run(work / "run.db", n, row == "sync", "NORMAL", None, row == "inline"))


def _callgrind(row: str, n: int, out: Path) -> dict[str, int]:
    import re
    import subprocess

    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
         str(Path(__file__).resolve()), "--instruction-worker", row, str(n)],
        check=True, capture_output=True, env=env,
    )  # fmt: skip
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    counts: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S+)", line)
        if m is None:
            continue
        value = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in line:
            counts["total"] = value
        else:
            name = m.group(2).split(":", 1)[-1]
            counts[name] = max(counts.get(name, 0), value)
    return counts


def instructions(n: int) -> int:
    import shutil

    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("valgrind is not installed (apt-get install valgrind); nothing measured")
        return 0
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="agentrt-cg-") as tmp:
        for row in ("async", "sync", "inline", "floor"):
            zero = _callgrind(row, 0, Path(tmp) / f"{row}-0.out")
            full = _callgrind(row, n, Path(tmp) / f"{row}-n.out")
            per = {"total": (full["total"] - zero["total"]) // n}
            for part, names in _PARTS.items():
                per[part] = sum(full.get(x, 0) - zero.get(x, 0) for x in names) // n
            rows[row] = per
            print(f"  {row:<7} {per['total']:>10,} instructions per call  " + ", ".join(
                f"{part} {per[part]:,}" for part in _PARTS
            ), flush=True)  # fmt: skip
    py = ".".join(platform.python_version_tuple()[:2])
    path = RESULTS / f"step-instructions-{py}.json"
    report = {
        "python": platform.python_version(),
        "command": "python benchmarks/step.py --instructions",
        "calls_per_run": n,
        "rows": rows,
    }
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"  wrote {_env.shown(path)}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--instructions", action="store_true", help="CPU instructions per call under callgrind"
    )
    parser.add_argument("--instruction-worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="smoke: 2 rounds of 40 calls, no ratio asserted")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 9; quick 2)")
    parser.add_argument("--calls", type=int, default=None, help="tool calls per run (default 400; quick 40)")
    args = parser.parse_args(argv)
    if args.instruction_worker:
        _instruction_worker(args.instruction_worker[0], int(args.instruction_worker[1]))
        return 0
    if args.instructions:
        return instructions(args.calls or 200)
    rounds = args.rounds or (2 if args.quick else 9)
    n = args.calls or (40 if args.quick else 400)
    started = time.monotonic()
    print(
        f"benchmarks/step.py ({'quick' if args.quick else 'full'}) on CPython {platform.python_version()}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="agentrt-step-") as tmp:
        out = run(rounds, n, Path(tmp))
    result = {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "mode": "quick" if args.quick else "full",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "command": " ".join(["python benchmarks/step.py", *(sys.argv[1:] if argv is None else argv)]),
        "rounds": rounds,
        "calls_per_run": n,
        **out,
    }
    for name, cell in out["rows"].items():
        print(
            f"  {name:<36} {cell['median_us']:8.1f} us/call  IQR {cell['q1_us']:7.1f}-{cell['q3_us']:7.1f}",
            flush=True,
        )
    for name, t in out["targets"].items():
        goal = f"target <= {t['target']}x" if t["target"] is not None else "no target"
        print(f"  {name:<44} {t['ratio']:5.2f}x ({goal})", flush=True)
    print(f"  statements per call: {out['statements_per_call']}", flush=True)
    py = ".".join(platform.python_version_tuple()[:2])
    path = RESULTS / f"step-{py}{'-quick' if args.quick else ''}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  wrote {_env.shown(path)} in {time.monotonic() - started:.1f} s", flush=True)
    return 0  # a benchmark reports; it never fails on a ratio


if __name__ == "__main__":
    sys.exit(main())
