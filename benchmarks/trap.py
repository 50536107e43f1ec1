"""The cost of one suspension: ``await agentrt.suspend(x)`` beside a minimal ``@types.coroutine`` trap.

    python benchmarks/trap.py            # full: 15 interleaved rounds of 200k suspensions each
    python benchmarks/trap.py --quick    # smoke: 3 rounds of 20k (proves it works; no ratio asserted)

Both sides run the same loop (``for i in range(n): await TRAP(i)``) driven by hand with
``coro.send``: the floor's trap is ``@types.coroutine def trap(p): return (yield p)``, the least a
trap can cost.  Target (issue 16): ``suspend`` within 1.5x of the floor.  Median over interleaved
rounds with min-max.  Results: ``benchmarks/results/trap-<python>[-quick].json``.
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
RESULTS = HERE / "results"
TARGET = 1.5

from agentrt.lowlevel import suspend  # noqa: E402


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smoke: 3 rounds of 20k, no ratio asserted")
    args = parser.parse_args(argv)
    rounds, n = (3, 20_000) if args.quick else (15, 200_000)
    measures = {"agentrt suspend": agentrt_loop, "floor: @types.coroutine trap": minimal_loop}
    samples: dict[str, list[float]] = {name: [] for name in measures}
    for r in range(rounds):
        for name in list(measures)[r % 2 :] + list(measures)[: r % 2]:
            samples[name].append(per_suspension_ns(measures[name], n))
    rows = {
        name: {"median_ns": statistics.median(v), "min_ns": min(v), "max_ns": max(v), "rounds": rounds}
        for name, v in samples.items()
    }
    ratio = statistics.median(
        a / b
        for a, b in zip(samples["agentrt suspend"], samples["floor: @types.coroutine trap"], strict=True)
    )
    result = {
        "python": platform.python_version(),
        "mode": "quick" if args.quick else "full",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "command": "python benchmarks/trap.py" + (" --quick" if args.quick else ""),
        "suspensions_per_round": n,
        "rows": rows,
        "target": {"ratio": ratio, "target": TARGET, "met": ratio <= TARGET},
    }
    for name, row in rows.items():
        print(f"  {name:<30} {row['median_ns']:7.0f} ns  (min {row['min_ns']:.0f}, max {row['max_ns']:.0f})")
    print(f"  suspend / floor: {ratio:.2f}x (target <= {TARGET}x; median of per-round ratios)")
    RESULTS.mkdir(exist_ok=True)
    py = ".".join(platform.python_version_tuple()[:2])
    path = RESULTS / f"trap-{py}{'-quick' if args.quick else ''}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  wrote {path.relative_to(REPO)}")
    return 0  # reports; never fails on a ratio


if __name__ == "__main__":
    sys.exit(main())
