#!/usr/bin/env python
"""agentrt checkpoint benchmark: the cost of one checkpoint and one restore, per suspension.

    python benchmarks/checkpoint.py                 # full run (`make bench`), 1-2 minutes
    python benchmarks/checkpoint.py --quick         # smoke run (`make bench-smoke`), < 20 s
    python benchmarks/checkpoint.py --python-all    # run under .venv-3.11/.venv-3.12/.venv-3.13, merge

Measured side by side, in the same process and run, with rounds interleaved (see
benchmarks/_timing.py for the method):

1. Three scenarios, each checkpointed at a steady-state suspension (the 3rd):
   (a) one frame with 20 locals, (b) a 5-deep chain of agent coroutines,
   (c) ~1 MB of state live across the await (checkpoint_agents.py).
   For each: ``m.get()``; ``Machine.set(blob)`` alone; ``Machine.set(blob)`` + ``step(value)``
   to the next suspension (a fresh restored machine every repetition, dropped inside the timed
   loop, so its cleanup -- ``discard`` -- is timed too); the blob's size.
   Beside them: ``cloudpickle.dumps`` and ``cloudpickle.loads`` of the same live values
   (the locals of every frame of the chain, as a tuple of dicts; the loaded values are freed
   inside the timed loop too).
   Ratio = (get + set+step) / (dumps + loads); target <= 2x.
2. 100k suspend/step cycles without checkpoints: ``Machine.step`` vs driving the same
   coroutine by hand with ``coro.send`` (both alive at once, timed in alternating chunks of
   500 steps so both see the same moments of a noisy machine).  Ratio target <= 1.2x.
3. dispatch-py 0.8 (``@durable``), scenario (a), in its own venv
   ``benchmarks/.venv-dispatch-3.X`` (never an agentrt dependency; made by ``make bench``'s set-up,
   or on demand when run by hand without ``AGENTRT_BENCH_NO_INSTALL``) and run
   as a subprocess (_dispatch_worker.py): ``pickle.dumps`` of the suspended durable
   coroutine, ``pickle.loads`` + one step.  Ratio = agentrt (get + set+step) / dispatch
   (dumps + loads+step); target < 1 (agentrt faster).  Skipped, with the reason printed,
   where it cannot be installed (CPython 3.13, offline).

Writes ``checkpoint-<python>.json`` to the results folder (benchmarks/_env.py; ``-quick`` added
with --quick, so a smoke run never overwrites a full one) and a PNG bar plot beside it (matplotlib,
from a benchmark venv: see ``_env.plot_python``), and prints Markdown tables.
--quick never installs anything unless --peers is given.  Exit status 1 when a checkpoint
or restore failed (a missed target is reported, not an error).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import json
import os
import platform
import pstats
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _env  # benchmarks/_env.py: the results folder, the no-install switch

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = _env.results_dir()
PY_TAG = f"{sys.version_info[0]}.{sys.version_info[1]}"
VERSIONS = ("3.11", "3.12", "3.13")

TARGET_CHECKPOINT = 2.0  # (get + set + step) / (cloudpickle dumps + loads)
TARGET_CYCLES = 1.2  # Machine.step / coro.send
TARGET_DISPATCH = 1.0  # agentrt (get + set + step) / dispatch-py (dumps + loads + step): below 1
CHECKPOINT_AT = 3  # checkpoint at the 3rd suspension: a steady state of every scenario agent

DISPATCH_REQUIREMENTS = ("dispatch-py==0.8.*", "http-sfv")
PIP = ("-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--timeout", "20", "--retries", "1")

SETTINGS: dict[str, dict[str, Any]] = {
    # rounds per measure, target duration of one round, min repetitions per round, time
    # budget per scenario (fewer rounds, never < 3, when even min_reps would exceed it)
    "full": {
        "rounds": 21,
        "min_round_ms": 50.0,
        "min_reps": 1,
        "scenario_budget_s": 120.0,
        "cycles": 100_000,
        "cycle_chunk": 500,
        "cycle_rounds": 21,
        "cycle_warmup_rounds": 1,
        "warmup_calls": 3,
        "profile_reps": 200,
    },
    "quick": {
        "rounds": 3,
        "min_round_ms": 4.0,
        "min_reps": 1,
        "scenario_budget_s": 1.5,
        "cycles": 100_000,
        "cycle_chunk": 500,
        "cycle_rounds": 3,
        "cycle_warmup_rounds": 0,
        "warmup_calls": 1,
        "profile_reps": 20,
    },
}

# Benchmark the checkout this file belongs to, whatever else is installed: an editable
# install can map `agentrt` to a namespace package (no __init__) when it predates it.
if str(REPO) not in sys.path[:2]:
    sys.path.insert(1, str(REPO))


# --------------------------------------------------------------------------- formatting


def fmt_ns(ns: float | None) -> str:
    if ns is None:
        return "-"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    if n < 10_000:
        return f"{n} B"
    if n < 10_000_000:
        return f"{n / 1e3:.0f} kB"
    return f"{n / 1e6:.1f} MB"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}×"


def verdict(target: dict[str, Any] | None) -> str:
    if not target or target.get("value") is None:
        return "-"
    return "met" if target["met"] else f"**MISSED** (+{target['missed_by_pct']:.0f}%)"


def ratio_cell(target: dict[str, Any] | None) -> str:
    if not target or target.get("value") is None:
        return "-"
    return f"{fmt_ratio(target['value'])} {verdict(target)}"


# --------------------------------------------------------------------------- environment


def _machine_info() -> dict[str, Any]:
    from _timing import machine_info

    return machine_info()


def python_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "build": list(platform.python_build()),
        "compiler": platform.python_compiler(),
        "executable": sys.executable,
        "optimize_flag": sys.flags.optimize,
    }
    if hasattr(sys, "_is_gil_enabled"):
        info["gil_enabled"] = sys._is_gil_enabled()
    return info


def package_versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in ("agentrt", "cloudpickle", "bytecode", "attrs", "structlog"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    import agentrt

    out["agentrt_path"] = str(Path(next(iter(agentrt.__path__))).resolve())
    return out


# --------------------------------------------------------------------------- targets


def target(
    name: str, value: float | None, limit: float, *, strict: bool = False, what: str = ""
) -> dict[str, Any]:
    """``value`` must be <= limit (< limit when strict)."""
    if value is None:
        return {"name": name, "value": None, "target": limit, "met": None, "what": what}
    met = value < limit if strict else value <= limit
    return {
        "name": name,
        "value": round(value, 4),
        "target": limit,
        "comparison": "<" if strict else "<=",
        "met": met,
        "missed_by": None if met else round(value - limit, 4),
        "missed_by_pct": 0.0 if met else round((value / limit - 1) * 100, 1),
        "what": what,
    }


# --------------------------------------------------------------------------- scenarios


def chain_frames(coro: Any) -> list[Any]:
    """The frames of a suspended coroutine chain, outermost first (via cr_await)."""
    frames = []
    while coro is not None and hasattr(coro, "cr_frame"):
        frames.append(coro.cr_frame)
        coro = coro.cr_await
    return frames


def live_locals(fn: Callable[..., Any], args: tuple[Any, ...], value: Any) -> tuple[dict[str, Any], ...]:
    """The same live values as the checkpointed machine holds: driven by hand to the same
    suspension, the locals of every frame of the chain (a tuple of dicts)."""
    coro = fn(*args)
    coro.send(None)
    for _ in range(CHECKPOINT_AT - 1):
        coro.send(value)
    values = tuple(dict(frame.f_locals) for frame in chain_frames(coro))
    # the coroutine is left suspended (alive) on purpose: its locals are the live values
    live_locals.keep.append(coro)  # type: ignore[attr-defined]
    return values


live_locals.keep = []  # type: ignore[attr-defined]


def advanced_machine(fn: Callable[..., Any], args: tuple[Any, ...], value: Any) -> tuple[Any, Any]:
    from agentrt.lowlevel import Machine

    m = Machine(fn, *args)
    payload = m.step()
    for _ in range(CHECKPOINT_AT - 1):
        payload = m.step(value)
    return m, payload


def bench_scenario(
    key: str, desc: str, fn: Callable[..., Any], args: tuple[Any, ...], value: Any, cfg: dict[str, Any]
) -> dict[str, Any]:
    import cloudpickle

    from agentrt.lowlevel import Machine

    m, payload = advanced_machine(fn, args, value)
    blob = m.get()

    # Sanity checks before timing anything: the restored machine waits on the same payload
    # and steps exactly like an uninterrupted machine; the original carries on after get().
    restored = Machine.set(blob)
    if restored.pending != payload:
        raise AssertionError(f"restored.pending {restored.pending!r} != {payload!r}")
    reference, _ = advanced_machine(fn, args, value)
    want = reference.step(value)
    got = restored.step(value)
    if got != want:
        raise AssertionError(f"restored machine stepped to {got!r}, an uninterrupted one to {want!r}")
    again = Machine.set(m.get())
    if again.step(value) != want:
        raise AssertionError("a second get() of the same machine restored differently")
    deterministic = m.get() == blob

    values = live_locals(fn, args, value)
    pickled = cloudpickle.dumps(values)
    if cloudpickle.loads(pickled) != values:
        raise AssertionError("cloudpickle round trip of the live locals is not equal")

    def set_only() -> Any:
        return Machine.set(blob)

    def set_step() -> None:
        # the restored machine is dropped inside the timed loop: its cleanup (``discard``, which
        # abandons the chain without running its ``finally`` blocks) is part of every restore
        Machine.set(blob).step(value)

    def loads() -> None:
        cloudpickle.loads(pickled)  # likewise: the loaded values are freed inside the loop

    from _timing import run_interleaved

    timings = run_interleaved(
        {
            "get": m.get,
            "set": set_only,
            "set_step": set_step,
            "cloudpickle_dumps": lambda: cloudpickle.dumps(values),
            "cloudpickle_loads": loads,
        },
        rounds=cfg["rounds"],
        min_round_ns=int(cfg["min_round_ms"] * 1e6),
        min_reps=cfg["min_reps"],
        budget_ns=int(cfg["scenario_budget_s"] * 1e9),
        min_rounds=min(3, cfg["rounds"]),
        warmup=cfg["warmup_calls"],
    )
    med = {k: v["median_ns"] for k, v in timings.items()}
    agentrt_ns = med["get"] + med["set_step"]
    cloudpickle_ns = med["cloudpickle_dumps"] + med["cloudpickle_loads"]
    paired = sorted(
        (g + s) / (d + lo)
        for g, s, d, lo in zip(
            timings["get"]["per_round_ns"],
            timings["set_step"]["per_round_ns"],
            timings["cloudpickle_dumps"]["per_round_ns"],
            timings["cloudpickle_loads"]["per_round_ns"],
            strict=True,
        )
    )
    ratio = agentrt_ns / cloudpickle_ns
    return {
        "description": desc,
        "agent": f"{fn.__module__}:{fn.__qualname__}",
        "frames": len(chain_frames(live_locals.keep[-1])),  # type: ignore[attr-defined]
        "locals": sum(len(d) for d in values),
        "checkpoint_at_suspension": CHECKPOINT_AT,
        "payload": repr(payload),
        "blob_bytes": len(blob),
        "blob_deterministic": deterministic,
        "cloudpickle_bytes": len(pickled),
        "measurements": timings,
        "agentrt_get_set_step_ns": agentrt_ns,
        "cloudpickle_dumps_loads_ns": cloudpickle_ns,
        "ratio": ratio,
        "ratio_paired_rounds_median": paired[len(paired) // 2],
        "ratio_of_mins": (timings["get"]["min_ns"] + timings["set_step"]["min_ns"])
        / (timings["cloudpickle_dumps"]["min_ns"] + timings["cloudpickle_loads"]["min_ns"]),
    }


def bench_cycles(
    key: str, fn: Callable[..., Any], args: tuple[Any, ...], value: Any, cfg: dict[str, Any]
) -> dict[str, Any]:
    from _timing import run_alternating

    from agentrt.lowlevel import Machine

    n = cfg["cycles"]

    def machine_driver() -> tuple[Callable[[Any], Any], Callable[[], Any]]:
        m = Machine(fn, *args)
        m.step()
        return m.step, lambda: None  # the machine (and its coroutine) is freed with the pair

    def hand_driver() -> tuple[Callable[[Any], Any], Callable[[], Any]]:
        coro = fn(*args)
        coro.send(None)
        return coro.send, coro.close

    timings = run_alternating(
        {"machine_step": machine_driver, "coro_send": hand_driver},
        arg=value,
        ops=n,
        chunk=cfg["cycle_chunk"],
        rounds=cfg["cycle_rounds"],
        warmup_rounds=cfg["cycle_warmup_rounds"],
    )
    ms, cs = timings["machine_step"], timings["coro_send"]
    paired = sorted(a / b for a, b in zip(ms["per_round_ns"], cs["per_round_ns"], strict=True))
    return {
        "cycles_per_round": n,
        "chunk": cfg["cycle_chunk"],
        "measurements": timings,
        "ratio": ms["median_ns"] / cs["median_ns"],
        "ratio_paired_rounds_median": paired[len(paired) // 2],
        "ratio_of_mins": ms["min_ns"] / cs["min_ns"],
    }


# --------------------------------------------------------------------------- profiles


def profile_entries(prof: cProfile.Profile, top: int = 15) -> dict[str, Any]:
    stats = pstats.Stats(prof)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = []
    for (filename, line, func), (cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        path = Path(filename)
        try:
            where = str(path.resolve().relative_to(REPO))
        except ValueError:
            where = "/".join(path.parts[-2:]) if filename.startswith("/") else filename
        rows.append(
            {
                "function": f"{where}:{line}({func})" if line else func,
                "ncalls": nc,
                "primitive_calls": cc,
                "tottime_ms": round(tt * 1e3, 3),
                "cumtime_ms": round(ct * 1e3, 3),
            }
        )
    rows.sort(key=lambda r: r["tottime_ms"], reverse=True)
    return {"total_ms": round(total * 1e3, 3), "top_by_tottime": rows[:top]}


def profile_scenario(fn: Callable[..., Any], args: tuple[Any, ...], value: Any, reps: int) -> dict[str, Any]:
    from agentrt.lowlevel import Machine

    m, _ = advanced_machine(fn, args, value)
    blob = m.get()
    out: dict[str, Any] = {"reps": reps}
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(reps):
        m.get()
    prof.disable()
    out["get"] = profile_entries(prof)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(reps):
        Machine.set(blob).step(value)
    prof.disable()
    out["set_step"] = profile_entries(prof)
    return out


def print_profile(key: str, prof: dict[str, Any]) -> None:
    for what in ("get", "set_step"):
        p = prof[what]
        print(
            f"\ncProfile of {'m.get()' if what == 'get' else 'Machine.set(blob).step(v)'}, {key}, "
            f"{prof['reps']} reps, total {p['total_ms']:.1f} ms (profiled):"
        )
        print(f"  {'tottime ms':>10} {'cumtime ms':>10} {'ncalls':>8}  function")
        for row in p["top_by_tottime"]:
            print(
                f"  {row['tottime_ms']:>10.2f} {row['cumtime_ms']:>10.2f} {row['ncalls']:>8}"
                f"  {row['function']}"
            )


# --------------------------------------------------------------------------- side venvs


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def python_can_import(python: Path | str, module: str) -> bool:
    if not Path(python).exists():
        return False
    proc = subprocess.run(
        [str(python), "-c", f"import {module}"], capture_output=True, env=clean_env(), timeout=120
    )
    return proc.returncode == 0


def clean_env() -> dict[str, str]:
    """The environment for side venvs: without PYTHONPATH, so they see only their own packages."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONHOME", None)
    return env


