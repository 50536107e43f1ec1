"""The benchmark dashboard: one ``summary.md`` from the JSON results of a run.

    python benchmarks/summary.py            # after step.py, coldstart.py, resume.py, checkpoint.py
    python benchmarks/summary.py --quick    # from the --quick results (summary-quick.md; smoke only)

Results are read from, and the summary written to, the results folder (``benchmarks/_env.py``:
``benchmarks/results/local/`` unless ``AGENTRT_BENCH_RESULTS`` says otherwise); the before/base
files a summary compares with are read from the committed ``benchmarks/results/`` when the folder
has none.  ``benchmarks/run.py`` (``make bench``) rewrites the summary after every benchmark.

Every ratio is shown against its target (issue 16) and the floor it is a multiple of; every table
names the command that produced it and its like-for-like setting.  A missing result file is
reported as missing, never filled in.  Quick (smoke) results prove that the benchmarks run; their
ratios mean nothing and are marked so.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import _env  # benchmarks/_env.py: the results folder

HERE = Path(__file__).resolve().parent
RESULTS = _env.results_dir()


def _path(stem: str, py: str, quick: bool) -> Path:
    """The result file of ``stem``: a --quick run's (``-quick``) when ``quick``, else a full one's.

    With ``quick`` a full-named file stands in when there is no quick one (``make bench-quick`` runs
    some benchmarks with explicit sizes instead of --quick); a before/base file missing from the
    results folder is read from the committed results."""
    names = [f"{stem}-{py}-quick.json", f"{stem}-{py}.json"] if quick else [f"{stem}-{py}.json"]
    folders = [RESULTS] + ([_env.COMMITTED] if py.endswith(("-before", "-base")) else [])
    for folder in folders:
        for name in names:
            if (folder / name).exists():
                return folder / name
    return RESULTS / names[0]


def _load(stem: str, py: str, quick: bool) -> dict[str, Any] | None:
    path = _path(stem, py, quick)
    return json.loads(path.read_text()) if path.exists() else None


def _ok(met: bool | None) -> str:
    return "n/a" if met is None else ("met" if met else "**not met**")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def _cell(c: dict[str, Any]) -> str:
    """median [IQR q1-q3] in ms for a {median, q1, q3} of seconds."""
    return f"{_ms(c['median'])} [{_ms(c['q1'])}–{_ms(c['q3'])}]"


def targets_table(step: Any, cold: Any, ckpt: Any, resume: Any, trap: Any = None) -> list[str]:
    out = [
        "| measurement | setting | value | floor (same run) | target | status | command |",
        "|---|---|---|---|---|---|---|",
    ]
    if step:
        rows = step["rows"]
        hop = rows["bare thread hop"]["median_us"]
        for sync in ("NORMAL", "FULL"):
            floor = rows[f"floor: plain sqlite3 [{sync}]"]["median_us"]
            t = step["targets"][f"async tool / floor [{sync}]"]
            a = rows[f"agentrt async tool [{sync}]"]["median_us"]
            out.append(
                f"| durable step, async tool | SQLite WAL, synchronous={sync}, retention 100 | "
                f"{a:,.0f} µs = {t['ratio']:.2f}× floor | "
                f"{floor:,.0f} µs (plain sqlite3, 2 tx, same blobs) | "
                f"≤ {t['target']}× | {_ok(t['met'])} | `{step['command']}` |"
            )
            t = step["targets"][f"(sync tool - thread hop) / floor [{sync}]"]
            s = rows[f"agentrt sync tool [{sync}]"]["median_us"]
            out.append(
                f"| durable step, sync tool | SQLite WAL, synchronous={sync}, retention 100 | "
                f"{s:,.0f} µs = {t['ratio']:.2f}× floor + hop | {floor:,.0f} µs + {hop:,.0f} µs thread hop | "
                f"≤ {t['target']}× floor + hop | {_ok(t['met'])} | `{step['command']}` |"
            )
            t = step["targets"].get(f"inline sync tool / floor [{sync}]")
            if t is not None:
                i = rows[f"agentrt sync tool, inline [{sync}]"]["median_us"]
                out.append(
                    f"| durable step, sync tool `@tool(inline=True)` | SQLite WAL, synchronous={sync}, "
                    f"retention 100 | {i:,.0f} µs = {t['ratio']:.2f}× floor | {floor:,.0f} µs (no hop) | "
                    f"≤ {t['target']}× (as async) | {_ok(t['met'])} | `{step['command']}` |"
                )
    else:
        out.append("| durable step | — | no result (run `python benchmarks/step.py`) | | | | |")
    if cold and "targets" in cold and isinstance(cold["targets"], dict) and "cli_target_ratio" in cold:
        for t in cold["targets"].values():
            out.append(
                f"| cold start: `{t['row']}` | warm .pyc | "
                f"{_ms(t['value_s'])} ms = {t['ratio']:.2f}× floor | "
                f"{_ms(t['floor_s'])} ms (`python -c '{t['floor'].removeprefix('floor: ')}'`) | "
                f"≤ {t['target']}× | {_ok(t['met'])} | `{cold['command']}` |"
            )
    elif cold:
        for column in ("warm", "cold"):
            cells = cold["columns"][column]
            floor = cells["floor: import asyncio, attrs"]["median"]
            for name in ("import agentrt", "agentrt runs (empty store)"):
                c = cells[name]
                out.append(
                    f"| cold start: `{name}` | {column} .pyc | {_ms(c['median'])} ms = "
                    f"{c['ratio_to_floor']:.2f}× floor | "
                    f"{_ms(floor)} ms (`python -c 'import asyncio, attrs'`) | "
                    f"≤ {cold['target_ratio']}× | {_ok(c['ratio_to_floor'] <= cold['target_ratio'])} | "
                    f"`{cold['command']}` |"
                )
    else:
        out.append("| cold start | — | no result (run `python benchmarks/coldstart.py`) | | | | |")
    if ckpt:
        for key, label in (
            ("checkpoint_a_flat20", "20-local frame"),
            ("checkpoint_b_chain5", "5-deep chain"),
        ):
            t = ckpt.get("targets", {}).get(key)
            if t and t.get("value") is not None:
                out.append(
                    f"| checkpoint get + set + step, {label} | in memory | {t['value']:.2f}× floor | "
                    f"cloudpickle dumps + loads of the same locals | ≤ 3× (issue 16) | "
                    f"{_ok(t['value'] <= 3.0)} | `{ckpt.get('command', 'python benchmarks/checkpoint.py')}` |"
                )
        t = ckpt.get("targets", {}).get("vs_dispatch_a_flat20")
        if t and t.get("value") is not None:
            out.append(
                f"| checkpoint vs dispatch-py, 20-local frame | in memory | {t['value']:.2f}× | "
                f"dispatch-py pickle round trip + step | < 1× | {_ok(t['met'])} | "
                f"`{ckpt.get('command', 'python benchmarks/checkpoint.py')}` |"
            )
    else:
        out.append("| checkpoint | — | no result (run `python benchmarks/checkpoint.py`) | | | | |")
    if trap:
        t = trap["target"]
        floor = trap["rows"]["floor: @types.coroutine trap"]["median_ns"]
        out.append(
            f"| suspend trap, per suspension | in memory, driven by `coro.send` | "
            f"{trap['rows']['agentrt suspend']['median_ns']:,.0f} ns = {t['ratio']:.2f}× floor | "
            f"{floor:,.0f} ns (`@types.coroutine` trap) | ≤ {t['target']}× | {_ok(t['met'])} | "
            f"`{trap['command']}` |"
        )
    if resume and "agentrt_flatness" in resume:
        f = resume["agentrt_flatness"]
        ns = resume["ns"]
        fastest = f.get("n_max_over_n_min_fastest")
        extra = f" (fastest of {resume['repeat']}: {fastest:.2f}×)" if fastest is not None else ""
        out.append(
            f"| resume flat in N (agentrt, warm) | SQLite WAL, synchronous={resume['durabilities'][0]} | "
            f"N={max(ns)} is {f['n_max_over_n_min']:.2f}× N={min(ns)}{extra} | resume at N={min(ns)} | "
            f"≤ 1.5× | {_ok(f['ok'])} | `{resume.get('command', 'python benchmarks/resume.py')}` |"
        )
    out += _resume_targets(resume) if resume else []
    return out


#: issue 26: the first restore in a fresh process, and what a waiting run keeps in the store
FIRST_RESUME_TARGET_MS = 10.0
WAITING_RUN_TARGET_BYTES = 1200


def _resume_targets(resume: dict[str, Any]) -> list[str]:
    """Rows for the first resume of a fresh process (the smallest N, warm) and the store bytes of a
    waiting run, when the run measured them."""
    out = []
    command = resume.get("command", "python benchmarks/resume.py")
    for sync, sizes in resume.get("resume", {}).get("agentrt", {}).items():
        row = sizes.get(str(min(resume["ns"]))) if resume.get("ns") else None
        if not row or "resume_warm" not in row:
            continue
        ms = row["resume_warm"]["median"] * 1000
        out.append(
            f"| first resume in a fresh process (agentrt, warm, imports excluded) | SQLite WAL, "
            f"synchronous={sync}, N={row['n']} | {ms:.1f} ms | - | ≤ {FIRST_RESUME_TARGET_MS:.0f} ms | "
            f"{_ok(ms <= FIRST_RESUME_TARGET_MS)} | `{command}` |"
        )
    waiting = resume.get("memory", {}).get("waiting_for_reply")
    if waiting and "store_bytes_per_run" in waiting:
        stored = waiting["store_bytes_per_run"]
        retention = waiting["store_settings"]["retention"]
        measured_by = resume["memory"].get("command", command)
        out.append(
            f"| store bytes per waiting run (agentrt) | SQLite, retention {retention} "
            f"| {stored:,.0f} B | - | ≤ {WAITING_RUN_TARGET_BYTES:,} B | "
            f"{_ok(stored <= WAITING_RUN_TARGET_BYTES)} | `{measured_by}` |"
        )
    return out


def step_section(step: dict[str, Any]) -> list[str]:
    out = [
        "## The durable step",
        "",
        f"`{step['command']}` — {step['rounds']} interleaved rounds "
        f"of {step['calls_per_run']} calls per row; "
        f"SQLite {step['sqlite']}, WAL; blobs: journal entry {step['blob_bytes']['journal_entry']} B, "
        f"checkpoint {step['blob_bytes']['checkpoint']} B. Median [IQR] (min–max), µs per call.",
        "",
        "| row | median [IQR] | min–max |",
        "|---|---|---|",
    ]
    for name, c in step["rows"].items():
        out.append(
            f"| {name} | {c['median_us']:,.1f} [{c['q1_us']:,.1f}–{c['q3_us']:,.1f}] | "
            f"{c['min_us']:,.1f}–{c['max_us']:,.1f} |"
        )
    out += ["", "SQLite statements agentrt issues per tool call (trace callback):", ""]
    for kind, counts in step["statements_per_call"].items():
        out.append(f"- {kind}: " + ", ".join(f"{k} {v:g}" for k, v in counts.items()))
    return [*out, ""]


def cold_section(cold: dict[str, Any]) -> list[str]:
    out = [
        "## Cold start",
        "",
        f"`{cold['command']}` — {cold['rounds']} interleaved rounds; wall time of a fresh process, "
        "spawn to exit. **warm**: `.pyc` present; **cold**: `PYTHONPYCACHEPREFIX` at a fresh empty "
        "directory (nothing imported from a `.pyc`, on both sides of the ratio). Median [IQR], ms.",
        "",
        "| command | warm | × floor | cold | × floor |",
        "|---|---|---|---|---|",
    ]
    for name in cold["columns"]["warm"]:
        w, c = cold["columns"]["warm"][name], cold["columns"].get("cold", {}).get(name)
        cold_cells = f"{_cell(c)} | {c['ratio_to_floor']:.2f}" if c else "not measured (--warm-only) | —"
        out.append(f"| `{name}` | {_cell(w)} | {w['ratio_to_floor']:.2f} | {cold_cells} |")
    it = cold.get("importtime", {}).get("import agentrt")
    if it:
        out += [
            "",
            f"`python -X importtime -c 'import agentrt'`: {it[0]['modules_imported']} modules; "
            "slowest (cumulative µs): " + ", ".join(f"{r['module']} {r['cumulative_us']:,}" for r in it[1:8]),
        ]
    return [*out, ""]


def resume_section(resume: dict[str, Any]) -> list[str]:
    out = [
        "## Resume, forward throughput and memory, beside LangGraph and DBOS",
        "",
        f"`{resume.get('command', 'python benchmarks/resume.py')}` — "
        "every system on SQLite in WAL mode at the "
        "same `synchronous` setting (one table per setting); resumes in fresh processes, "
        f"{resume['repeat']} interleaved rounds; **warm**: `.pyc` and agentrt's code cache present; "
        "**cold**: fresh `PYTHONPYCACHEPREFIX` and `AGENTRT_CODE_CACHE=0`. "
        "Resume = deliver the reply → code past the wait, in process (imports excluded); "
        "process = spawn to exit. Median [IQR], ms.",
        "",
    ]
    if resume.get("peers", {}).get("skipped"):
        out += [f"Peers skipped: {resume['peers']['skipped']}.", ""]
    for sync in resume["durabilities"]:
        out += [
            f"### synchronous={sync}",
            "",
            "| system | N | forward calls/s | resume warm | resume cold | process warm | process cold |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, per_sync in resume["resume"].items():
            for row in per_sync.get(sync, {}).values():
                if "error" in row:
                    out.append(f"| {name} | {row['n']} | failed: {row['error'][-120:]!r} | | | | |")
                    continue
                cells = [
                    _cell(row[k]) if k in row else "—"
                    for k in ("resume_warm", "resume_cold", "process_warm", "process_cold")
                ]
                out.append(f"| {name} | {row['n']} | {row['calls_per_s']:,.0f} | " + " | ".join(cells) + " |")
        out.append("")
    mem = resume.get("memory")
    if mem:
        s, w = mem["suspended_in_memory"], mem["waiting_for_reply"]
        out += [
            "Memory per run (agentrt, default retention 100, tracemalloc): "
            f"{s['python_bytes_per_run'] / 1e3:.1f} kB suspended in memory with a call in flight; "
            f"{w['python_bytes_per_run'] / 1e3:.2f} kB in memory + {w['store_bytes_per_run'] / 1e3:.1f} kB "
            "in the store per run waiting for a reply"
            + (f" (`{mem['command']}`)." if mem.get("command") else "."),
            "",
        ]
    return out


def build(py: str, quick: bool, mode: str | None = None) -> str:
    """The summary's Markdown; ``mode`` (smoke, quick, full) says how much its ratios mean."""
    step, cold = _load("step", py, quick), _load("coldstart", py, quick)
    ckpt, resume = _load("checkpoint", py, quick), _load("resume", py, quick)
    trap = _load("trap", py, quick)
    lines = [
        "# agentrt benchmark summary",
        "",
        "Written by `make bench` (`python benchmarks/summary.py`) on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"CPython {py}. Every ratio is taken against a floor measured in the same run, in interleaved "
        "rounds; absolute times depend on the machine (shared and noisy when these were taken), ratios "
        "much less.",
        "",
    ]
    if mode == "quick":
        lines += [
            "**Quick run (`make bench-quick`): few rounds, so the ratios are rougher than a full run's; "
            "peers only where their venvs already existed.**",
            "",
        ]
    elif quick:
        lines += ["**Smoke run (--quick): these numbers only prove that the benchmarks run.**", ""]
    sources = []
    for stem, data in (
        ("step", step),
        ("coldstart", cold),
        ("trap", trap),
        ("checkpoint", ckpt),
        ("resume", resume),
    ):
        path = _path(stem, py, quick)
        if data is not None:
            when = data.get("created_utc") or time.strftime(
                "%Y-%m-%d %H:%M UTC", time.gmtime(path.stat().st_mtime)
            )
            sources.append(f"`{path.name}` ({when})")
        else:
            sources.append(f"`{path.name}` (missing)")
    lines += ["Sources: " + ", ".join(sources) + ".", ""]
    lines += ["## Targets (issues 16 and 23)", "", *targets_table(step, cold, ckpt, resume, trap), ""]
    if step:
        lines += step_section(step)
    step_before = None if quick else _load("step", f"{py}-before", False)
    if step and step_before:
        tb = step_before["targets"]
        lines += [
            "Before issue 16's step work (`python benchmarks/step.py` on a checkout of "
            f"{step_before.get('tree', 'the previous main')}, same machine, minutes apart, its own floor): "
            + "; ".join(f"{name} {t['ratio']:.2f}×" for name, t in tb.items())
            + ". Statements per async tool call then: "
            + ", ".join(f"{k} {v:g}" for k, v in step_before["statements_per_call"]["async tool"].items())
            + ".",
            "",
        ]
    step_base = None if quick else _load("step", f"{py}-base", False)
    if step and step_base:
        tb = step_base["targets"]
        lines += [
            f"The base of the latest step work (`python benchmarks/step.py` on {step_base['tree']}): "
            + "; ".join(f"{name} {t['ratio']:.2f}×" for name, t in tb.items())
            + ". Statements per async tool call then: "
            + ", ".join(f"{k} {v:g}" for k, v in step_base["statements_per_call"]["async tool"].items())
            + ".",
            "",
        ]
    if cold:
        lines += cold_section(cold)
    before = None if quick else _load("coldstart", f"{py}-before", False)
    if before:
        lines += [
            f"Before (`{before['command']}` on {before.get('tree', 'another checkout')}, "
            "its own floor): "
            + "; ".join(
                f"`{name}` {c['ratio_to_floor']:.2f}× warm"
                + (
                    f", {before['columns']['cold'][name]['ratio_to_floor']:.2f}× cold"
                    if name in before["columns"].get("cold", {})
                    else ""
                )
                for name, c in before["columns"]["warm"].items()
                if name in ("import agentrt", "agentrt runs (empty store)")
            )
            + f"; `import agentrt` imported {before['importtime']['import agentrt'][0]['modules_imported']} "
            "modules.",
            "",
        ]
    if resume:
        lines += resume_section(resume)
    plots = sorted(p.name for p in RESULTS.glob(f"*-{py}{'-quick' if quick else ''}.png"))
    plots = [p for p in plots if (RESULTS / p).exists()]
    if plots:
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in plots] + [""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="summarize the --quick (smoke) results")
    parser.add_argument("--python", default=None, help="the X.Y whose results to read (default: this one)")
    parser.add_argument("--mode", choices=("smoke", "quick", "full"), default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    py = args.python or ".".join(platform.python_version_tuple()[:2])
    path = RESULTS / ("summary-quick.md" if args.quick else "summary.md")
    tmp = path.with_name(path.name + ".tmp")  # whole or not at all: run.py rewrites it as it goes
    tmp.write_text(build(py, args.quick, args.mode))
    tmp.replace(path)
    print(f"wrote {_env.shown(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
