"""Resume latency, forward throughput and memory of durable runs; agentrt beside LangGraph and DBOS.

    python benchmarks/resume.py            # full: N = 10, 100, 1000, 10000, peers side by side
    python benchmarks/resume.py --quick    # smoke: N = 10, 100, agentrt only, NORMAL, one round

(a) Resume latency after N completed tool calls: each system runs a workflow that makes N
    sequential calls of a step returning a small dict, then waits for a reply; a *fresh process*
    delivers the reply and we time from "deliver the reply" to "the workflow's code runs past the
    wait" (in-process markers, imports excluded).  agentrt restores the newest checkpoint: its cost
    should not depend on N (the issue asks for N = 10000 within 1.5x of N = 10).  LangGraph's
    functional API (SQLite checkpointer, ``interrupt`` -> ``Command(resume=...)``) and DBOS
    (SQLite, ``DBOS.recv``, recovery by ``DBOS.launch()`` in a new process) replay the workflow.
(b) Forward throughput: tool calls per second with a durable record at every call, on SQLite
    (agentrt: a checkpoint + a journal entry per call).
(c) Memory: per run suspended in memory (a tool call in flight) and per run waiting for a reply
    (out of memory: a row and its newest checkpoints in the store), measured with tracemalloc,
    with the store's default retention (100 checkpoints).

Like for like (issue 16): every system runs at the same durability, in WAL mode, once with
``synchronous=NORMAL`` and once with ``synchronous=FULL`` (the columns; ``--durability`` picks
them).  agentrt is given ``SqliteStore(synchronous=...)``; LangGraph's ``SqliteSaver`` connection
gets the PRAGMA (the saver itself turns WAL on and would keep SQLite's default FULL); DBOS's
SQLAlchemy engines get ``journal_mode=WAL`` and the PRAGMA from a connect hook (DBOS itself keeps
SQLite's rollback journal and FULL).  Every resume is timed twice per round: **warm** (the
``.pyc`` files and agentrt's code cache present) and **cold** (``PYTHONPYCACHEPREFIX`` at a fresh
empty directory, so nothing is imported from a ``.pyc``, and ``AGENTRT_CODE_CACHE=0``, so agentrt
re-analyses and re-synthesizes the resume code as on a first resume).  Resume rounds are
interleaved over systems, sizes and cold/warm; cells are medians with the IQR and min-max, and
both the in-process latency (imports excluded) and the whole process (spawn to exit) are kept.

The peers live in ``benchmarks/.venv-peers`` (never agentrt dependencies; made by ``make bench``'s
set-up before any timing, or on demand when run by hand without ``AGENTRT_BENCH_NO_INSTALL``);
if they cannot be installed the reason is printed and they are skipped.  Results go to
``resume-<python>[-quick].json`` and ``.png`` in the results folder (benchmarks/_env.py), plotted
with matplotlib from the peers venv or ``benchmarks/.venv-plot`` when one exists.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import _env  # benchmarks/_env.py: the results folder, the no-install switch

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:  # run from a checkout: this checkout's agentrt, whatever the cwd
    sys.path.insert(0, str(REPO))
RESULTS = _env.results_dir()
PEERS_VENV = HERE / ".venv-peers"
PEER_PACKAGES = ["langgraph", "langgraph-checkpoint-sqlite", "dbos", "matplotlib"]
PEER_TIMEOUT_SECONDS = 900


# =============================================================================== agentrt side
# (imported lazily: the peer workers run in the peers venv, which has no agentrt)


def _agentrt_agent() -> Any:
    """The benchmark agent, imported as ``benchmarks.resume`` so checkpoints name a real module."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from agentrt._sdk.agent import load_agent

    return load_agent("benchmarks.resume:bench_agent")


MARKS: dict[str, float] = {}

try:  # the peer workers run this file in the peers venv, which has no agentrt
    import attrs

    from agentrt import Task, agent, tool, ui_tools
except ImportError:
    agent = None