def ensure_side_venv(
    venv: Path, module: str, requirements: tuple[str, ...], extra_pip: tuple[str, ...] = ()
) -> tuple[Path | None, str]:
    """A venv under benchmarks/ where ``module`` imports, created and installed on demand.

    Returns (python, "") or (None, reason)."""
    python = venv_python(venv)
    if python_can_import(python, module):
        return python, ""
    if not _env.may_install():  # a timed run (benchmarks/run.py) never reaches the network
        return None, _env.NOT_INSTALLED
    rel = venv.relative_to(REPO)
    print(
        f"[bench] installing {' '.join(requirements)} into {rel} (once; never an agentrt dependency) ...",
        flush=True,
    )
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True, timeout=300
        )
        proc = subprocess.run(
            [str(python), *PIP, *extra_pip, *requirements],
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=900,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        shutil.rmtree(venv, ignore_errors=True)
        return None, f"could not create {rel}: {exc}"
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.startswith("ERROR")] or (
            proc.stderr + proc.stdout
        ).strip().splitlines()[-3:]
        shutil.rmtree(venv, ignore_errors=True)
        return None, f"pip install {' '.join(requirements)} failed on Python {PY_TAG}: " + " / ".join(lines)[
            :600
        ]
    if not python_can_import(python, module):
        proc = subprocess.run(
            [str(python), "-c", f"import {module}"], capture_output=True, text=True, env=clean_env()
        )
        shutil.rmtree(venv, ignore_errors=True)
        return None, f"installed, but `import {module}` fails: {proc.stderr.strip().splitlines()[-1:]}"
    return python, ""


