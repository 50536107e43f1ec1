"""Resume latency, forward throughput and memory of durable runs; agentrt beside LangGraph and DBOS.

    python benchmarks/resume.py            # full: N = 10, 100, 1000, 10000, peers side by side
    python benchmarks/resume.py --quick    # smoke: N = 10, 100, 1000, agentrt only (< 20 s); asserts no ratio

(a) Resume latency after N completed tool calls: each system runs a workflow that makes N
    sequential calls of a step returning a small dict, then waits for a reply; a *fresh process*
    delivers the reply and we time from "deliver the reply" to "the workflow's code runs past the
    wait" (in-process markers, imports excluded).  agentrt restores the newest checkpoint: its cost
    should not depend on N (the issue asks for N = 10000 within 1.5x of N = 10).  LangGraph's
    functional API (SQLite checkpointer, ``interrupt`` -> ``Command(resume=...)``) and DBOS
    (SQLite, ``DBOS.recv``, recovery by ``DBOS.launch()`` in a new process) replay the workflow.
(b) Forward throughput: tool calls per second with a durable record at every call, on SQLite
    (agentrt: a checkpoint + a journal entry per call, ``synchronous=NORMAL``).
(c) Memory: per run suspended in memory (a tool call in flight) and per run waiting for a reply
    (out of memory: a row and its newest checkpoints in the store), measured with tracemalloc.

The peers live in ``benchmarks/.venv-peers`` (created on demand; never agentrt dependencies);
if they cannot be installed the reason is printed and they are skipped.  Results go to
``benchmarks/results/resume-<python>[-quick].json`` and ``.png`` (plotted with matplotlib from
the peers venv or ``benchmarks/.venv-plot`` when one exists).
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

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:  # run from a checkout: this checkout's agentrt, whatever the cwd
    sys.path.insert(0, str(REPO))
RESULTS = HERE / "results"
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


async def _agentrt_forward(store_path: Path, n: int) -> tuple[str, float]:
    from agentrt import Runtime
    from agentrt.stores import SqliteStore

    agent = _agentrt_agent()
    store = SqliteStore(store_path, retention=10)
    async with Runtime(store, step_budget_seconds=None) as rt:
        t0 = time.perf_counter()
        run_id = await rt.start(agent, {"n": n}, run_id=f"bench-{n}")
        rec = await rt.settle(run_id)
        elapsed = time.perf_counter() - t0
    assert rec.status == "waiting", rec
    store.close()
    return run_id, elapsed


async def _agentrt_resume(store_path: Path, run_id: str) -> dict[str, float]:
    from agentrt import Runtime
    from agentrt.stores import SqliteStore

    agent = _agentrt_agent()
    module = sys.modules[agent.run.__module__]
    store = SqliteStore(store_path, retention=10)
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


def bench_agentrt_resume(ns: list[int], repeat: int, work: Path) -> dict[str, Any]:
    rows = {}
    for n in ns:
        db = work / f"agentrt-{n}.db"
        run_id, forward_s = asyncio.run(_agentrt_forward(db, n))
        samples = []
        for r in range(repeat):
            copy = work / f"agentrt-{n}-r{r}.db"
            _copy_db(db, copy)
            out = _worker(sys.executable, "agentrt-resume", str(copy), run_id)
            samples.append(out)
        resume = [s["resume_s"] for s in samples]
        rows[str(n)] = {
            "n": n,
            "forward_s": forward_s,
            "calls_per_s": n / forward_s,
            "resume_s_median": statistics.median(resume),
            "resume_s_samples": resume,
            "resume_to_done_s_median": statistics.median(s["resume_to_done_s"] for s in samples),
            "checkpoint_bytes": _latest_checkpoint_size(db, run_id),
        }
        print(
            f"  agentrt   N={n:>6}: forward {forward_s:7.3f} s ({n / forward_s:7.0f} calls/s), "
            f"resume {statistics.median(resume) * 1e3:8.2f} ms (median of {repeat})",
            flush=True,
        )
    return rows


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
        store = SqliteStore(db, retention=1)
        async with Runtime(store, step_budget_seconds=None) as rt:
            warm = await rt.start(agent, {"n": 2, "hang": hang})  # warm caches before measuring
            await asyncio.sleep(0.05)
            gc.collect()
            size_before = _db_size(db)
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
            ids = [await rt.start(agent, {"n": 2, "hang": hang}) for _ in range(runs)]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                await asyncio.sleep(0.05)
                if all(store.get_run(i).seq >= 3 for i in ids) and (hang or not rt._drivers):
                    break
            gc.collect()
            after = tracemalloc.take_snapshot()
            tracemalloc.stop()
            grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
            waiting = sum(1 for i in ids if store.get_run(i).status == "waiting")
            assert warm
        store.close()
        return {
            "runs": runs,
            "python_bytes_per_run": grown / runs,
            "store_bytes_per_run": (_db_size(db) - size_before) / runs,
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


def _db_size(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.exists())


# =============================================================================== peers


def _langgraph_app(db: str) -> tuple[Any, Any]:
    import sqlite3 as sq

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.func import entrypoint, task
    from langgraph.types import interrupt

    @task
    def step(i: int) -> dict[str, Any]:
        return {"i": i, "ok": True}

    saver = SqliteSaver(sq.connect(db, check_same_thread=False))

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


def _dbos_app(db: str) -> tuple[Any, Any]:
    from dbos import DBOS

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
        workflow, config = _langgraph_app(db)
        t0 = time.perf_counter()
        for _ in workflow.stream(n, config, durability="sync"):
            pass
        return {"forward_s": MARKS["loop_done"] - t0}
    if kind == "langgraph-resume":
        from langgraph.types import Command

        workflow, config = _langgraph_app(args[0])
        t0 = time.perf_counter()
        out = workflow.invoke(Command(resume="yes"), config, durability="sync")
        assert out["reply"] == "yes", out
        return {"resume_s": MARKS["after_ask"] - t0}
    if kind == "dbos-forward":
        db, n = args[0], int(args[1])
        dbos, workflow = _dbos_app(db)
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
        dbos, _workflow = _dbos_app(args[0])
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


def _worker(python: str, kind: str, *args: str, timeout: float = PEER_TIMEOUT_SECONDS) -> dict[str, Any]:
    proc = subprocess.run(
        [python, str(Path(__file__).resolve()), "--worker", kind, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")},
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"worker {kind} failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return json.loads(lines[-1])  # type: ignore[no-any-return]


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


def bench_peer(name: str, python: str, ns: list[int], repeat: int, work: Path) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for n in ns:
        try:
            samples = []
            forward_s = None
            for r in range(repeat):
                db = work / f"{name}-{n}-r{r}.db"
                fwd = _worker(python, f"{name}-forward", str(db), str(n))
                forward_s = fwd["forward_s"] if forward_s is None else min(forward_s, fwd["forward_s"])
                samples.append(_worker(python, f"{name}-resume", str(db)))
            resume = [s["resume_s"] for s in samples]
            row = {
                "n": n,
                "forward_s": forward_s,
                "calls_per_s": n / forward_s if forward_s else None,
                "resume_s_median": statistics.median(resume),
                "resume_s_samples": resume,
            }
            if "resume_with_recovery_delay_s" in samples[0]:
                row["resume_with_recovery_delay_s_median"] = statistics.median(
                    s["resume_with_recovery_delay_s"] for s in samples
                )
            rows[str(n)] = row
            print(
                f"  {name:<9} N={n:>6}: forward {forward_s:7.3f} s ({n / forward_s:7.0f} calls/s), "
                f"resume {row['resume_s_median'] * 1e3:8.2f} ms (median of {repeat})",
                flush=True,
            )
        except Exception as exc:  # one failing size must not lose the others
            rows[str(n)] = {"n": n, "error": str(exc)[-500:]}
            print(f"  {name:<9} N={n:>6}: failed: {str(exc)[-300:]}", flush=True)
    return rows


# =============================================================================== plot


def _plot(result_path: Path, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    result = json.loads(result_path.read_text())
    systems = result["resume"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    fig.suptitle(f"agentrt resume benchmark, CPython {result['python']} ({result['mode']})", fontsize=12)
    colors = {"agentrt": "#1f77b4", "langgraph": "#ff7f0e", "dbos": "#2ca02c"}
    ax = axes[0]
    for name, rows in systems.items():
        pts = [(r["n"], r["resume_s_median"] * 1e3) for r in rows.values() if "resume_s_median" in r]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker="o", label=name, color=colors.get(name))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("completed tool calls before the wait (N)")
    ax.set_ylabel("resume latency, ms (median, fresh process)")
    ax.set_title("(a) resume latency after N calls")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    ax = axes[1]
    names, rates = [], []
    for name, rows in systems.items():
        best = max((r for r in rows.values() if r.get("calls_per_s")), key=lambda r: r["n"], default=None)
        if best:
            names.append(f"{name}\nN={best['n']}")
            rates.append(best["calls_per_s"])
    ax.bar(names, rates, color=[colors.get(n.split("\n")[0]) for n in names])
    ax.set_ylabel("tool calls per second")
    ax.set_title("(b) forward: a durable record per call, SQLite")
    for i, v in enumerate(rates):
        ax.text(i, v, f"{v:,.0f}", ha="center", va="bottom")
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
    ax.set_title("(c) agentrt memory per run")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def _plot_python() -> str | None:
    for venv in (PEERS_VENV, HERE / ".venv-plot"):
        python = venv / "bin" / "python"
        if (
            python.exists()
            and subprocess.run([str(python), "-c", "import matplotlib"], capture_output=True).returncode == 0
        ):
            return str(python)
    return None


# =============================================================================== main


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="CI smoke: N up to 1000, no peers, one resume each"
    )
    parser.add_argument("--ns", default=None, help="comma-separated N values (default 10,100,1000,10000)")
    parser.add_argument(
        "--repeat", type=int, default=None, help="fresh-process resumes per N (default 5; quick 1)"
    )
    parser.add_argument("--no-peers", action="store_true", help="skip LangGraph and DBOS")
    parser.add_argument("--peer-max-n", type=int, default=10000, help="largest N run with the peers")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--plot", nargs=2, metavar=("JSON", "PNG"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.plot:
        _plot(Path(args.plot[0]), Path(args.plot[1]))
        return 0
    if args.worker:
        kind, rest = args.worker[0], args.worker[1:]
        if kind == "agentrt-resume":
            print(json.dumps(asyncio.run(_agentrt_resume(Path(rest[0]), rest[1]))))
            return 0
        print(json.dumps(_peer_worker(kind, rest)))
        return 0

    started = time.monotonic()
    ns = (
        [int(x) for x in args.ns.split(",")]
        if args.ns
        else ([10, 100, 1000] if args.quick else [10, 100, 1000, 10000])
    )
    repeat = args.repeat or (1 if args.quick else 5)
    py = ".".join(platform.python_version_tuple()[:2])
    mode = "quick" if args.quick else "full"
    print(f"benchmarks/resume.py ({mode}) on CPython {platform.python_version()}", flush=True)
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "mode": mode,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "ns": ns,
        "repeat": repeat,
        "resume": {},
        "peers": {},
    }
    with tempfile.TemporaryDirectory(prefix="agentrt-bench-") as tmp:
        work = Path(tmp)
        result["resume"]["agentrt"] = bench_agentrt_resume(ns, repeat, work)
        result["memory"] = bench_agentrt_memory(200 if args.quick else 1000, work)
        if args.quick or args.no_peers:
            result["peers"]["skipped"] = "--quick" if args.quick else "--no-peers"
        else:
            python, reason = ensure_peers_venv()
            if python is None:
                print(f"  peers skipped: {reason}", flush=True)
                result["peers"]["skipped"] = reason
            else:
                peer_ns = [n for n in ns if n <= args.peer_max_n]
                peer_repeat = min(repeat, 3)
                for name in ("langgraph", "dbos"):
                    result["resume"][name] = bench_peer(name, python, peer_ns, peer_repeat, work)
                result["peers"]["repeat"] = peer_repeat
    rows = result["resume"]["agentrt"]
    flat = rows[str(max(ns))]["resume_s_median"] / rows[str(min(ns))]["resume_s_median"]
    result["agentrt_flatness"] = {"n_max_over_n_min": flat, "limit": 1.5, "ok": flat <= 1.5}
    print(f"  agentrt resume at N={max(ns)} is {flat:.2f}x the one at N={min(ns)} (limit 1.5x)", flush=True)
    result["seconds"] = time.monotonic() - started
    RESULTS.mkdir(exist_ok=True)
    stem = f"resume-{py}" + ("-quick" if args.quick else "")
    out = RESULTS / f"{stem}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  wrote {out.relative_to(REPO)}", flush=True)
    plotter = _plot_python()
    if plotter is None:
        print(
            "  no PNG: no venv with matplotlib (benchmarks/.venv-peers or .venv-plot); "
            "run without --quick once",
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
            print(f"  wrote {png.relative_to(REPO)}", flush=True)
        else:
            print(f"  no PNG: plotting failed: {proc.stderr.strip()[-300:]}", flush=True)
    print(f"done in {time.monotonic() - started:.1f} s", flush=True)
    if args.quick:
        # A smoke run proves the benchmark runs; one noisy sample per N says nothing about a ratio
        # (in CI it failed 6 times in 13), so the flatness limit is enforced by `make bench` only.
        return 0
    return 0 if result["agentrt_flatness"]["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