if agent is not None:

    @tool
    def step_tool(i: int) -> dict[str, Any]:
        """One step: returns a small dict."""
        return {"i": i, "ok": True}

    @tool
    async def hang(forever: bool = True) -> int:
        """Never returns (keeps a run suspended in memory with a call in flight)."""
        await asyncio.Event().wait()
        return 0

    @attrs.frozen
    class BenchInput:
        n: int
        hang: bool = False

    @attrs.frozen
    class BenchOutput:
        acc: int
        reply: str

    async def bench_run(input: BenchInput, task: Task) -> BenchOutput:
        acc = 0
        for i in range(input.n):
            result = await task.tools.step_tool(i=i)
            acc += result["i"]
        if input.hang:
            await task.tools.hang()
        reply = await task.ui.ask("done?")
        MARKS["after_ask"] = time.perf_counter()
        return BenchOutput(acc, reply)

    bench_agent = agent(
        input=BenchInput, output=BenchOutput, tools=[step_tool, hang, *ui_tools], run=bench_run, name="bench"
    )


async def _agentrt_forward(store_path: Path, n: int, synchronous: str) -> tuple[str, float]:
    from agentrt import Runtime
    from agentrt.stores import SqliteStore

    agent = _agentrt_agent()
    store = SqliteStore(store_path, synchronous=synchronous)  # the default retention
    async with Runtime(store, step_budget_seconds=None) as rt:
        t0 = time.perf_counter()
        run_id = await rt.start(agent, {"n": n}, run_id=f"bench-{n}")
        rec = await rt.settle(run_id)
        elapsed = time.perf_counter() - t0
    assert rec.status == "waiting", rec
    store.close()
    return run_id, elapsed


async def _agentrt_resume(store_path: Path, run_id: str, synchronous: str) -> dict[str, float]:
    from agentrt import Runtime
    from agentrt.stores import SqliteStore

    agent = _agentrt_agent()
    module = sys.modules[agent.run.__module__]
    store = SqliteStore(store_path, synchronous=synchronous)
    async with Runtime(store, step_budget_seconds=None) as rt:
        t0 = time.perf_counter()
        await rt.reply(run_id, "yes")
        out = await rt.wait(run_id, timeout=120)
        t_done = time.perf_counter()
    store.close()
    assert out.reply == "yes"
    return {"resume_s": module.MARKS["after_ask"] - t0, "resume_to_done_s": t_done - t0}


def _copy_db(src: Path, dst: Path) -> None:
    conn = sqlite3.connect(src)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    shutil.copy(src, dst)
    key = Path(str(src) + ".key")  # the store's blob key (agentrt.keys.store_key_path): the copy needs it
    if key.exists():
        shutil.copy(key, str(dst) + ".key")


def spread(samples: list[float]) -> dict[str, Any]:
    """Median, interquartile range and min-max (seconds) of one cell's samples."""
    ordered = sorted(samples)
    if len(ordered) >= 4:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1, q3 = ordered[0], ordered[-1]
    return {
        "median": statistics.median(ordered),
        "q1": q1,
        "q3": q3,
        "min": ordered[0],
        "max": ordered[-1],
        "samples": [round(x, 6) for x in samples],
    }


def forward(system: str, python: str, db: Path, n: int, synchronous: str) -> tuple[str, float]:
    """Run the workflow forward to its wait; (run id, seconds for the N calls)."""
    if system == "agentrt":
        return asyncio.run(_agentrt_forward(db, n, synchronous))
    out = _worker(python, f"{system}-forward", str(db), str(n), synchronous)
    return "bench", float(out["forward_s"])


