#!/usr/bin/env python
"""What durability costs a model call: agentrt's ``task.llm`` beside plain loops, tool calls and raw HTTP.

    python benchmarks/llm.py            # full: N = 200 (HTTP: 100), median of 5 rounds, ~30 s
    python benchmarks/llm.py --quick    # CI smoke: N = 50 (HTTP: 20), median of 3 rounds, < 10 s

Every section times its variants side by side in one process, rounds interleaved (order rotated
each round, one warm-up round discarded), and reports the median per-call time of each and the
ratios between them: absolute times on a small noisy machine mean little, ratios taken at the same
moments do.  A runtime measurement is one whole run on a fresh SQLite store in a temp dir
(``SqliteStore`` defaults: WAL, ``synchronous=NORMAL``; ``Runtime`` defaults otherwise), timed from
``rt.start`` to ``rt.wait`` returning the output, divided by N: starting and finishing the run are
amortized over its N calls.  Agents and executors live in ``benchmarks/llm_agents.py``.

(a) Runtime overhead per model call.  An agent makes N sequential ``task.llm.generate_text``
    calls answered by a zero-latency executor (an async function returning a short text with
    usage).  Beside it: the same N executor calls from a plain asyncio loop, no runtime (the
    floor), and the same agent shape making N tool calls (``task.tools.answer``) instead.  Each
    durable call is a checkpoint plus a journal entry; a model call adds building the
    ``ExecutorRequest`` and journaling its usage.  Ratios: model call / tool call, runtime / plain.
(b) Latency-dominated view: the same, the executor (and the tool) sleeping 5 ms per call, as a
    fast model would take: the durable overhead as a percentage of the call.
(c) The OpenAI-compatible executor over HTTP: ``OpenAICompatExecutors`` against
    ``FakeOpenAIServer`` on 127.0.0.1 (in a child process: its own GIL, as a provider), called
    (i) directly in a loop and (ii) through the runtime agent, beside a raw
    ``httpx.AsyncClient.post`` loop to the same server (the floor).  The server's sockets get
    TCP_NODELAY here, as a real provider's have: the stdlib handler leaves Nagle's algorithm on,
    which stalls every answer on the client's delayed ACK (~40 ms each on Linux).
(d) Resume never re-asks (a check, not a timing): the N-call agent is stopped by closing its
    runtime once N/2 answers are journaled (call N/2+1 in flight), then resumed by a new
    ``Runtime`` on the same store.  The executor must be asked exactly the N/2 calls still owed
    (N/2+1 is tolerated for the in-flight one), never one whose answer is journaled.  Exit
    status 1 when it fails.

Results go to ``llm-<python>[-quick].json`` in the results folder (benchmarks/_env.py) and a
``.png`` bar chart beside it, drawn by this file (``--plot-only JSON PNG``) under an interpreter
that has matplotlib (this one, ``benchmarks/.venv-plot`` or ``.venv-peers``); without one the plot
is skipped and the reason printed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import _env  # benchmarks/_env.py: the results folder, the no-install switch

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:  # run from a checkout: this checkout's agentrt, whatever the cwd
    sys.path.insert(0, str(REPO))
RESULTS = _env.results_dir()
PLOT_VENV = HERE / ".venv-plot"

SETTINGS: dict[str, dict[str, int]] = {
    "full": {"n": 200, "repeat": 5, "http_n": 100},
    "quick": {"n": 50, "repeat": 3, "http_n": 20},
}
MODEL = "fake-model"


def _agents() -> Any:
    """``benchmarks/llm_agents.py``, imported by its package name so checkpoints name a real module."""
    return importlib.import_module("benchmarks.llm_agents")


# =============================================================================== measuring


async def _interleaved(
    measures: dict[str, Callable[[], Awaitable[float]]], repeat: int
) -> dict[str, list[float]]:
    """Seconds per call of every measure, ``repeat`` rounds after one warm-up round, order rotated."""
    names = list(measures)
    for name in names:  # warm-up: imports, SQLite, the bind-time scan, HTTP connections
        await measures[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeat):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            samples[name].append(await measures[name]())
    return samples


def _plain_request(i: int) -> Any:
    from agentrt.llm import ExecutorRequest

    return ExecutorRequest(
        kind="generate_text", src="step", run_id="plain", seq=i + 1, idx=0, agent="plain",
        prompt=f"Step {i}: say ok.",
    )  # fmt: skip


async def _plain_loop(generate: Callable[[Any], Awaitable[Any]], n: int) -> float:
    """N calls of ``generate`` from a plain loop: the floor.  The requests are built before the clock
    starts (an ``ExecutorRequest`` is agentrt's; building one is part of the runtime's cost)."""
    requests = [_plain_request(i) for i in range(n)]
    t0 = time.perf_counter()
    for request in requests:
        result = await generate(request)
    elapsed = time.perf_counter() - t0
    assert result.output, result
    return elapsed / n


class _Stores:
    """Fresh SQLite files in one temp dir, deleted after use."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.count = 0

    def new(self) -> Path:
        self.count += 1
        return self.work / f"bench-{self.count}.db"

    @staticmethod
    def remove(db: Path) -> None:
        for path in db.parent.glob(db.name + "*"):
            with contextlib.suppress(OSError):
                path.unlink()