def bench_dispatch(cfg: dict[str, Any], allow_install: bool) -> dict[str, Any]:
    venv = BENCH_DIR / f".venv-dispatch-{PY_TAG}"
    module = "dispatch.experimental.durable"
    python = venv_python(venv)
    if not python_can_import(python, module):
        if sys.version_info >= (3, 13):
            return {"skipped": "no dispatch-py wheel for CPython 3.13 (3.11, 3.12 have one)"}
        if not allow_install or not _env.may_install():
            return {"skipped": f"dispatch-py: {_env.NOT_INSTALLED}"}
        found, reason = ensure_side_venv(
            venv, module, DISPATCH_REQUIREMENTS, ("--only-binary", "dispatch-py")
        )
        if found is None:
            return {"skipped": reason}
        python = found
    cmd = [
        str(python),
        str(BENCH_DIR / "_dispatch_worker.py"),
        "--rounds",
        str(cfg["rounds"]),
        "--min-round-ms",
        str(cfg["min_round_ms"]),
        "--budget-s",
        str(cfg["scenario_budget_s"]),
        "--suspensions",
        str(CHECKPOINT_AT),
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=600)
    except subprocess.TimeoutExpired:
        return {"skipped": "dispatch-py worker timed out (600 s)", "error": True}
    if proc.returncode != 0:
        return {"skipped": "dispatch-py worker failed: " + proc.stderr.strip()[-800:], "error": True}
    data = json.loads(proc.stdout)
    med = {k: v["median_ns"] for k, v in data["measurements"].items()}
    data["dumps_loads_step_ns"] = med["dumps"] + med["loads_step"]
    data["venv"] = str(venv.relative_to(REPO))
    return data