def resume_once(
    system: str, python: str, db: Path, run_id: str, synchronous: str, cold: bool, work: Path, tag: str
) -> dict[str, float]:
    """One resume in a fresh process, from a copy of the waiting store; warm or cold."""
    copy = work / f"{tag}.db"
    _copy_db(db, copy)
    env: dict[str, str] = {}
    if cold:
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(dir=work, prefix="pyc-")
        env["AGENTRT_CODE_CACHE"] = "0"
    args = [str(copy), run_id, synchronous] if system == "agentrt" else [str(copy), synchronous]
    out = _worker(python, f"{system}-resume", *args, env=env)
    if cold:
        shutil.rmtree(env["PYTHONPYCACHEPREFIX"], ignore_errors=True)
    for suffix in ("", "-wal", "-shm"):
        Path(str(copy) + suffix).unlink(missing_ok=True)
    return out


def bench_resume(
    systems: dict[str, str],
    ns: list[int],
    durabilities: list[str],
    rounds: int,
    work: Path,
    peer_max_n: int,
    temps: tuple[bool, ...] = (False, True),
    peer_min_n: int = 0,
) -> dict[str, Any]:
    """Forward once per (system, durability, N), then interleaved rounds of warm and cold resumes
    (``temps``: which of them, False for warm and True for cold)."""
    result: dict[str, Any] = {name: {d: {} for d in durabilities} for name in systems}
    waiting: list[tuple[str, str, int, Path, str]] = []
    for synchronous in durabilities:
        for n in ns:
            for name, python in systems.items():
                if name != "agentrt" and not peer_min_n <= n <= peer_max_n:
                    continue
                db = work / f"{name}-{synchronous}-{n}.db"
                try:
                    run_id, forward_s = forward(name, python, db, n, synchronous)
                except Exception as exc:  # one failing size must not lose the others
                    result[name][synchronous][str(n)] = {"n": n, "error": str(exc)[-500:]}
                    print(
                        f"  {name:<9} {synchronous:<6} N={n:>6}: forward failed: {str(exc)[-300:]}",
                        flush=True,
                    )
                    continue
                row = {"n": n, "forward_s": forward_s, "calls_per_s": n / forward_s}
                if name == "agentrt":
                    row["checkpoint_bytes"] = _latest_checkpoint_size(db, run_id)
                result[name][synchronous][str(n)] = row
                print(
                    f"  {name:<9} {synchronous:<6} N={n:>6}: forward {forward_s:7.3f} s "
                    f"({n / forward_s:7.0f} calls/s)",
                    flush=True,
                )
                waiting.append((name, synchronous, n, db, run_id))
    samples: dict[tuple[str, str, int, bool], list[dict[str, float]]] = {}
    cells = [(w, cold) for w in waiting for cold in temps]
    failed: set[tuple[str, str, int]] = set()
    for r in range(rounds):
        shift = (r * 7) % len(cells) if cells else 0
        for (name, synchronous, n, db, run_id), cold in cells[shift:] + cells[:shift]:
            if (name, synchronous, n) in failed:
                continue
            tag = f"{name}-{synchronous}-{n}-{'cold' if cold else 'warm'}-r{r}"
            try:
                out = resume_once(name, systems[name], db, run_id, synchronous, cold, work, tag)
            except Exception as exc:
                failed.add((name, synchronous, n))
                result[name][synchronous][str(n)]["error"] = str(exc)[-500:]
                print(f"  {name:<9} {synchronous:<6} N={n:>6}: resume failed: {str(exc)[-300:]}", flush=True)
                continue
            samples.setdefault((name, synchronous, n, cold), []).append(out)
    for (name, synchronous, n, cold), outs in samples.items():
        row = result[name][synchronous][str(n)]
        temp = "cold" if cold else "warm"
        row[f"resume_{temp}"] = spread([o["resume_s"] for o in outs])
        row[f"process_{temp}"] = spread([o["process_s"] for o in outs])
        if "resume_with_recovery_delay_s" in outs[0]:
            row[f"resume_with_recovery_delay_{temp}"] = spread(
                [o["resume_with_recovery_delay_s"] for o in outs]
            )
    for name in systems:
        for synchronous in durabilities:
            for row in result[name][synchronous].values():
                shown = [t for t in ("warm", "cold") if f"resume_{t}" in row]
                if shown:
                    print(
                        f"  {name:<9} {synchronous:<6} N={row['n']:>6}: resume "
                        + ", ".join(f"{t} {row[f'resume_{t}']['median'] * 1e3:8.2f} ms" for t in shown)
                        + "; whole process "
                        + ", ".join(f"{t} {row[f'process_{t}']['median'] * 1e3:7.0f} ms" for t in shown)
                        + f" (median of {rounds})",
                        flush=True,
                    )
    return result