async def _runtime_run(stores: _Stores, agent: Any, n: int, executors: Any, delay: float = 0.0) -> float:
    """One run of ``agent`` making ``n`` calls, on a fresh store: seconds per call, start to output."""
    from agentrt import Runtime
    from agentrt.stores import SqliteStore

    db = stores.new()
    store = SqliteStore(db)
    try:
        async with Runtime(store, executors=executors, max_model_calls=n + 10) as rt:
            t0 = time.perf_counter()
            run_id = await rt.start(agent, {"n": n, "delay": delay})
            out = await rt.wait(run_id, timeout=600)
            elapsed = time.perf_counter() - t0
    finally:
        store.close()
        stores.remove(db)
    assert out.calls == n, out
    return elapsed / n


def _summary(samples: dict[str, list[float]]) -> dict[str, Any]:
    return {
        name: {"median_s": statistics.median(values), "min_s": min(values), "samples_s": values}
        for name, values in samples.items()
    }


# =============================================================================== (a), (b)


async def bench_local(n: int, repeat: int, work: Path, *, fast: bool) -> dict[str, Any]:
    """(a) with the zero-latency executor, or (b) with the 5 ms one (``fast``)."""
    from agentrt.llm import Executors

    mod = _agents()
    generate = mod.fast_generate if fast else mod.instant_generate
    delay = mod.FAST_MODEL_SECONDS if fast else 0.0
    executors = Executors(generate_text=generate)
    stores = _Stores(work)
    samples = await _interleaved(
        {
            "plain": lambda: _plain_loop(generate, n),
            "runtime_tool": lambda: _runtime_run(stores, mod.tool_loop, n, executors, delay),
            "runtime_model": lambda: _runtime_run(stores, mod.ask_loop, n, executors),
        },
        repeat,
    )
    out = _summary(samples)
    plain, tool, model = (out[k]["median_s"] for k in ("plain", "runtime_tool", "runtime_model"))
    ratios = [m / t for m, t in zip(samples["runtime_model"], samples["runtime_tool"], strict=True)]
    return {
        "n": n,
        "repeat": repeat,
        "executor_seconds": delay,
        "per_call": out,
        "ratio_model_over_tool": model / tool,
        "ratio_model_over_tool_per_round_median": statistics.median(ratios),
        "ratio_runtime_model_over_plain": model / plain,
        "ratio_runtime_tool_over_plain": tool / plain,
        "overhead_per_model_call_s": model - plain,
        "overhead_per_tool_call_s": tool - plain,
        "overhead_model_pct_of_call": (model - plain) / plain * 100,
        "overhead_tool_pct_of_call": (tool - plain) / plain * 100,
    }


# =============================================================================== (c)