def make_plot(json_path: Path, png_path: Path, allow_install: bool) -> str:
    plot_script = BENCH_DIR / "_plot.py"
    found_python = _env.plot_python()
    if found_python is not None:
        python: Path | str = found_python
    else:
        venv = BENCH_DIR / ".venv-plot"
        python = venv_python(venv)
        if not python_can_import(python, "matplotlib"):
            if not allow_install or not _env.may_install():
                return f"plot skipped: matplotlib: {_env.NOT_INSTALLED}"
            found, reason = ensure_side_venv(venv, "matplotlib", ("matplotlib",))
            if found is None:
                return f"plot skipped: {reason}"
            python = found
    proc = subprocess.run(
        [str(python), str(plot_script), str(json_path), str(png_path)],
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    if proc.returncode != 0:
        return "plot failed: " + proc.stderr.strip()[-600:]
    return f"plot: {png_path.relative_to(REPO) if png_path.is_relative_to(REPO) else png_path}"


# --------------------------------------------------------------------------- report


def markdown(result: dict[str, Any]) -> str:
    py = result["python"]["version"]
    out = [
        f"### agentrt checkpoint benchmark: CPython {py}, {result['mode']} mode",
        "",
        "Per suspension; median of interleaved rounds (gc disabled while timing).",
        "",
        "| scenario | `m.get()` | `Machine.set` + `step` | blob "
        "| cloudpickle dumps | cloudpickle loads | pickle | ratio (target ≤ 2×) |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for key, sc in result["scenarios"].items():
        if "error" in sc:
            out.append(f"| {sc.get('description', key)} | ERROR: {sc['error'].splitlines()[-1][:80]} |||||||")
            continue
        m = sc["measurements"]
        t = result["targets"].get(f"checkpoint_{key}")
        out.append(
            f"| {sc['description']} | {fmt_ns(m['get']['median_ns'])} | {fmt_ns(m['set_step']['median_ns'])} "
            f"| {fmt_bytes(sc['blob_bytes'])} | {fmt_ns(m['cloudpickle_dumps']['median_ns'])} "
            f"| {fmt_ns(m['cloudpickle_loads']['median_ns'])} | {fmt_bytes(sc['cloudpickle_bytes'])} "
            f"| {fmt_ratio(sc['ratio'])} {verdict(t)} |"
        )
    out += [
        "",
        "| suspend/step cycles, no checkpoint | `Machine.step` | `coro.send` by hand "
        "| ratio (target ≤ 1.2×) |",
        "|---|---:|---:|---|",
    ]
    for key, cy in result["cycles"].items():
        if "error" in cy:
            out.append(f"| {key} | ERROR: {cy['error'].splitlines()[-1][:80]} |||")
            continue
        m = cy["measurements"]
        desc = result["scenarios"].get(key, {}).get("description", key)
        t = result["targets"].get(f"cycles_{key}")
        out.append(
            f"| {desc}, {cy['cycles_per_round'] // 1000}k cycles "
            f"| {fmt_ns(m['machine_step']['median_ns'])}/cycle "
            f"| {fmt_ns(m['coro_send']['median_ns'])}/cycle | {fmt_ratio(cy['ratio'])} {verdict(t)} |"
        )
    d = result["dispatch"]
    out.append("")
    if "skipped" in d:
        out.append(f"dispatch-py: skipped ({d['skipped']})")
    else:
        m = d["measurements"]
        a = result["scenarios"].get("a_flat20", {})
        t = result["targets"].get("vs_dispatch_a_flat20")
        out += [
            f"| scenario (a) vs dispatch-py {d['dispatch_py']} `@durable` "
            "| checkpoint | restore + step | total | blob |",
            "|---|---:|---:|---:|---:|",
            "| agentrt `get` / `set` + `step` "
            f"| {fmt_ns(a.get('measurements', {}).get('get', {}).get('median_ns'))} "
            f"| {fmt_ns(a.get('measurements', {}).get('set_step', {}).get('median_ns'))} "
            f"| {fmt_ns(a.get('agentrt_get_set_step_ns'))} | {fmt_bytes(a.get('blob_bytes'))} |",
            f"| dispatch-py `pickle.dumps` / `pickle.loads` + step | {fmt_ns(m['dumps']['median_ns'])} "
            f"| {fmt_ns(m['loads_step']['median_ns'])} | {fmt_ns(d['dumps_loads_step_ns'])} "
            f"| {fmt_bytes(d['blob_bytes'])} |",
            "",
            f"agentrt / dispatch-py = {fmt_ratio(t['value'] if t else None)} "
            f"(target < 1×: agentrt faster) {verdict(t)}",
        ]
    return "\n".join(out)


def results_name(tag: str, quick: bool) -> str:
    return f"checkpoint-{tag}{'-quick' if quick else ''}"


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str) + "\n")
    tmp.replace(path)