def _latest_checkpoint_size(db: Path, run_id: str) -> int:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute(
            "SELECT length(blob) FROM checkpoints WHERE run_id = ? ORDER BY seq DESC LIMIT 1", (run_id,)
        ).fetchone()
        return int(row[0]) if row else 0
    finally:
        conn.close()


def bench_agentrt_memory(runs: int, work: Path) -> dict[str, Any]:
    """Bytes per run suspended in memory (a call in flight) and per run waiting out of memory."""
    from agentrt import Runtime
    from agentrt.stores import SqliteStore

    agent = _agentrt_agent()

    async def measure(hang: bool, db: Path) -> dict[str, float]:
        store = SqliteStore(db)  # the default retention (100)
        async with Runtime(store, step_budget_seconds=None) as rt:
            warm = await rt.start(agent, {"n": 2, "hang": hang})  # warm caches before measuring
            await asyncio.sleep(0.05)
            gc.collect()
            size_before = _store_bytes(db)
            tables_before = _store_bytes_by_table(db)
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
            ids = [await rt.start(agent, {"n": 2, "hang": hang}) for _ in range(runs)]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                await asyncio.sleep(0.05)
                if all(store.get_run(i).seq >= 3 for i in ids) and (hang or not rt.driver.drivers):
                    break
            gc.collect()
            after = tracemalloc.take_snapshot()
            tracemalloc.stop()
            grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
            waiting = sum(1 for i in ids if store.get_run(i).status == "waiting")
            size_after = _store_bytes(db)
            tables_after = _store_bytes_by_table(db)
            assert warm
        store.close()
        return {
            "runs": runs,
            "python_bytes_per_run": grown / runs,
            "store_bytes_per_run": (size_after - size_before) / runs,
            # where they are: the pages of each table and index (SQLite's dbstat, where compiled in)
            "store_bytes_per_run_by_table": {
                name: (tables_after[name] - tables_before.get(name, 0)) / runs
                for name in sorted(tables_after, key=lambda n: tables_before.get(n, 0) - tables_after[n])
                if tables_after[name] != tables_before.get(name, 0)
            },
            "store_settings": {
                "retention": store.retention,
                "synchronous": "NORMAL",
                "page_size": _page_size(db),
            },
            "runs_waiting": waiting,
        }

    suspended = asyncio.run(measure(True, work / "mem-suspended.db"))
    waiting = asyncio.run(measure(False, work / "mem-waiting.db"))
    print(
        f"  agentrt   memory: {suspended['python_bytes_per_run'] / 1e3:6.1f} kB per run suspended in memory; "
        f"{waiting['python_bytes_per_run'] / 1e3:6.2f} kB in memory + "
        f"{waiting['store_bytes_per_run'] / 1e3:5.1f} kB "
        "in the store per waiting run",
        flush=True,
    )
    return {"suspended_in_memory": suspended, "waiting_for_reply": waiting}


def _store_bytes(db: Path) -> int:
    """The bytes of the store's pages in use, WAL included (the file sizes would count a WAL not yet
    checkpointed, and free pages)."""
    conn = sqlite3.connect(db)
    try:
        pages, free, size = (
            conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("page_count", "freelist_count", "page_size")
        )
        return int((pages - free) * size)
    finally:
        conn.close()