def serve_fake() -> int:
    """The ``--serve-fake`` child: a FakeOpenAIServer with TCP_NODELAY, serving until its stdin closes.

    The stdlib handler leaves Nagle's algorithm on: it writes the headers and the body apart, and the
    body then waits for the client's delayed ACK (~40 ms per request on Linux), which would swamp
    everything measured here.  Real providers answer with TCP_NODELAY; so does this server.
    """
    from agentrt.testing import openai_server

    nodelay = openai_server._Handler.disable_nagle_algorithm
    openai_server._Handler.disable_nagle_algorithm = True
    with openai_server.FakeOpenAIServer() as server:
        print(json.dumps({"url": server.url, "nodelay_was_set": bool(nodelay)}), flush=True)
        sys.stdin.read()  # until the benchmark closes our stdin (or dies)
    return 0


@contextlib.contextmanager
def _fake_server() -> Any:
    """A FakeOpenAIServer in a child process (its own GIL, like a real provider): yields its info."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--serve-fake"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the FakeOpenAIServer child exited ({proc.wait()}) before serving")
        yield json.loads(line)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def bench_http(n: int, repeat: int, work: Path) -> dict[str, Any]:
    import httpx

    from agentrt.llm.openai_compat import OpenAICompatExecutors

    mod = _agents()
    stores = _Stores(work)
    with _fake_server() as server:
        direct = OpenAICompatExecutors(server["url"], default_model=MODEL)
        durable = OpenAICompatExecutors(server["url"], default_model=MODEL)
        client = httpx.AsyncClient(timeout=60.0)  # what the executor makes for itself
        url = f"{server['url']}/chat/completions"

        async def raw_loop() -> float:
            t0 = time.perf_counter()
            for i in range(n):
                body = {"model": MODEL, "messages": [{"role": "user", "content": f"Step {i}: say ok."}]}
                response = await client.post(url, json=body, headers={"Idempotency-Key": f"raw:{i + 1}.0"})
                response.raise_for_status()
                data = response.json()
            elapsed = time.perf_counter() - t0
            assert data["choices"][0]["message"]["content"], data
            return elapsed / n

        try:
            samples = await _interleaved(
                {
                    "raw_httpx": raw_loop,
                    "executor": lambda: _plain_loop(direct.generate_text, n),
                    "runtime": lambda: _runtime_run(stores, mod.ask_loop, n, durable),
                },
                repeat,
            )
        finally:
            await client.aclose()
            await direct.aclose()
            await durable.aclose()
    out = _summary(samples)
    raw, executor, runtime = (out[k]["median_s"] for k in ("raw_httpx", "executor", "runtime"))
    return {
        "n": n,
        "repeat": repeat,
        "server": "agentrt.testing.openai_server.FakeOpenAIServer in a child process, 127.0.0.1",
        "server_tcp_nodelay": "already set by the server"
        if server["nodelay_was_set"]
        else "set by this benchmark (FakeOpenAIServer leaves Nagle on: ~40 ms per request)",
        "per_call": out,
        "ratio_executor_over_raw": executor / raw,
        "ratio_runtime_over_executor": runtime / executor,
        "ratio_runtime_over_raw": runtime / raw,
        "overhead_runtime_over_executor_s": runtime - executor,
    }


# =============================================================================== (d)


async def check_resume(n: int, work: Path) -> dict[str, Any]:
    from agentrt import Runtime
    from agentrt.llm import Executors
    from agentrt.stores import SqliteStore

    mod = _agents()
    half = n // 2
    db = work / "resume-check.db"
    run_id = "resume-check"

    first = mod.GatedCounter(hold_at=half + 1)  # call half+1 hangs: answers 1..half are journaled
    store = SqliteStore(db)
    async with Runtime(
        store, executors=Executors(generate_text=first.generate_text), max_model_calls=n + 10
    ) as rt:
        await rt.start(mod.ask_loop, {"n": n}, run_id=run_id)
        await asyncio.wait_for(first.held.wait(), 120)
    rec = store.get_run(run_id)
    journaled_before = rec.usage.get("model_calls", 0)
    status_after_close = rec.status
    store.close()

    second = mod.GatedCounter()
    store = SqliteStore(db)
    t0 = time.perf_counter()
    async with Runtime(
        store, executors=Executors(generate_text=second.generate_text), max_model_calls=n + 10
    ) as rt:
        await rt.resume(run_id)
        out = await rt.wait(run_id, timeout=120)
    resume_to_done = time.perf_counter() - t0
    final_calls = store.get_run(run_id).usage.get("model_calls", 0)
    store.close()

    answered_before = set(first.calls[:-1])  # the last one was in flight, its answer never journaled
    reasked = sorted(answered_before & set(second.calls))
    after = len(second.calls)
    checks = {
        "journaled_before_close_is_n_half": journaled_before == half,
        "calls_after_resume_is_n_half_or_plus_one": after in (n - half, n - half + 1),
        "no_journaled_answer_reasked": not reasked,
        "in_flight_call_reasked_with_same_request_id": bool(second.calls)
        and second.calls[0] == first.calls[-1],
        "run_completed_with_n_answers": out.calls == n and final_calls == n,
    }
    return {
        "n": n,
        "executor_calls_before_close": len(first.calls),
        "answers_journaled_before_close": journaled_before,
        "status_after_close": status_after_close,
        "executor_calls_after_resume": after,
        "expected_calls_after_resume": n - half,
        "journaled_answers_reasked": reasked,
        "model_calls_in_run_usage": final_calls,
        "resume_to_done_s": resume_to_done,
        "checks": checks,
        "ok": all(checks.values()),
    }


# =============================================================================== report


def _machine_info() -> dict[str, Any]:
    from _timing import machine_info  # benchmarks/ is sys.path[0] when run as a script

    return machine_info()


def package_versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in ("agentrt", "httpx", "attrs"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["sqlite"] = __import__("sqlite3").sqlite_version
    return out


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:,.3f} ms"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.3f} ms"


def _x(r: float) -> str:
    return f"{r:,.2f}×" if r < 100 else f"{r:,.0f}×"


def markdown(result: dict[str, Any]) -> str:
    s = result["settings"]
    a, b, c, d = result["instant"], result["fast"], result["http"], result["resume"]
    med = {
        k: {m: v["median_s"] for m, v in sec["per_call"].items()} for k, sec in (("a", a), ("b", b), ("c", c))
    }
    out = [
        f"### What durability costs a model call: CPython {result['python']}, {result['mode']} "
        f"(N = {s['n']}, HTTP N = {s['http_n']}; per call, median of {s['repeat']} interleaved rounds)",
        "",
        "| executor | plain loop (no runtime) | runtime, tool call | runtime, model call "
        "| model / tool | runtime model / plain | durable overhead per model call |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| (a) zero latency | {_us(med['a']['plain'])} | {_us(med['a']['runtime_tool'])} "
        f"| {_us(med['a']['runtime_model'])} | {_x(a['ratio_model_over_tool'])} "
        f"| {_x(a['ratio_runtime_model_over_plain'])} | {_us(a['overhead_per_model_call_s'])} |",
        f"| (b) 5 ms model | {_ms(med['b']['plain'])} | {_ms(med['b']['runtime_tool'])} "
        f"| {_ms(med['b']['runtime_model'])} | {_x(b['ratio_model_over_tool'])} "
        f"| {_x(b['ratio_runtime_model_over_plain'])} "
        f"| {_us(b['overhead_per_model_call_s'])} ({b['overhead_model_pct_of_call']:.1f} % of the call) |",
        "",
        "| (c) OpenAI-compatible over HTTP (FakeOpenAIServer, 127.0.0.1, TCP_NODELAY) | per call | ratio |",
        "|---|---:|---:|",
        f"| raw `httpx.AsyncClient.post` loop (floor) | {_ms(med['c']['raw_httpx'])} | 1.00× |",
        f"| `OpenAICompatExecutors.generate_text`, direct loop | {_ms(med['c']['executor'])} "
        f"| {_x(c['ratio_executor_over_raw'])} raw |",
        f"| same executor through the runtime agent | {_ms(med['c']['runtime'])} "
        f"| {_x(c['ratio_runtime_over_executor'])} direct, {_x(c['ratio_runtime_over_raw'])} raw |",
        "",
        f"(d) resume never re-asks: N = {d['n']}; {d['answers_journaled_before_close']} answers journaled "
        f"and {d['executor_calls_before_close']} executor calls before the close (one in flight); "
        f"{d['executor_calls_after_resume']} calls after resume "
        f"(expected {d['expected_calls_after_resume']}), "
        f"{len(d['journaled_answers_reasked'])} journaled answers re-asked: "
        + ("OK" if d["ok"] else "FAILED " + ", ".join(k for k, v in d["checks"].items() if not v)),
    ]
    return "\n".join(out)


# =============================================================================== plot


def plot(json_path: Path, png_path: Path) -> None:
    """The bar chart; runs under an interpreter with matplotlib (no agentrt needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    result = json.loads(json_path.read_text())
    a, b, c, d = result["instant"], result["fast"], result["http"], result["resume"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2))
    verdict = "OK" if d["ok"] else "FAILED"
    fig.suptitle(
        f"What durability costs a model call: CPython {result['python']} ({result['mode']}, "
        f"N = {result['settings']['n']}, median of {result['settings']['repeat']})   ·   "
        f"(d) after resume: {d['executor_calls_after_resume']} executor calls for "
        f"{d['expected_calls_after_resume']} answers owed, {len(d['journaled_answers_reasked'])} journaled "
        f"answers re-asked: {verdict}",
        fontsize=11,
    )
    colors = ["#c7c7c7", "#aec7e8", "#1f77b4"]

    def bars(ax: Any, labels: list[str], values: list[float], unit: str, notes: list[str]) -> None:
        ax.bar(labels, values, color=colors)
        top = max(values)
        for i, (v, note) in enumerate(zip(values, notes, strict=True)):
            ax.text(
                i,
                v + top * 0.01,
                f"{v:,.1f} {unit}" + (f"\n{note}" if note else ""),
                ha="center",
                va="bottom",
            )
        ax.set_ylim(0, top * 1.25)
        ax.set_ylabel(f"per call, {unit} (median)")
        ax.grid(True, axis="y", alpha=0.3)

    pa = a["per_call"]
    bars(
        axes[0],
        ["plain loop\n(no runtime)", "runtime\ntool call", "runtime\nmodel call"],
        [pa[k]["median_s"] * 1e6 for k in ("plain", "runtime_tool", "runtime_model")],
        "µs",
        ["", "", f"{a['ratio_model_over_tool']:.2f}× tool"],
    )
    axes[0].set_title("(a) zero-latency executor: runtime overhead")
    pb = b["per_call"]
    bars(
        axes[1],
        ["plain loop\n(no runtime)", "runtime\ntool call", "runtime\nmodel call"],
        [pb[k]["median_s"] * 1e3 for k in ("plain", "runtime_tool", "runtime_model")],
        "ms",
        ["", f"+{b['overhead_tool_pct_of_call']:.1f} %", f"+{b['overhead_model_pct_of_call']:.1f} %"],
    )
    axes[1].set_title("(b) 5 ms model: durable overhead, % of the call")
    pc = c["per_call"]
    bars(
        axes[2],
        ["raw httpx\n.post loop", "OpenAICompat\nexecutor, direct", "executor through\nthe runtime"],
        [pc[k]["median_s"] * 1e3 for k in ("raw_httpx", "executor", "runtime")],
        "ms",
        ["", f"{c['ratio_executor_over_raw']:.2f}× raw", f"{c['ratio_runtime_over_executor']:.2f}× direct"],
    )
    axes[2].set_title(f"(c) OpenAI-compatible over HTTP (N = {c['n']})")
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONHOME", None)
    return env


