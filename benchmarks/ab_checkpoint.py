#!/usr/bin/env python
"""Checkpoint and restore, this checkout against another one: interleaved rounds, one process each.

    python benchmarks/ab_checkpoint.py --base /tmp/base            # a worktree of the base commit
    python benchmarks/ab_checkpoint.py --base /tmp/base --rounds 15

Two checkouts cannot share one process (both are ``agentrt``), so every round starts one
process per checkout, in alternating order, each timing the same operations on the same
agents (benchmarks/checkpoint_agents.py of its own checkout): ``m.get()``, ``Machine.set(blob)``
+ ``step`` of a signed blob (the default), the same of an unsigned blob with
``allow_unsigned=True``, and ``cloudpickle.dumps`` + ``loads`` of the live locals, for scenario
(a) one frame with 20 locals and (b) a 5-deep chain; a restored machine is dropped inside the
timed loop (its cleanup is part of a restore).  A measure's value in a round is the median
of its batches (gc disabled while timing; results freed after the clock stops); the report gives,
per measure, the median over rounds for each checkout, the ratio this / base (median of the
per-round ratios, with its spread), and each side's (get + set + step) / cloudpickle ratio.
Wall-clock numbers on a shared machine are noisy; the ratios of interleaved rounds much less.
``benchmarks/instructions.py`` counts instructions instead (exact, one checkout at a time).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

WORKER = r"""
import gc, json, os, sys, time
root = sys.argv[1]
sys.path.insert(0, root)
os.environ.setdefault("AGENTRT_BLOB_KEY", "ab-benchmark-key-ae2ff7ee626ea635a15f24b2cab5535a617a9e35")
import cloudpickle
import agentrt
assert agentrt.__file__.startswith(root), (agentrt.__file__, root)
from agentrt.lowlevel import Machine
from benchmarks import checkpoint_agents as agents

def live(coro):
    out = []
    while coro is not None and hasattr(coro, "cr_frame"):
        out.append(dict(coro.cr_frame.f_locals))
        coro = coro.cr_await
    return tuple(out)

def timed(fn, batch_ns=4_000_000, batches=5):
    fn(); fn()
    t0 = time.perf_counter_ns(); fn(); one = max(time.perf_counter_ns() - t0, 1)
    reps = max(1, batch_ns // one)
    per = []
    for _ in range(batches):
        keep = [None] * reps
        gc.collect(); gc.disable()
        t0 = time.perf_counter_ns()
        for i in range(reps):
            keep[i] = fn()
        per.append((time.perf_counter_ns() - t0) / reps)
        gc.enable()
        del keep
    return sorted(per)[len(per) // 2]

out = {}
CASES = (
    ("a", lambda: Machine(agents.flat_agent, 7, "ai")),
    ("b", lambda: Machine(agents.chain_root, "goal")),
)
for case, make in CASES:
    m = make(); m.step(); m.step(1); m.step(1)
    blob = m.get()
    unsigned = (getattr(m, "get_bound", None) or m._signed_get)(b"", ("checkpoint", None, None))
    values = live(m._coro)
    pickled = cloudpickle.dumps(values)
    # the restored machine is dropped inside the timed loop: its cleanup (discard) is timed
    def set_step(blob=blob):
        Machine.set(blob).step(1)
    def set_step_unsigned(blob=unsigned):
        Machine.set(blob, allow_unsigned=True).step(1)
    out[case] = {
        "get": timed(m.get),
        "set_step": timed(set_step),
        "set_step_unsigned": timed(set_step_unsigned),
        "cloudpickle": timed(lambda: None if cloudpickle.loads(cloudpickle.dumps(values)) else None),
    }
print(json.dumps(out))
"""

MEASURES = ("get", "set_step", "set_step_unsigned", "cloudpickle")


def run_one(python: str, tree: Path) -> dict[str, dict[str, float]]:
    done = subprocess.run([python, "-c", WORKER, str(tree)], capture_output=True, text=True, check=True)
    result: dict[str, dict[str, float]] = json.loads(done.stdout)
    return result


def spread(values: list[float]) -> str:
    values = sorted(values)
    q1, q3 = values[len(values) // 4], values[(3 * len(values)) // 4]
    return f"{statistics.median(values):.2f} [{q1:.2f}–{q3:.2f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, type=Path, help="the other checkout (e.g. a git worktree)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    trees = {"base": args.base.resolve(), "this": REPO}
    rounds: dict[str, list[dict[str, dict[str, float]]]] = {"base": [], "this": []}
    for i in range(args.rounds):
        order = ("base", "this") if i % 2 == 0 else ("this", "base")
        for side in order:
            rounds[side].append(run_one(args.python, trees[side]))
        print(f"round {i + 1}/{args.rounds} done", file=sys.stderr)
    print(f"this checkout: {REPO}\nbase: {trees['base']}\n{args.rounds} interleaved rounds, median [IQR]\n")
    print("| case | measure | base µs | this µs | this / base |")
    print("|---|---|---:|---:|---:|")
    for case in ("a", "b"):
        for measure in MEASURES:
            base = [r[case][measure] / 1000 for r in rounds["base"]]
            this = [r[case][measure] / 1000 for r in rounds["this"]]
            ratio = [t / b for t, b in zip(this, base, strict=True)]
            print(
                f"| ({case}) | {measure} | {statistics.median(base):.1f} | {statistics.median(this):.1f} "
                f"| {spread(ratio)} |"
            )
    print("\n| case | (get + set + step) / cloudpickle, base | this |")
    print("|---|---:|---:|")
    for case in ("a", "b"):
        cells = []
        for side in ("base", "this"):
            ratios = [(r[case]["get"] + r[case]["set_step"]) / r[case]["cloudpickle"] for r in rounds[side]]
            cells.append(spread(ratios))
        print(f"| ({case}) | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