def _store_bytes_by_table(db: Path) -> dict[str, int]:
    """The bytes of the pages of each table and index ({} where SQLite has no ``dbstat``)."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.Error:
        return {}
    finally:
        conn.close()
    return {str(name): int(size) for name, size in rows}


def _page_size(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()


# =============================================================================== peers


def _langgraph_app(db: str, synchronous: str) -> tuple[Any, Any]:
    import sqlite3 as sq

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.func import entrypoint, task
    from langgraph.types import interrupt

    @task
    def step(i: int) -> dict[str, Any]:
        return {"i": i, "ok": True}

    conn = sq.connect(db, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")  # what the saver's setup does too
    conn.execute(f"PRAGMA synchronous={synchronous}")  # per connection: SQLite's default is FULL
    saver = SqliteSaver(conn)

    @entrypoint(checkpointer=saver)
    def workflow(n: int) -> dict[str, Any]:
        acc = 0
        for i in range(n):
            acc += step(i).result()["i"]
        MARKS.setdefault("loop_done", time.perf_counter())
        reply = interrupt("done?")
        MARKS["after_ask"] = time.perf_counter()
        return {"acc": acc, "reply": reply}

    return workflow, {"configurable": {"thread_id": "bench"}}


def _dbos_app(db: str, synchronous: str) -> tuple[Any, Any]:
    import sqlalchemy
    from dbos import DBOS

    def pragmas(dbapi_conn: Any, _record: Any) -> None:
        # DBOS keeps SQLite's rollback journal and synchronous=FULL: like for like, WAL + the same
        # synchronous setting as the other systems.
        dbapi_conn.execute("PRAGMA journal_mode=WAL")
        dbapi_conn.execute(f"PRAGMA synchronous={synchronous}")

    sqlalchemy.event.listen(sqlalchemy.engine.Engine, "connect", pragmas)

    DBOS(
        config={"name": "agentrt-bench", "system_database_url": f"sqlite:///{db}", "run_admin_server": False}
    )

    @DBOS.step()
    def step(i: int) -> dict[str, Any]:
        return {"i": i, "ok": True}

    @DBOS.workflow()
    def workflow(n: int) -> dict[str, Any]:
        MARKS.setdefault("body_start", time.perf_counter())
        acc = 0
        for i in range(n):
            acc += step(i)["i"]
        MARKS["after_ask"] = time.perf_counter()  # the replay reached the wait: the run is live again
        reply = DBOS.recv("reply", timeout_seconds=3600)
        return {"acc": acc, "reply": reply}

    return DBOS, workflow


def _peer_worker(kind: str, args: list[str]) -> dict[str, Any]:
    if kind == "langgraph-forward":
        db, n = args[0], int(args[1])
        workflow, config = _langgraph_app(db, args[2])
        t0 = time.perf_counter()
        for _ in workflow.stream(n, config, durability="sync"):
            pass
        return {"forward_s": MARKS["loop_done"] - t0}
    if kind == "langgraph-resume":
        from langgraph.types import Command

        workflow, config = _langgraph_app(args[0], args[1])
        t0 = time.perf_counter()
        out = workflow.invoke(Command(resume="yes"), config, durability="sync")
        assert out["reply"] == "yes", out
        return {"resume_s": MARKS["after_ask"] - t0}
    if kind == "dbos-forward":
        db, n = args[0], int(args[1])
        dbos, workflow = _dbos_app(db, args[2])
        dbos.launch()
        from dbos import SetWorkflowID

        with SetWorkflowID("bench"):
            dbos.start_workflow(workflow, n)
        while "after_ask" not in MARKS:
            time.sleep(0.001)
        forward = MARKS["after_ask"] - MARKS["body_start"]
        print(json.dumps({"forward_s": forward}), flush=True)
        os._exit(0)  # a crash: the workflow stays pending in recv
    if kind == "dbos-resume":
        dbos, _workflow = _dbos_app(args[0], args[1])
        t0 = time.perf_counter()
        dbos.launch()  # recovers the pending workflow: replays its steps from the database
        while "after_ask" not in MARKS:
            time.sleep(0.0005)
        result = {
            "resume_s": MARKS["after_ask"] - MARKS["body_start"],
            "resume_with_recovery_delay_s": MARKS["after_ask"] - t0,
        }
        print(json.dumps(result), flush=True)
        os._exit(0)
    raise SystemExit(f"unknown worker {kind}")


def _worker(
    python: str,
    kind: str,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = PEER_TIMEOUT_SECONDS,
) -> dict[str, Any]:
    """Run a worker in a fresh process; its JSON line, plus ``process_s`` (spawn to exit)."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [python, str(Path(__file__).resolve()), "--worker", kind, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            **(env or {}),
        },
    )
    process_s = time.perf_counter() - t0
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"worker {kind} failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    out: dict[str, Any] = json.loads(lines[-1])
    out["process_s"] = process_s
    return out