# --------------------------------------------------------------------------- main


def run(args: argparse.Namespace) -> int:
    mode = "quick" if args.quick else "full"
    cfg = dict(SETTINGS[mode])
    if args.rounds:
        cfg["rounds"] = cfg["cycle_rounds"] = args.rounds
    try:
        import checkpoint_agents
        import cloudpickle  # noqa: F401

        from agentrt.lowlevel import Machine  # noqa: F401
    except ImportError as exc:
        print(
            f"benchmarks/checkpoint.py: cannot import {exc.name}: {exc}\n"
            "  run it in a project venv (`make bench`, or .venv-3.12/bin/python after `make test`)",
            file=sys.stderr,
        )
        return 2
    started = time.monotonic()
    result: dict[str, Any] = {
        "benchmark": "agentrt checkpoint (benchmarks/checkpoint.py)",
        "schema": 1,
        "created_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.executable).name, _repo_relative(sys.argv[0]), *sys.argv[1:]]),
        "mode": mode,
        "settings": {**cfg, "checkpoint_at_suspension": CHECKPOINT_AT},
        "method": (
            "time.perf_counter_ns around loops of repetitions; measures of one comparison interleaved "
            "round by round; gc disabled while timing, gc.collect() between rounds; results freed after "
            "the clock stops; median (and min) over rounds of time per operation. Cycles: per round, "
            "a fresh Machine and a fresh hand-driven coroutine each do `cycles` steps, in alternating "
            "timed chunks of `cycle_chunk`"
        ),
        "machine": _machine_info(),
        "python": python_info(),
        "packages": package_versions(),
        "scenarios": {},
        "cycles": {},
        "dispatch": {},
        "targets": {},
        "errors": [],
    }
    print(
        f"[bench] CPython {platform.python_version()}, {mode} mode, "
        f"agentrt from {result['packages']['agentrt_path']}",
        flush=True,
    )

    for key, (desc, fn, fargs, value) in checkpoint_agents.SCENARIOS.items():
        print(f"[bench] checkpoint/restore: {desc} ...", flush=True)
        try:
            sc = bench_scenario(key, desc, fn, fargs, value, cfg)
        except Exception as exc:
            tb = traceback.format_exc()
            print(tb, file=sys.stderr)
            sc = {"description": desc, "error": f"{type(exc).__name__}: {exc}\n{tb}"}
            result["errors"].append(f"{key}: {type(exc).__name__}: {exc}")
        result["scenarios"][key] = sc
        t = target(
            f"checkpoint_{key}",
            sc.get("ratio"),
            TARGET_CHECKPOINT,
            what=f"{desc}: (get + set + step) / (cloudpickle dumps + loads)",
        )
        result["targets"][t["name"]] = t

    for key in ("a_flat20", "b_chain5"):
        desc, fn, fargs, value = checkpoint_agents.SCENARIOS[key]
        print(f"[bench] {cfg['cycles']} suspend/step cycles: {desc} ...", flush=True)
        try:
            cy = bench_cycles(key, fn, fargs, value, cfg)
        except Exception as exc:
            tb = traceback.format_exc()
            print(tb, file=sys.stderr)
            cy = {"error": f"{type(exc).__name__}: {exc}\n{tb}"}
            result["errors"].append(f"cycles {key}: {type(exc).__name__}: {exc}")
        result["cycles"][key] = cy
        t = target(f"cycles_{key}", cy.get("ratio"), TARGET_CYCLES, what=f"{desc}: Machine.step / coro.send")
        result["targets"][t["name"]] = t

    peers = args.peers if args.peers is not None else not args.quick
    if peers:
        print("[bench] dispatch-py 0.8 @durable, scenario (a), in its own venv ...", flush=True)
        result["dispatch"] = bench_dispatch(cfg, allow_install=True)
    else:
        result["dispatch"] = {
            "skipped": "--quick (add --peers to run dispatch-py)" if args.quick else "--no-peers"
        }
    if result["dispatch"].get("error"):
        result["errors"].append("dispatch-py: " + result["dispatch"]["skipped"][:200])
    a = result["scenarios"].get("a_flat20", {})
    d = result["dispatch"]
    ratio = None
    if "dumps_loads_step_ns" in d and "agentrt_get_set_step_ns" in a:
        ratio = a["agentrt_get_set_step_ns"] / d["dumps_loads_step_ns"]
    if "skipped" in d:
        print(f"[bench] dispatch-py skipped: {d['skipped']}", flush=True)
    t = target(
        "vs_dispatch_a_flat20",
        ratio,
        TARGET_DISPATCH,
        strict=True,
        what="(a): agentrt (get + set + step) / dispatch-py (pickle.dumps + pickle.loads + step)",
    )
    result["targets"][t["name"]] = t

    missed = [k for k, t in result["targets"].items() if k.startswith("checkpoint_") and t["met"] is False]
    to_profile = (
        list(result["scenarios"])
        if args.profile
        else ([] if args.quick else [k.removeprefix("checkpoint_") for k in missed])
    )
    if to_profile:
        result["profiles"] = {}
        for key in to_profile:
            if "error" in result["scenarios"][key]:
                continue
            desc, fn, fargs, value = checkpoint_agents.SCENARIOS[key]
            reps = cfg["profile_reps"] if key != "c_state1mb" else max(3, cfg["profile_reps"] // 50)
            print(f"[bench] cProfile of get() and set()+step(): {desc} ...", flush=True)
            result["profiles"][key] = profile_scenario(fn, fargs, value, reps)

    result["machine"]["loadavg_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    result["elapsed_s"] = round(time.monotonic() - started, 1)
    result["targets_met"] = all(t["met"] is not False for t in result["targets"].values())

    out_dir = Path(args.out_dir)
    name = results_name(PY_TAG, args.quick)
    json_path = out_dir / f"{name}.json"
    png_path = out_dir / f"{name}.png"
    write_json(json_path, result)

    print()
    print(markdown(result))
    for key, prof in result.get("profiles", {}).items():
        print_profile(key, prof)
    print()
    for t in result["targets"].values():
        if t["value"] is None:
            print(f"target {t['name']}: not measured")
        elif not t["met"]:
            print(
                f"target {t['name']}: MISSED: {t['value']:.2f}× vs {t['comparison']} {t['target']}× "
                f"(+{t['missed_by_pct']:.0f}%)"
            )
    print(
        f"\n[bench] results: {json_path.relative_to(REPO) if json_path.is_relative_to(REPO) else json_path}"
    )
    if args.plot:
        print(f"[bench] {make_plot(json_path, png_path, allow_install=peers)}")
    print(f"[bench] done in {time.monotonic() - started:.1f} s")
    if result["errors"]:
        print("[bench] FAILED: " + "; ".join(result["errors"]), file=sys.stderr)
        return 1
    return 0


def run_all(args: argparse.Namespace, argv: list[str]) -> int:
    """Run this script under each project venv (.venv-3.11, ...) and merge the results."""
    forward = [a for a in argv if a != "--python-all"]
    runs: dict[str, Any] = {}
    rc = 0
    for v in VERSIONS:
        python = REPO / f".venv-{v}" / "bin" / "python"
        print(f"==================== python{v} ====================", flush=True)
        if not python.exists():
            msg = f"{python.relative_to(REPO)} not found (`make test PY={v}` creates it)"
            print(f"[bench] skipped: {msg}")
            runs[v] = {"skipped": msg}
            continue
        proc = subprocess.run([str(python), str(Path(__file__).resolve()), *forward])
        path = Path(args.out_dir) / f"{results_name(v, args.quick)}.json"
        if proc.returncode not in (0, 1) or not path.exists():
            runs[v] = {"skipped": f"benchmark exited {proc.returncode}"}
            rc = 1
            continue
        rc = max(rc, proc.returncode)
        runs[v] = json.loads(path.read_text())
    merged = {
        "benchmark": "agentrt checkpoint (benchmarks/checkpoint.py --python-all)",
        "created_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "runs": runs,
    }
    name = results_name("all", args.quick)
    json_path = Path(args.out_dir) / f"{name}.json"
    write_json(json_path, merged)
    print("\n" + merged_markdown(merged))
    print(f"\n[bench] merged results: {json_path}")
    if args.plot:
        peers = args.peers if args.peers is not None else not args.quick
        print(f"[bench] {make_plot(json_path, json_path.with_suffix('.png'), allow_install=peers)}")
    return rc


def merged_markdown(merged: dict[str, Any]) -> str:
    """One table, a row per measurement and a column per interpreter."""
    runs = {v: r for v, r in merged["runs"].items() if "skipped" not in r}
    if not runs:
        return "(no interpreter ran)"
    versions = list(runs)
    head = (
        "| per suspension (median) | "
        + " | ".join(f"CPython {runs[v]['python']['version']}" for v in versions)
        + " |"
    )
    rows = [head, "|---|" + "---:|" * len(versions)]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        cells = []
        for v in versions:
            try:
                cells.append(cell(runs[v]))
            except (KeyError, TypeError):
                cells.append("-")
        rows.append(f"| {label} | " + " | ".join(cells) + " |")

    first = runs[versions[0]]
    for key, sc in first["scenarios"].items():
        desc = sc.get("description", key)
        row(
            f"{desc}: `get` / `set`+`step`",
            lambda r, k=key: (
                f"{fmt_ns(r['scenarios'][k]['measurements']['get']['median_ns'])} / "
                f"{fmt_ns(r['scenarios'][k]['measurements']['set_step']['median_ns'])}"
            ),
        )
        row(
            f"{desc}: cloudpickle dumps / loads",
            lambda r, k=key: (
                f"{fmt_ns(r['scenarios'][k]['measurements']['cloudpickle_dumps']['median_ns'])} / "
                f"{fmt_ns(r['scenarios'][k]['measurements']['cloudpickle_loads']['median_ns'])}"
            ),
        )
        row(
            f"{desc}: blob / pickle bytes",
            lambda r, k=key: (
                f"{fmt_bytes(r['scenarios'][k]['blob_bytes'])} / "
                f"{fmt_bytes(r['scenarios'][k]['cloudpickle_bytes'])}"
            ),
        )
        row(
            f"{desc}: **ratio** (target ≤ 2×)",
            lambda r, k=key: ratio_cell(r["targets"][f"checkpoint_{k}"]),
        )
    for key in first["cycles"]:
        desc = first["scenarios"].get(key, {}).get("description", key)
        row(
            f"{desc}: `Machine.step` / `coro.send` per cycle",
            lambda r, k=key: (
                f"{fmt_ns(r['cycles'][k]['measurements']['machine_step']['median_ns'])} / "
                f"{fmt_ns(r['cycles'][k]['measurements']['coro_send']['median_ns'])}"
            ),
        )
        row(
            f"{desc}: **cycle ratio** (target ≤ 1.2×)",
            lambda r, k=key: ratio_cell(r["targets"][f"cycles_{k}"]),
        )

    def dispatch_cell(r: dict[str, Any]) -> str:
        d = r["dispatch"]
        if "skipped" in d:
            return "skipped"
        m = d["measurements"]
        return f"{fmt_ns(m['dumps']['median_ns'])} / {fmt_ns(m['loads_step']['median_ns'])}"

    row("dispatch-py (a): `pickle.dumps` / `loads`+step", dispatch_cell)
    row(
        "**agentrt / dispatch-py** (a) (target < 1×)",
        lambda r: ratio_cell(r["targets"]["vs_dispatch_a_flat20"]),
    )
    return "\n".join(rows)


def _repo_relative(path: str) -> str:
    """A script path as a reader types it from the repository (results are committed)."""
    absolute = Path(path).resolve()
    return str(absolute.relative_to(REPO)) if absolute.is_relative_to(REPO) else path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="few repetitions (< 20 s); installs nothing unless --peers"
    )
    peers = parser.add_mutually_exclusive_group()
    peers.add_argument(
        "--peers",
        dest="peers",
        action="store_true",
        default=None,
        help="run dispatch-py and make the plot, installing their venvs if needed (default unless --quick)",
    )
    peers.add_argument(
        "--no-peers", dest="peers", action="store_false", help="skip dispatch-py; never install anything"
    )
    parser.add_argument("--no-plot", dest="plot", action="store_false", help="do not make the PNG plot")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile get() and set()+step() of every scenario "
        "(default: only where a target is missed, full mode)",
    )
    parser.add_argument(
        "--rounds", type=int, default=0, help="rounds per measure (default: 21, or 3 with --quick)"
    )
    parser.add_argument(
        "--out-dir",
        default=str(RESULTS_DIR),
        help="where the JSON and PNG go (default: $AGENTRT_BENCH_RESULTS, else benchmarks/results/local; "
        "git ignores it)",
    )
    parser.add_argument(
        "--python-all",
        action="store_true",
        help="run under .venv-3.11, .venv-3.12 and .venv-3.13 (made by `make test`) and merge the results",
    )
    args = parser.parse_args(argv)
    if args.python_all:
        return run_all(args, argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