def _plot_python() -> tuple[str | None, str]:
    python = _env.plot_python()
    if python is None:
        return None, "no matplotlib here, in benchmarks/.venv-plot or in .venv-peers (make bench installs it)"
    return python, ""


def make_plot(json_path: Path, png_path: Path) -> str:
    python, reason = _plot_python()
    if python is None:
        return f"plot skipped: {reason}"
    proc = subprocess.run(
        [python, str(Path(__file__).resolve()), "--plot-only", str(json_path), str(png_path)],
        capture_output=True,
        text=True,
        env=_clean_env(),
        timeout=300,
    )
    if proc.returncode != 0:
        return "plot skipped: plotting failed: " + proc.stderr.strip()[-600:]
    return f"wrote {png_path.relative_to(REPO) if png_path.is_relative_to(REPO) else png_path}"


# =============================================================================== main


async def run_all(cfg: dict[str, int], work: Path) -> dict[str, Any]:
    n, repeat, http_n = cfg["n"], cfg["repeat"], cfg["http_n"]
    out: dict[str, Any] = {}
    print(f"  (a) zero-latency executor, N = {n} ...", flush=True)
    out["instant"] = await bench_local(n, repeat, work, fast=False)
    print(f"  (b) 5 ms executor, N = {n} ...", flush=True)
    out["fast"] = await bench_local(n, repeat, work, fast=True)
    print(f"  (c) OpenAI-compatible over HTTP, N = {http_n} ...", flush=True)
    out["http"] = await bench_http(http_n, repeat, work)
    print(f"  (d) resume check, N = {n} ...", flush=True)
    out["resume"] = await check_resume(n, work)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="CI smoke: N = 50 (HTTP 20), 3 rounds")
    parser.add_argument("--n", type=int, default=None, help="calls per run in (a), (b), (d)")
    parser.add_argument("--http-n", type=int, default=None, help="calls per run in (c)")
    parser.add_argument("--repeat", type=int, default=None, help="rounds per measure (median taken)")
    parser.add_argument(
        "--plot-only", nargs=2, metavar=("JSON", "PNG"), help="only draw the plot of a result"
    )
    parser.add_argument("--no-plot", dest="plot", action="store_false", help="do not draw the PNG")
    parser.add_argument("--serve-fake", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.plot_only:
        plot(Path(args.plot_only[0]), Path(args.plot_only[1]))
        return 0
    if args.serve_fake:
        return serve_fake()
    try:
        import httpx  # noqa: F401

        import agentrt  # noqa: F401
    except ImportError as exc:
        print(
            f"benchmarks/llm.py: cannot import {exc.name}: run it in a project venv "
            "(e.g. .venv-3.12/bin/python benchmarks/llm.py)",
            file=sys.stderr,
        )
        return 2

    started = time.monotonic()
    mode = "quick" if args.quick else "full"
    cfg = dict(SETTINGS[mode])
    for key, value in (("n", args.n), ("http_n", args.http_n), ("repeat", args.repeat)):
        if value:
            cfg[key] = value
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    print(f"benchmarks/llm.py ({mode}) on CPython {platform.python_version()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="agentrt-llm-bench-") as tmp:
        sections = asyncio.run(run_all(cfg, Path(tmp)))
    result: dict[str, Any] = {
        "benchmark": "llm",
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "mode": mode,
        "machine": _machine_info(),
        "packages": package_versions(),
        "settings": {**cfg, "fast_model_ms": _agents().FAST_MODEL_SECONDS * 1e3},
        "runtime_config": "SqliteStore(temp dir) defaults (WAL, synchronous=NORMAL, retention=100); "
        "Runtime defaults but max_model_calls=N+10",
        "method": "per call = one run (start to output) / N, median over interleaved rounds after a warm-up",
        **sections,
        "seconds": time.monotonic() - started,
    }
    print()
    print(markdown(result))
    print()
    stem = f"llm-{py}" + ("-quick" if args.quick else "")
    json_path = RESULTS / f"{stem}.json"
    json_path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"  wrote {_env.shown(json_path)}", flush=True)
    if args.plot:
        print(f"  {make_plot(json_path, RESULTS / f'{stem}.png')}", flush=True)
    print(f"done in {time.monotonic() - started:.1f} s", flush=True)
    if not result["resume"]["ok"]:
        print("FAILED: (d) resume re-asked the executor for journaled answers or miscounted", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