def _peers_interpreter() -> str:
    """CPython 3.11 when there is one: DBOS on 3.12+ needs SQLite >= 3.42 (``unixepoch('subsec')``),
    which older system SQLite libraries lack; peers.md measured the peers on 3.11 too."""
    import glob

    for candidate in sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/3.11*/bin/python")), reverse=True
    ):
        return candidate
    found = shutil.which("python3.11")
    return found or sys._base_executable  # type: ignore[attr-defined]


def ensure_peers_venv() -> tuple[str | None, str]:
    """The peers venv's python, creating it on demand; (None, reason) when it cannot be had."""
    python = PEERS_VENV / "bin" / "python"
    probe = "import langgraph.func, langgraph.checkpoint.sqlite, dbos"
    if python.exists() and subprocess.run([str(python), "-c", probe], capture_output=True).returncode == 0:
        return str(python), "ok"
    if not _env.may_install():  # a timed run (benchmarks/run.py) never reaches the network
        return None, _env.NOT_INSTALLED
    base = _peers_interpreter()
    print(
        f"  creating {PEERS_VENV.relative_to(REPO)} with {', '.join(PEER_PACKAGES)} on {base} (once)...",
        flush=True,
    )
    try:
        if not python.exists():
            subprocess.run([base, "-m", "venv", str(PEERS_VENV)], check=True, capture_output=True)
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PEER_PACKAGES],
            capture_output=True,
            text=True,
            timeout=PEER_TIMEOUT_SECONDS,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        return None, f"could not create the peers venv: {exc}"
    if proc.returncode != 0:
        return None, "pip could not install the peers: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
    if subprocess.run([str(python), "-c", probe], capture_output=True).returncode != 0:
        return None, "the peers installed but do not import"
    return str(python), "ok"


# =============================================================================== plot


