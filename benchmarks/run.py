#!/usr/bin/env python
"""Run the benchmarks: the one driver behind ``make bench-smoke``, ``make bench-quick`` and ``make bench``.

    python benchmarks/run.py --smoke     # each benchmark with --quick: proves they run; judges nothing
    python benchmarks/run.py --quick     # < 6 min, offline: one table, every ratio against its target
    python benchmarks/run.py --full      # installs the peers first, then every benchmark in full
    python benchmarks/run.py --full --update-results   # ... rewriting the committed benchmarks/results/
    python benchmarks/run.py --quick --only coldstart,trap

Why one driver (issue 23): ``make bench`` used to pip-install a peer from the network in the middle
of a timed run, rewrite the committed result files and write its summary only at the very end.
Here:

* **Nothing installs while anything is timed.**  Every benchmark runs with
  ``AGENTRT_BENCH_NO_INSTALL=1`` (benchmarks/_env.py): a peer whose venv is missing is skipped and
  reported as "peer not installed (make bench installs it)".  ``--full`` first creates every peer
  venv (``benchmarks/.venv-peers``: LangGraph, DBOS, matplotlib; ``benchmarks/.venv-dispatch-3.X``:
  dispatch-py, where it has a wheel), and stops there with a clear message if PyPI cannot be
  reached.  ``--smoke`` and ``--quick`` never install and never reach the network.
* **Results go to an untracked folder**: ``benchmarks/results/local/`` (``smoke/`` and ``quick/``
  under it for those modes), unless ``--update-results`` points ``--full`` at the committed
  ``benchmarks/results/``.
* **The summary is written as it goes**: ``summary.md`` in the results folder is rewritten after
  every benchmark, so an interrupted run keeps what it measured.
* **One table at the end**: each figure beside its floor (measured in the same run, in interleaved
  rounds) or its peer, the ratio, the target and whether it is met.  Ratios only, medians with
  their spread; a missed target is reported, never a failure: the exit status is 1 only when a
  benchmark itself failed (crashed, or a correctness check inside it failed).  CI runs ``--smoke``.

``--quick`` runs each benchmark with fewer rounds (the sizes are in :data:`MODES`), leaves out the
cold-``.pyc`` column of the start-up benchmark and the fleet's throughput (it runs workers.py's
recovery part alone: SQLite, and PostgreSQL on a throwaway cluster when the server binaries are
there), and uses LangGraph, DBOS and dispatch-py only where ``make bench`` already
installed them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import _env  # noqa: E402  (benchmarks/_env.py: the results folder, the no-install switch)

BENCHMARKS = (
    "step",
    "coldstart",
    "trap",
    "checkpoint",
    "resume",
    "llm",
    "workers",
    # issue 26's prototypes: the floor of a leaner design, where today's code misses a target
    "step_floor",
    "checkpoint_floor",
    "store_floor",
)

#: The arguments each benchmark gets in each mode; a benchmark missing from a mode is not run in it.
MODES: dict[str, dict[str, list[str]]] = {
    "smoke": {name: ["--quick"] for name in BENCHMARKS},
    "quick": {
        "step": ["--rounds", "5", "--calls", "60"],
        "coldstart": ["--rounds", "7", "--warm-only"],
        "trap": ["--rounds", "7", "--n", "100000"],
        "checkpoint": ["--quick", "--rounds", "7", "--peers", "--no-plot"],
        "resume": [  # the peers (when installed) at N = 1000 only: each of their processes takes seconds
            *("--ns", "10,1000", "--repeat", "3", "--durability", "NORMAL"),
            *("--peer-min-n", "1000", "--peer-max-n", "1000"),
            *("--warm-only", "--memory-runs", "200", "--no-plot"),
        ],
        "llm": ["--quick", "--no-plot"],
        # recovery only (issue 26: <= 1 s from SIGKILL to a survivor running the run, default settings)
        "workers": ["--recovery-only", "--rounds", "3", "--systems", "sqlite,postgres"],
        "step_floor": ["--rounds", "3", "--calls", "300"],
        "checkpoint_floor": ["--rounds", "7"],
        "store_floor": ["--quick"],
    },
    "full": {name: [] for name in BENCHMARKS},
}
#: A benchmark that runs longer than this is stopped (and reported failed): a hung run must not
#: hold CI or a developer's terminal.
TIMEOUT_S = {"smoke": 300, "quick": 240, "full": 3600}
PY = f"{sys.version_info[0]}.{sys.version_info[1]}"


# --------------------------------------------------------------------------- set-up (--full)


def set_up_peers() -> list[str]:
    """Create every peer venv before anything is timed; the notes to print.  Exits 2 when a peer
    that is missing cannot be installed because PyPI cannot be reached."""
    import checkpoint
    import resume

    notes: list[str] = []
    missing = []
    probe = "import langgraph.func, langgraph.checkpoint.sqlite, dbos, matplotlib"
    peers = resume.PEERS_VENV / "bin" / "python"
    if not (
        peers.exists() and subprocess.run([str(peers), "-c", probe], capture_output=True).returncode == 0
    ):
        missing.append(f"{_env.shown(resume.PEERS_VENV)} ({', '.join(resume.PEER_PACKAGES)})")
    dispatch_venv = HERE / f".venv-dispatch-{PY}"
    want_dispatch = sys.version_info < (3, 13)  # dispatch-py 0.8 has no wheel for 3.13
    if want_dispatch and not checkpoint.python_can_import(
        checkpoint.venv_python(dispatch_venv), "dispatch.experimental.durable"
    ):
        missing.append(f"{_env.shown(dispatch_venv)} (dispatch-py)")
    if not want_dispatch:
        notes.append(f"dispatch-py: no wheel for CPython {PY}; checkpoint.py compares with it on 3.11/3.12")
    if not missing:
        return [*notes, "peers: every venv is already installed"]
    print(f"[set-up] installing the peers (once, before any timing): {'; '.join(missing)}", flush=True)
    reachable, why = _pypi_reachable()
    if not reachable:
        _set_up_failed(f"PyPI cannot be reached ({why})")
    python, reason = resume.ensure_peers_venv()
    if python is None:
        _set_up_failed(reason)
    notes.append(f"peers: {_env.shown(resume.PEERS_VENV)} ready")
    if want_dispatch:
        found, reason = checkpoint.ensure_side_venv(
            dispatch_venv,
            "dispatch.experimental.durable",
            checkpoint.DISPATCH_REQUIREMENTS,
            ("--only-binary", "dispatch-py"),
        )
        notes.append(
            f"dispatch-py: {_env.shown(dispatch_venv)} ready" if found else f"dispatch-py skipped: {reason}"
        )
    return notes


def _set_up_failed(reason: str) -> None:
    """Stop before anything is timed, saying why and what runs without the network."""
    print(
        "[set-up] make bench installs its peers (LangGraph, DBOS, dispatch-py, matplotlib) before any "
        f"timing, and could not: {reason}\n"
        "[set-up] Nothing was timed.  Offline? `make bench-quick` runs without them (each peer "
        "reported as not installed); `make bench` once online installs them for good.",
        file=sys.stderr,
    )
    sys.exit(2)


def _pypi_reachable() -> tuple[bool, str]:
    """Whether pip can reach its index now (one small query, 10 s at most)."""
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "index",
                "versions",
                "langgraph",
                "--timeout",
                "10",
                "--retries",
                "0",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        return False, str(exc)
    if proc.returncode == 0:
        return True, ""
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("ERROR")] or proc.stderr.splitlines()[-1:]
    return False, " ".join(lines)[:300] or f"pip exited {proc.returncode}"


# --------------------------------------------------------------------------- running


def run_benchmark(name: str, args: list[str], results: Path, mode: str) -> dict[str, Any]:
    """One benchmark in its own process, its output streamed; its exit status and wall time."""
    env = dict(os.environ)
    env[_env.RESULTS_ENV] = str(results)
    env[_env.NO_INSTALL_ENV] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    cmd = [sys.executable, str(HERE / f"{name}.py"), *args]
    print(f"\n==== {' '.join(['benchmarks/' + name + '.py', *args])}", flush=True)
    started = time.monotonic()
    try:
        code = subprocess.run(cmd, env=env, cwd=REPO, timeout=TIMEOUT_S[mode]).returncode
    except subprocess.TimeoutExpired:
        code = None
    seconds = time.monotonic() - started
    status = "ok" if code == 0 else ("timed out" if code is None else f"failed (exit {code})")
    print(f"==== {name}: {status} in {seconds:.1f} s", flush=True)
    return {"name": name, "args": args, "status": status, "seconds": seconds}


def write_summary(results: Path, mode: str) -> None:
    """summary.md (summary-quick.md for smoke and quick) in the results folder, from what is there."""
    env = {**os.environ, _env.RESULTS_ENV: str(results)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    cmd = [sys.executable, str(HERE / "summary.py"), "--mode", mode]
    if mode != "full":
        cmd.append("--quick")
    proc = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        print(f"[summary] not written: {last[0][-300:]}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the table

Row = tuple[str, str, str, str, str, str]  # measurement, value, floor or peer, ratio, target, status


def _load(results: Path, stem: str) -> dict[str, Any] | None:
    """The newest result of ``stem`` for this interpreter in ``results`` (quick- or full-named)."""
    stem = stem.replace("_", "-")  # step_floor.py writes step-floor-<python>.json
    names = [f"{stem}-{PY}.json", f"{stem}-{PY}-quick.json", f"{stem}.json", f"{stem}-quick.json"]
    names.append(f"{stem}-recovery.json")  # workers.py --recovery-only (the quick mode's run)
    found = [results / n for n in names if (results / n).exists()]
    if not found:
        return None
    return json.loads(max(found, key=lambda p: p.stat().st_mtime).read_text())


def _status(met: bool | None) -> str:
    return "—" if met is None else ("met" if met else "MISSED")


def _spread_us(c: dict[str, Any]) -> str:
    return f"{c['median_us']:,.0f} µs [{c['q1_us']:,.0f}–{c['q3_us']:,.0f}]"


def _spread_ms(c: dict[str, Any]) -> str:
    return f"{c['median'] * 1e3:,.1f} ms [{c['q1'] * 1e3:,.1f}–{c['q3'] * 1e3:,.1f}]"


def _times(ratio: float) -> str:
    """A ratio as ``1.23×``; one far below 1 with the digits that tell it from zero."""
    return f"{ratio:.2f}×" if ratio >= 0.1 else f"{ratio:.2g}×"


def _ns(v: float) -> str:
    return f"{v / 1e3:,.1f} µs" if v >= 1e4 else f"{v:,.0f} ns"


def step_rows(d: dict[str, Any]) -> list[Row]:
    rows, out = d["rows"], []
    hop = rows["bare thread hop"]
    for sync in ("NORMAL", "FULL"):
        floor = rows.get(f"floor: plain sqlite3 [{sync}]")
        if floor is None:
            continue
        for label, row, key, ref in (
            ("async tool", f"agentrt async tool [{sync}]", f"async tool / floor [{sync}]", ""),
            (
                "sync tool (minus a thread hop)",
                f"agentrt sync tool [{sync}]",
                f"(sync tool - thread hop) / floor [{sync}]",
                f" + hop {hop['median_us']:,.0f} µs",
            ),
            (
                "sync tool, inline",
                f"agentrt sync tool, inline [{sync}]",
                f"inline sync tool / floor [{sync}]",
                "",
            ),
        ):
            t = d["targets"].get(key)
            if t is None or row not in rows:
                continue
            out.append(
                (
                    f"durable step, {label}, SQLite WAL {sync}",
                    _spread_us(rows[row]),
                    f"plain sqlite3, same 2 tx: {floor['median_us']:,.0f} µs{ref}",
                    f"{t['ratio']:.2f}×",
                    f"≤ {t['target']}×",
                    _status(t["met"]),
                )
            )
    return out


def coldstart_rows(d: dict[str, Any]) -> list[Row]:
    out = []
    for t in d.get("targets", {}).values():
        if not isinstance(t, dict) or "row" not in t:  # a result from before issue 23
            continue
        cell, floor = d["columns"]["warm"][t["row"]], d["columns"]["warm"][t["floor"]]
        out.append(
            (
                f"start-up: {t['row']} (fresh process, warm .pyc)",
                _spread_ms(cell),
                f"python -c '{t['floor'].removeprefix('floor: ')}': {floor['median'] * 1e3:,.1f} ms",
                f"{t['ratio']:.2f}×",
                f"≤ {t['target']}×",
                _status(t["met"]),
            )
        )
    return out


def trap_rows(d: dict[str, Any]) -> list[Row]:
    a, f, t = d["rows"]["agentrt suspend"], d["rows"]["floor: @types.coroutine trap"], d["target"]
    return [
        (
            "await suspend(x), per suspension (coro.send)",
            f"{a['median_ns']:,.0f} ns [{a['min_ns']:,.0f}–{a['max_ns']:,.0f}]",
            f"@types.coroutine trap: {f['median_ns']:,.0f} ns",
            f"{t['ratio']:.2f}×",
            f"≤ {t['target']}×",
            _status(t["met"]),
        )
    ]


def checkpoint_rows(d: dict[str, Any]) -> list[Row]:
    out = []
    for key, sc in d.get("scenarios", {}).items():
        t = d["targets"].get(f"checkpoint_{key}", {})
        if "error" in sc or t.get("value") is None:
            out.append((f"checkpoint get+set+step, {key}", "failed", "", "", "", "error"))
            continue
        out.append(
            (
                f"checkpoint get + set + step, {sc.get('description', key)}",
                _ns(sc["agentrt_get_set_step_ns"]),
                f"cloudpickle dumps + loads: {_ns(sc['cloudpickle_dumps_loads_ns'])}",
                f"{t['value']:.2f}×",
                # checkpoint.py's own target; issue 16 asked <= 3x for (a) and (b), summary.md's bar
                f"≤ {t['target']}×" + (" (issue 16: 3×)" if key in ("a_flat20", "b_chain5") else ""),
                _status(t["met"]),
            )
        )
    for key, cy in d.get("cycles", {}).items():
        t = d["targets"].get(f"cycles_{key}", {})
        if "error" in cy or t.get("value") is None:
            continue
        m = cy["measurements"]
        out.append(
            (
                f"suspend/step cycle, {d['scenarios'].get(key, {}).get('description', key)}",
                f"{m['machine_step']['median_ns']:,.0f} ns (Machine.step)",
                f"coro.send: {m['coro_send']['median_ns']:,.0f} ns",
                f"{t['value']:.2f}×",
                f"≤ {t['target']}×",
                _status(t["met"]),
            )
        )
    disp, t = d.get("dispatch", {}), d["targets"].get("vs_dispatch_a_flat20", {})
    a = d.get("scenarios", {}).get("a_flat20", {})
    if "skipped" in disp or t.get("value") is None:
        reason = disp.get("skipped", "not measured")
        out.append(("checkpoint round trip vs dispatch-py, (a)", "", "dispatch-py", "", "< 1×", reason))
    else:
        out.append(
            (
                "checkpoint round trip vs dispatch-py, (a)",
                _ns(a["agentrt_get_set_step_ns"]),
                f"dispatch-py pickle round trip + step: {_ns(disp['dumps_loads_step_ns'])}",
                f"{t['value']:.2f}×",
                "< 1×",
                _status(t["met"]),
            )
        )
    return out


def resume_rows(d: dict[str, Any]) -> list[Row]:
    out: list[Row] = []
    sync = d["durabilities"][0]
    ours = d["resume"]["agentrt"][sync]
    ns = sorted(int(n) for n in ours)
    small, big = ours[str(ns[0])]["resume_warm"], ours[str(ns[-1])]["resume_warm"]
    f = d["agentrt_flatness"]
    out.append(
        (
            f"resume after N={ns[-1]:,} calls (fresh process, warm), SQLite WAL {sync}",
            _spread_ms(big),
            f"agentrt at N={ns[0]}: {small['median'] * 1e3:,.1f} ms",
            f"{f['n_max_over_n_min']:.2f}×",
            f"≤ {f['limit']}×",
            _status(f["ok"]),
        )
    )
    for peer in ("langgraph", "dbos"):
        label = {"langgraph": "LangGraph", "dbos": "DBOS"}[peer]
        rows = d["resume"].get(peer, {}).get(sync)
        if not rows:
            reason = d.get("peers", {}).get("skipped") or "not run"
            out.append((f"resume beside {label}", "", label, "", "no target (context)", reason))
            continue
        n = max(int(k) for k, r in rows.items() if "resume_warm" in r and str(k) in ours)
        theirs = rows[str(n)]["resume_warm"]
        mine = ours[str(n)]["resume_warm"]
        out.append(
            (
                f"resume after N={n:,} calls beside {label}",
                _spread_ms(mine),
                f"{label}: {theirs['median'] * 1e3:,.1f} ms",
                _times(mine["median"] / theirs["median"]),
                "no target (context)",
                "—",
            )
        )
    return out


def llm_rows(d: dict[str, Any]) -> list[Row]:
    out = []
    for section, label in (("instant", "zero-latency model"), ("fast", "5 ms model")):
        s = d.get(section)
        if not s:
            continue
        pc = s["per_call"]
        model, tool, plain = pc["runtime_model"], pc["runtime_tool"], pc["plain"]
        out.append(
            (
                f"durable model call, {label}",
                f"{model['median_s'] * 1e6:,.0f} µs",
                f"durable tool call: {tool['median_s'] * 1e6:,.0f} µs; "
                f"plain loop {plain['median_s'] * 1e6:,.1f} µs",
                f"{model['median_s'] / tool['median_s']:.2f}× tool",
                "no target (context)",
                "—",
            )
        )
    resume = d.get("resume")
    if resume:
        out.append(
            (
                "resume never re-asks a journaled model call",
                "check",
                "",
                "",
                "passes",
                "met" if resume["ok"] else "MISSED",
            )
        )
    return out


def workers_rows(d: dict[str, Any]) -> list[Row]:
    out = []
    by = {(t["system"], t["workers"]): t for t in d.get("throughput", [])}
    for (system, n), t in sorted(by.items()):
        if system != "agentrt-postgres":
            continue
        peer = by.get(("dbos-postgres", n))
        s = t["durable_steps_per_s_spread"]
        out.append(
            (
                f"fleet throughput, {n} worker(s), PostgreSQL",
                f"{s['median']:,.0f} steps/s [{s['q1']:,.0f}–{s['q3']:,.0f}]",
                f"DBOS: {peer['durable_steps_per_s']:,.0f} steps/s" if peer else "DBOS: not run",
                f"{t['durable_steps_per_s'] / peer['durable_steps_per_s']:.2f}× DBOS" if peer else "",
                "no target (context)",
                "—" if peer else d.get("dbos_skipped", "—"),
            )
        )
    for r in d.get("recovery", []):
        if not r["system"].startswith("agentrt-"):
            continue
        spread = r.get("kill_to_moving_spread")
        seconds = spread["median"] if spread else r.get("kill_to_moving_s")
        engine = "SQLite" if r["system"] == "agentrt-sqlite" else "PostgreSQL"
        where = ", the killed worker on another machine" if "another machine" in r["how"] else ""
        out.append(
            (
                f"recovery after SIGKILL, {engine}{where} (default settings)",
                f"{seconds:.3f} s" if seconds is not None else "not recovered",
                "an idle survivor takes the run",
                "",
                "<= 1 s",
                "met" if seconds is not None and seconds <= 1.0 and not r.get("not_recovered") else "MISSED",
            )
        )
    if not out:
        for t in d.get("throughput", []):
            s = t["durable_steps_per_s_spread"]
            out.append(
                (
                    f"fleet throughput, {t['workers']} worker(s), {t['system']}",
                    f"{s['median']:,.0f} steps/s",
                    "no peer in this run",
                    "",
                    "no target (context)",
                    "—",
                )
            )
    return out


def step_floor_rows(d: dict[str, Any]) -> list[Row]:
    rows = d["rows"]
    floor = rows["floor: plain sqlite3, 2 tx"]
    out = []
    for name in ("Runtime (async tool)", "shell", "shell, unpacked, no events", "shell, nothing written"):
        row = rows[name]
        out.append(
            (
                f"durable step CPU, {name}{' (prototype)' * name.startswith('shell')}, SQLite NORMAL",
                f"{row['cpu_us']:,.0f} µs [{row['iqr_us'][0]:,.0f}–{row['iqr_us'][1]:,.0f}]",
                f"plain sqlite3, same 2 tx: {floor['cpu_us']:,.0f} µs",
                f"{row['ratio_to_floor']:.2f}×",
                "≤ 2.0×",
                _status(row["ratio_to_floor"] <= 2.0),
            )
        )
    # against its own rows replayed with plain sqlite3 (absent from results made before the lean design)
    for name, ratio in d.get("to_its_rows_replayed", {}).items():
        row = rows[name]
        out.append(
            (
                f"durable step CPU, {name} (prototype), against its own rows",
                f"{row['cpu_us']:,.0f} µs [{row['iqr_us'][0]:,.0f}–{row['iqr_us'][1]:,.0f}]",
                "its rows replayed, plain sqlite3",
                f"{ratio:.2f}×",
                "≤ 2.0×",
                _status(ratio <= 2.0),
            )
        )
    return out


def checkpoint_floor_rows(d: dict[str, Any]) -> list[Row]:
    out = []
    for key, target in (("a_flat20", 3.0), ("b_chain5", 6.0)):
        sc = d["scenarios"][key]
        med = sc["median_ns"]
        cloud = med["cloudpickle_dumps"] + med["cloudpickle_loads"]
        for who in ("prototype", "agentrt"):
            total = med[f"{who}_get"] + med[f"{who}_set_step"]
            out.append(
                (
                    f"checkpoint get + set + step, {sc['description']}, "
                    + ("plain-frame prototype" if who == "prototype" else "agentrt (same run)"),
                    _ns(total),
                    f"cloudpickle of the values as tuples: {_ns(cloud)}",
                    f"{sc[f'{who}_ratio']:.2f}×",
                    f"≤ {target:g}× (issue 26)",
                    _status(sc[f"{who}_ratio"] <= target),
                )
            )
    return out


def store_floor_rows(d: dict[str, Any]) -> list[Row]:
    today = d["today"]["store_bytes_per_run"]
    out = []
    for name, layout in d["layouts"].items():
        size = layout["store_bytes_per_run"]
        out.append(
            (
                f"store bytes per waiting run, prototype layout: {name}",
                f"{size:,.0f} B",
                f"today's store, same runs: {today:,.0f} B",
                f"{size / today:.2f}× today",
                "≤ 1,200 B (issue 26)",
                _status(size <= 1200),
            )
        )
    return out


ROWS: dict[str, Callable[[dict[str, Any]], list[Row]]] = {
    "step": step_rows,
    "coldstart": coldstart_rows,
    "trap": trap_rows,
    "checkpoint": checkpoint_rows,
    "resume": resume_rows,
    "llm": llm_rows,
    "workers": workers_rows,
    "step_floor": step_floor_rows,
    "checkpoint_floor": checkpoint_floor_rows,
    "store_floor": store_floor_rows,
}


def table(results: Path, ran: list[dict[str, Any]], mode: str) -> list[str]:
    """The one table: a row per figure, from the result files this run wrote."""
    head: Row = (
        "measurement",
        "value: median [spread]",
        "floor or peer (same run)",
        "ratio",
        "target",
        "status",
    )
    rows: list[Row] = []
    for r in ran:
        if r["status"] != "ok":
            rows.append((f"{r['name']}.py", r["status"], "", "", "", "error"))
            continue
        data = _load(results, r["name"])
        if data is None:
            rows.append((f"{r['name']}.py", "no result file", "", "", "", "error"))
            continue
        try:
            rows += ROWS[r["name"]](data)
        except (KeyError, TypeError, ZeroDivisionError, ValueError) as exc:
            rows.append(
                (f"{r['name']}.py", f"unreadable result ({type(exc).__name__}: {exc})", "", "", "", "error")
            )
    if mode == "smoke":
        judged = ("met", "MISSED")  # a smoke run judges no timing ratio; a check (target "passes") it does
        rows = [(*r[:5], "not judged (smoke)" if r[5] in judged and r[4] != "passes" else r[5]) for r in rows]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(head, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    met = sum(row[5] == "met" for row in rows)
    missed = sum(row[5] == "MISSED" for row in rows)
    if mode != "smoke":
        lines.append(f"{met} met, {missed} missed (a missed target is reported, never a failure)")
    return lines


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--smoke", dest="mode", action="store_const", const="smoke", help="CI: proves they run"
    )
    which.add_argument("--quick", dest="mode", action="store_const", const="quick", help="< 6 min, offline")
    which.add_argument(
        "--full", dest="mode", action="store_const", const="full", help="peers first, then all"
    )
    which.add_argument(
        "--set-up",
        dest="mode",
        action="store_const",
        const="set-up",
        help="only install the peer venvs (online, once); --quick uses them from then on, offline",
    )
    parser.add_argument(
        "--update-results",
        action="store_true",
        help="--full only: write to the committed benchmarks/results/ instead of benchmarks/results/local/",
    )
    parser.add_argument("--only", default=None, help=f"comma-separated subset of {','.join(BENCHMARKS)}")
    parser.add_argument("--results", type=Path, default=None, help="the results folder (default: by mode)")
    args = parser.parse_args(argv)
    if args.update_results and args.mode != "full":
        parser.error("--update-results goes with --full (quick and smoke numbers are not for committing)")
    if args.mode == "set-up":
        if not _env.may_install():
            parser.error(f"--set-up installs, and {_env.NO_INSTALL_ENV} is set")
        for note in set_up_peers():
            print(f"[set-up] {note}", flush=True)
        return 0
    plan = MODES[args.mode]
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        unknown = [w for w in wanted if w not in BENCHMARKS]
        if unknown:
            parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
        # one that a mode leaves out runs as in the smoke run (never its full length by surprise)
        plan = {name: MODES[args.mode].get(name, MODES["smoke"][name]) for name in wanted}
    if args.results is not None:
        results = args.results.resolve()
    elif args.update_results:
        results = _env.COMMITTED
    else:
        results = _env.LOCAL if args.mode == "full" else _env.LOCAL / args.mode
    results.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    print(
        f"benchmarks/run.py --{args.mode}: {', '.join(plan)} on CPython {platform.python_version()}, "
        f"{os.cpu_count()} cores; results in {_env.shown(results)}",
        flush=True,
    )
    if args.mode == "full":
        if not _env.may_install():
            print(f"[set-up] skipped: {_env.NO_INSTALL_ENV} is set (peers only where installed)", flush=True)
        else:
            for note in set_up_peers():
                print(f"[set-up] {note}", flush=True)
        if "workers" in plan and not _pg_bin_found():
            print("[set-up] no PostgreSQL server binaries: workers.py measures SQLite only", flush=True)
    ran = []
    for name, extra in plan.items():
        ran.append(run_benchmark(name, extra, results, args.mode))
        if args.mode == "full":  # as it goes: an interrupted run keeps what it measured
            write_summary(results, args.mode)
            (results / "table.txt").write_text("\n".join(table(results, ran, args.mode)) + "\n")
    if args.mode != "full":
        write_summary(results, args.mode)
    lines = table(results, ran, args.mode)
    elapsed = time.monotonic() - started
    (results / "table.txt").write_text("\n".join(lines) + "\n")
    print(f"\n==== benchmarks/run.py --{args.mode} on CPython {platform.python_version()}: {elapsed:.0f} s")
    for r in ran:
        print(f"  {r['name']:<11} {r['status']:<16} {r['seconds']:6.1f} s")
    print()
    print("\n".join(lines))
    summary = results / ("summary.md" if args.mode == "full" else "summary-quick.md")
    print(f"\nsummary: {_env.shown(summary)}; table: {_env.shown(results / 'table.txt')}")
    return 1 if any(r["status"] != "ok" for r in ran) else 0


def _pg_bin_found() -> bool:
    """Whether tests/pgcluster.py will find PostgreSQL's server binaries (workers.py's cluster)."""
    sys.path.insert(0, str(REPO))
    try:
        from tests import pgcluster
    except ImportError:
        return False
    return pgcluster.find_bindir() is not None


if __name__ == "__main__":
    sys.exit(main())
