"""Timing harness shared by checkpoint.py and _dispatch_worker.py (standard library only).

Method, for every group of measures that are compared with each other:

* each measure is a zero-argument callable doing ONE operation (e.g. ``m.get()``);
* it is warmed up, then timed once to pick ``reps`` (repetitions per round) so that
  one round lasts about ``min_round_ns``;
* the rounds of all measures of a group are interleaved (round 1 of every measure, then
  round 2, ... with the order rotated each round), so drift and noise of a busy machine
  fall on all of them alike;
* a round times a plain ``for`` loop of ``reps`` calls with ``time.perf_counter_ns``,
  with the garbage collector disabled (a full ``gc.collect()`` runs before each round,
  outside the timed region); the results of the calls are kept until the round's clock
  has stopped, so freeing them (e.g. a restored 1 MB state) is not timed on either side;
* a measure's value is the median over rounds of (round time / reps); the minimum over
  rounds is reported too.
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from collections.abc import Callable
from itertools import repeat
from pathlib import Path
from typing import Any

perf_counter_ns = time.perf_counter_ns


def time_batch(fn: Callable[[], Any], reps: int) -> int:
    """Nanoseconds for ``reps`` calls of ``fn``; the results are freed after the clock stops."""
    keep: list[Any] = [None] * reps
    t0 = perf_counter_ns()
    for i in range(reps):
        keep[i] = fn()
    elapsed = perf_counter_ns() - t0
    del keep
    return elapsed


def one_call_ns(fn: Callable[[], Any], warmup: int) -> int:
    """Warm ``fn`` up, then return the best of three single-call timings."""
    for _ in range(warmup):
        fn()
    best = None
    for _ in range(3):
        t = time_batch(fn, 1)
        best = t if best is None else min(best, t)
    assert best is not None
    return max(best, 1)


def summarize(per_op_ns: list[float], reps: int) -> dict[str, Any]:
    return {
        "median_ns": statistics.median(per_op_ns),
        "min_ns": min(per_op_ns),
        "max_ns": max(per_op_ns),
        "rounds": len(per_op_ns),
        "reps_per_round": reps,
        "total_reps": reps * len(per_op_ns),
        "per_round_ns": [round(x, 1) for x in per_op_ns],
    }


def run_interleaved(
    measures: dict[str, Callable[[], Any]],
    *,
    rounds: int,
    min_round_ns: int,
    min_reps: int = 1,
    max_reps: int = 1_000_000,
    budget_ns: int | None = None,
    min_rounds: int = 3,
    warmup: int = 3,
) -> dict[str, dict[str, Any]]:
    """Time every measure in ``rounds`` interleaved rounds; see the module docstring.

    ``budget_ns`` caps the whole group: when even ``min_reps`` per round would exceed
    it, the number of rounds is lowered (never below ``min_rounds``).
    """
    reps: dict[str, int] = {}
    round_cost = 0  # estimated ns of one round of all measures
    for name, fn in measures.items():
        single = one_call_ns(fn, warmup)
        reps[name] = max(min_reps, min(max_reps, -(-min_round_ns // single)))
        round_cost += reps[name] * single
    if budget_ns is not None and round_cost * rounds > budget_ns:
        rounds = max(min_rounds, budget_ns // max(round_cost, 1))
    samples: dict[str, list[float]] = {name: [] for name in measures}
    names = list(measures)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                gc.collect()
                elapsed = time_batch(measures[name], reps[name])
                samples[name].append(elapsed / reps[name])
    finally:
        if was_enabled:
            gc.enable()
        gc.collect()
    return {name: summarize(samples[name], reps[name]) for name in names}


def run_alternating(
    drivers: dict[str, Callable[[], tuple[Callable[[Any], Any], Callable[[], Any]]]],
    *,
    arg: Any,
    ops: int,
    chunk: int,
    rounds: int,
    warmup_rounds: int = 1,
) -> dict[str, dict[str, Any]]:
    """Per-operation cost of drivers that repeat one cheap operation (e.g. a step).

    ``drivers[name]()`` makes a fresh ``(op, close)`` pair for a round; ``op(arg)`` is one
    operation.  A round runs ``ops`` operations of every driver, in chunks of ``chunk``
    that alternate between the drivers (order rotated every chunk), each chunk timed on
    its own: all drivers see the same moments of a noisy machine.  The first
    ``warmup_rounds`` are discarded; gc is disabled as in :func:`run_interleaved`.
    """
    names = list(drivers)
    chunks = max(1, ops // chunk)
    samples: dict[str, list[float]] = {name: [] for name in names}
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(warmup_rounds + rounds):
            made = {name: drivers[name]() for name in names}
            totals = dict.fromkeys(names, 0)
            gc.collect()
            for c in range(chunks):
                k = c % len(names)
                for name in names[k:] + names[:k]:
                    op = made[name][0]
                    t0 = perf_counter_ns()
                    for _ in repeat(None, chunk):
                        op(arg)
                    totals[name] += perf_counter_ns() - t0
            for name in names:
                made[name][1]()
            if r >= warmup_rounds:
                for name in names:
                    samples[name].append(totals[name] / (chunks * chunk))
    finally:
        if was_enabled:
            gc.enable()
        gc.collect()
    return {name: summarize(samples[name], chunks * chunk) for name in names}


# --------------------------------------------------------------------------- environment


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None


def machine_info() -> dict[str, Any]:
    cpuinfo = _read("/proc/cpuinfo") or ""
    model = next(
        (line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
        None,
    )
    meminfo = _read("/proc/meminfo") or ""
    mem_kb = next(
        (int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal:")), None
    )
    governor = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": model or platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "memory_gib": round(mem_kb / 2**20, 1) if mem_kb else None,
        "cpu_governor": governor.strip() if governor else None,
        "loadavg_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "ci": bool(os.environ.get("CI")),
    }