def _plot(result_path: Path, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    result = json.loads(result_path.read_text())
    systems = result["resume"]
    durabilities = result["durabilities"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    fig.suptitle(
        f"agentrt resume benchmark, CPython {result['python']} ({result['mode']}); "
        "WAL, same synchronous for all",
        fontsize=12,
    )
    colors = {"agentrt": "#1f77b4", "langgraph": "#ff7f0e", "dbos": "#2ca02c"}
    ax = axes[0]
    shown = durabilities[0]
    for name, per_sync in systems.items():
        rows = per_sync.get(shown, {})
        for temp, style in (("warm", "-"), ("cold", "--")):
            pts = [
                (r["n"], r[f"resume_{temp}"]["median"] * 1e3) for r in rows.values() if f"resume_{temp}" in r
            ]
            if pts:
                ax.plot(
                    *zip(*pts, strict=True),
                    marker="o",
                    linestyle=style,
                    label=f"{name} ({temp})",
                    color=colors.get(name),
                )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("completed tool calls before the wait (N)")
    ax.set_ylabel("resume latency, ms (median, fresh process)")
    ax.set_title(f"(a) resume after N calls, synchronous={shown}")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax = axes[1]
    labels, rates, bar_colors = [], [], []
    for synchronous in durabilities:
        for name, per_sync in systems.items():
            rows = [r for r in per_sync.get(synchronous, {}).values() if r.get("calls_per_s")]
            if rows:
                best = max(rows, key=lambda r: r["n"])
                labels.append(f"{name}\n{synchronous}\nN={best['n']}")
                rates.append(best["calls_per_s"])
                bar_colors.append(colors.get(name))
    ax.bar(labels, rates, color=bar_colors)
    ax.set_ylabel("tool calls per second")
    ax.set_title("(b) forward: a durable record per call, SQLite WAL")
    ax.tick_params(axis="x", labelsize=7)
    for i, v in enumerate(rates):
        ax.text(i, v, f"{v:,.0f}", ha="center", va="bottom", fontsize=7)
    ax = axes[2]
    mem = result.get("memory", {})
    if mem:
        labels = [
            "suspended in memory\n(call in flight)",
            "waiting for a reply\n(process memory)",
            "waiting for a reply\n(store, on disk)",
        ]
        values = [
            mem["suspended_in_memory"]["python_bytes_per_run"] / 1e3,
            mem["waiting_for_reply"]["python_bytes_per_run"] / 1e3,
            mem["waiting_for_reply"]["store_bytes_per_run"] / 1e3,
        ]
        ax.bar(labels, values, color=["#1f77b4", "#aec7e8", "#c7c7c7"])
        for i, v in enumerate(values):
            ax.text(i, v, f"{v:,.1f} kB", ha="center", va="bottom")
    ax.set_ylabel("kB per run")
    ax.set_title("(c) agentrt memory per run (default retention)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def _plot_python() -> str | None:
    return _env.plot_python()


# =============================================================================== main


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="CI smoke: N = 10, 100, NORMAL, no peers, one round (no ratio asserted)",
    )
    parser.add_argument("--ns", default=None, help="comma-separated N values (default 10,100,1000,10000)")
    parser.add_argument(
        "--repeat", type=int, default=None, help="interleaved resume rounds (default 5; quick 1)"
    )
    parser.add_argument(
        "--durability",
        default=None,
        help="synchronous settings, comma-separated (default NORMAL,FULL; quick NORMAL)",
    )
    parser.add_argument("--no-peers", action="store_true", help="skip LangGraph and DBOS")
    parser.add_argument(
        "--memory-only",
        action="store_true",
        help="measure only agentrt's memory per run, into the existing results file",
    )
    parser.add_argument("--peer-max-n", type=int, default=10000, help="largest N run with the peers")
    parser.add_argument("--peer-min-n", type=int, default=0, help="smallest N run with the peers")
    parser.add_argument(
        "--warm-only", action="store_true", help="leave out the cold resumes (no .pyc): most of the run time"
    )
    parser.add_argument("--no-plot", dest="draw", action="store_false", help="do not draw the PNG")
    parser.add_argument(
        "--memory-runs", type=int, default=None, help="runs in the memory measure (default 1000; quick 200)"
    )
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--plot", nargs=2, metavar=("JSON", "PNG"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.plot:
        _plot(Path(args.plot[0]), Path(args.plot[1]))
        return 0
    if args.worker:
        kind, rest = args.worker[0], args.worker[1:]
        if kind == "agentrt-resume":
            print(json.dumps(asyncio.run(_agentrt_resume(Path(rest[0]), rest[1], rest[2]))))
            return 0
        print(json.dumps(_peer_worker(kind, rest)))
        return 0

    if args.memory_only:
        py = ".".join(platform.python_version_tuple()[:2])
        path = RESULTS / f"resume-{py}.json"
        saved = json.loads(path.read_text()) if path.exists() else {}
        with tempfile.TemporaryDirectory(prefix="agentrt-bench-") as tmp:
            saved["memory"] = bench_agentrt_memory(1000, Path(tmp))
        saved["memory"]["command"] = "python benchmarks/resume.py --memory-only"
        path.write_text(json.dumps(saved, indent=2) + "\n")
        print(f"  wrote {_env.shown(path)}", flush=True)
        return 0
    started = time.monotonic()
    ns = (
        [int(x) for x in args.ns.split(",")]
        if args.ns
        else ([10, 100] if args.quick else [10, 100, 1000, 10000])
    )
    repeat = args.repeat or (1 if args.quick else 5)
    durabilities = [
        d.strip().upper() for d in (args.durability or ("NORMAL" if args.quick else "NORMAL,FULL")).split(",")
    ]
    py = ".".join(platform.python_version_tuple()[:2])
    mode = "quick" if args.quick else "full"
    print(f"benchmarks/resume.py ({mode}) on CPython {platform.python_version()}", flush=True)
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "mode": mode,
        "command": "python " + " ".join(["benchmarks/resume.py", *sys.argv[1:]]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "ns": ns,
        "repeat": repeat,
        "durabilities": durabilities,
        "resume": {},
        "peers": {},
    }
    systems = {"agentrt": sys.executable}
    if args.quick or args.no_peers:
        result["peers"]["skipped"] = "--quick" if args.quick else "--no-peers"
    else:
        python, reason = ensure_peers_venv()
        if python is None:
            print(f"  peers skipped: {reason}", flush=True)
            result["peers"]["skipped"] = reason
        else:
            systems.update(langgraph=python, dbos=python)
    with tempfile.TemporaryDirectory(prefix="agentrt-bench-") as tmp:
        work = Path(tmp)
        temps = (False,) if args.warm_only else (False, True)
        result["resume"] = bench_resume(
            systems, ns, durabilities, repeat, work, args.peer_max_n, temps, args.peer_min_n
        )
        result["memory"] = bench_agentrt_memory(args.memory_runs or (200 if args.quick else 1000), work)
    rows = result["resume"]["agentrt"][durabilities[0]]
    big, small = rows[str(max(ns))]["resume_warm"], rows[str(min(ns))]["resume_warm"]
    flat = big["median"] / small["median"]
    # A resume in a fresh process on a shared machine varies by tens of percent from round to
    # round: beside the ratio of the medians, the ratio of the fastest resumes (what is left when
    # the noise is least) and whether the two interquartile ranges overlap at all.
    result["agentrt_flatness"] = {
        "n_max_over_n_min": flat,
        "n_max_over_n_min_fastest": big["min"] / small["min"],
        "iqr_overlap": big["q1"] <= small["q3"] and small["q1"] <= big["q3"],
        "limit": 1.5,
        "ok": flat <= 1.5,
    }
    print(
        f"  agentrt resume at N={max(ns)} is {flat:.2f}x the one at N={min(ns)} (limit 1.5x; fastest "
        f"{result['agentrt_flatness']['n_max_over_n_min_fastest']:.2f}x)",
        flush=True,
    )
    result["seconds"] = time.monotonic() - started
    stem = f"resume-{py}" + ("-quick" if args.quick else "")
    out = RESULTS / f"{stem}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  wrote {_env.shown(out)}", flush=True)
    plotter = _plot_python() if args.draw else None
    if not args.draw:
        print("  no PNG: --no-plot", flush=True)
    elif plotter is None:
        print(
            f"  no PNG: matplotlib: {_env.NOT_INSTALLED}",
            flush=True,
        )
    else:
        png = RESULTS / f"{stem}.png"
        proc = subprocess.run(
            [plotter, str(Path(__file__).resolve()), "--plot", str(out), str(png)],
            capture_output=True,
            text=True,
        )
        if proc.returncode == 0:
            print(f"  wrote {_env.shown(png)}", flush=True)
        else:
            print(f"  no PNG: plotting failed: {proc.stderr.strip()[-300:]}", flush=True)
    print(f"done in {time.monotonic() - started:.1f} s", flush=True)
    return 0  # a benchmark reports (CI runs --quick on noisy machines); summary.md judges the ratios


if __name__ == "__main__":
    sys.exit(main())
