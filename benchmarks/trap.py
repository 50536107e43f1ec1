"""The cost of one suspension: ``await agentrt.suspend(x)`` beside a minimal ``@types.coroutine`` trap.

    python benchmarks/trap.py            # full: 15 interleaved rounds of 200k suspensions each
    python benchmarks/trap.py --quick    # smoke: 3 rounds of 20k (proves it works; no ratio asserted)

Both sides run the same loop (``for i in range(n): await TRAP(i)``) driven by hand with
``coro.send``: the floor's trap is ``@types.coroutine def trap(p): return (yield p)``, the least a
trap can cost.  ``suspend`` is the same kind of generator; what it pays on top is building the
``(marker, payload)`` tuple that tells a driver an agentrt request from a foreign awaitable's
yield (the run checks that the loop really yields agentrt requests).  Target (issue 16):
``suspend`` within 1.5x of the floor.  Median over interleaved rounds with min-max.  A third row,
not part of the target, drives the agentrt loop through ``Machine.step`` (what the runtime pays
per suspension: the trap plus the driver's checks).  Results:
``trap-<python>[-quick].json`` in the results folder (benchmarks/_env.py).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import types
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
import _env  # noqa: E402  (benchmarks/_env.py: the results folder, the no-install switch)

RESULTS = _env.results_dir()
TARGET = 1.5

from agentrt.lowlevel import Machine, _is_request, suspend  # noqa: E402


@types.coroutine
def minimal_trap(payload: Any) -> Any:
    return (yield payload)


async def agentrt_loop(n: int) -> None:
    for i in range(n):
        await suspend(i)


async def minimal_loop(n: int) -> None:
    for i in range(n):
        await minimal_trap(i)


def per_suspension_ns(fn: Callable[[int], Coroutine[Any, Any, None]], n: int) -> float:
    coro = fn(n)
    send = coro.send
    gc.disable()
    t0 = time.perf_counter_ns()
    try:
        send(None)
        while True:
            send(1)
    except StopIteration:
        pass
    elapsed = time.perf_counter_ns() - t0
    gc.enable()
    return elapsed / n


def machine_step_ns(fn: Callable[[int], Coroutine[Any, Any, None]], n: int) -> float:
    machine = Machine(fn, n)
    step = machine.step
    gc.disable()
    t0 = time.perf_counter_ns()
    step()
    for _ in range(n - 1):
        step(1)
    elapsed = time.perf_counter_ns() - t0
    gc.enable()
    machine.discard()
    return elapsed / n


def check_the_loop_yields_agentrt_requests() -> None:
    """The agentrt row must measure agentrt's trap: its loop yields what Machine takes for a request."""
    coro = agentrt_loop(1)
    try:
        yielded = coro.send(None)
    finally:
        coro.close()
    if not _is_request(yielded):
        raise SystemExit(f"benchmarks/trap.py: the agentrt loop yielded {yielded!r}, not an agentrt request")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smoke: 3 rounds of 20k, no ratio asserted")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 15; quick 3)")
    parser.add_argument("--n", type=int, default=None, help="suspensions per round (default 200k; quick 20k)")
    args = parser.parse_args(argv)
    rounds, n = (3, 20_000) if args.quick else (15, 200_000)
    rounds, n = args.rounds or rounds, args.n or n
    check_the_loop_yields_agentrt_requests()
    measures: dict[str, Callable[[], float]] = {
        "agentrt suspend": lambda: per_suspension_ns(agentrt_loop, n),
        "floor: @types.coroutine trap": lambda: per_suspension_ns(minimal_loop, n),
        "agentrt suspend via Machine.step": lambda: machine_step_ns(agentrt_loop, n),
    }
    samples: dict[str, list[float]] = {name: [] for name in measures}
    names = list(measures)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            samples[name].append(measures[name]())
    rows = {
        name: {"median_ns": statistics.median(v), "min_ns": min(v), "max_ns": max(v), "rounds": rounds}
        for name, v in samples.items()
    }
    ratio = statistics.median(
        a / b
        for a, b in zip(samples["agentrt suspend"], samples["floor: @types.coroutine trap"], strict=True)
    )
    step_ratio = statistics.median(
        a / b
        for a, b in zip(
            samples["agentrt suspend via Machine.step"], samples["floor: @types.coroutine trap"], strict=True
        )
    )
    result = {
        "python": platform.python_version(),
        "mode": "quick" if args.quick else "full",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "command": " ".join(["python benchmarks/trap.py", *(sys.argv[1:] if argv is None else argv)]),
        "suspensions_per_round": n,
        "rows": rows,
        "target": {"ratio": ratio, "target": TARGET, "met": ratio <= TARGET},
        "machine_step_over_floor": step_ratio,  # context, not a target
    }
    for name, row in rows.items():
        print(f"  {name:<34} {row['median_ns']:7.0f} ns  (min {row['min_ns']:.0f}, max {row['max_ns']:.0f})")
    print(f"  suspend / floor: {ratio:.2f}x (target <= {TARGET}x; median of per-round ratios)")
    print(f"  Machine.step / floor: {step_ratio:.2f}x (context: the trap plus the driver; no target)")
    py = ".".join(platform.python_version_tuple()[:2])
    path = RESULTS / f"trap-{py}{'-quick' if args.quick else ''}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  wrote {_env.shown(path)}")
    return 0  # reports; never fails on a ratio


if __name__ == "__main__":
    sys.exit(main())
