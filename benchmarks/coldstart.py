"""Cold start: ``import agentrt``, ``agentrt runs`` and ``agentrt --help`` beside their floors.

    python benchmarks/coldstart.py                  # full: 15 interleaved rounds, warm and cold .pyc
    python benchmarks/coldstart.py --quick          # smoke: 1 round (proves it works; no ratio judged)
    python benchmarks/coldstart.py --rounds 9 --warm-only   # what `make bench-quick` runs

Every row is the wall time of a fresh ``python`` process (spawn to exit), timed from this process.
The floors are measured in the same run, in the same rounds: ``python -c pass``,
``python -c "import asyncio"`` and ``python -c "import asyncio, attrs"``.  Targets:

* issue 16: ``import agentrt`` and ``agentrt runs`` within 2.5x of ``import asyncio, attrs`` (the
  interpreter plus what any agentrt process needs anyway);
* issue 23: ``agentrt --help`` and ``agentrt runs`` within 1.3x of ``import asyncio``, since every
  test and every ``agentrt submit`` pays the command line's start-up.

Two columns:

* **warm**: the ``.pyc`` files exist (the usual case after the first run);
* **cold**: ``PYTHONPYCACHEPREFIX`` points at a fresh empty directory for every process, so no
  ``.pyc`` is found and every imported module -- the standard library's too, on both sides of the
  ratio -- is compiled from source (a fresh install, a new container image).  ``--warm-only``
  leaves it out (it is most of the run time).

Rounds are interleaved (round 1 of every command, then round 2, ...; the order rotated each round)
and each cell reports the median with its interquartile range and min-max; the targets are judged
on the warm column.  ``-X importtime`` of ``import agentrt`` and of the CLI is recorded too (the 15
slowest modules, cumulative).

Results: ``coldstart-<python>[-quick].json`` in the results folder (benchmarks/_env.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _env as bench_env  # benchmarks/_env.py: the results folder (`_env` below is this file's)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = bench_env.results_dir()
TARGET = 2.5
FLOOR = "floor: import asyncio, attrs"
#: issue 23: the command line's start-up against the bare event-loop import.
CLI_TARGET = 1.3
CLI_FLOOR = "floor: import asyncio"
#: (row, its floor, the target ratio): what a run judges, on the warm column.
TARGETS = (
    ("import agentrt", FLOOR, TARGET),
    ("agentrt runs (empty store)", FLOOR, TARGET),
    ("agentrt --help", CLI_FLOOR, CLI_TARGET),
    ("agentrt runs (empty store)", CLI_FLOOR, CLI_TARGET),
)


def spread(samples: list[float]) -> dict[str, Any]:
    """Median, interquartile range and min-max of a list of samples (seconds)."""
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
        "n": len(ordered),
        "samples": [round(s, 6) for s in samples],
    }


def commands(python: str, store: str) -> dict[str, list[str]]:
    return {
        "python -c pass": [python, "-c", "pass"],
        CLI_FLOOR: [python, "-c", "import asyncio"],
        FLOOR: [python, "-c", "import asyncio, attrs"],
        "import agentrt": [python, "-c", "import agentrt"],
        "from agentrt import Runtime, agent, tool": [
            python,
            "-c",
            "from agentrt import Runtime, agent, tool",
        ],
        "agentrt runs (empty store)": [python, "-m", "agentrt", "runs", "--store", store],
        "agentrt --help": [python, "-m", "agentrt", "--help"],
    }


TREE = REPO  # whose agentrt is measured (--tree: another checkout, e.g. for a before/after)


def _env(cold_dir: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(TREE)  # this checkout's agentrt, installed or not
    if cold_dir is not None:
        env["PYTHONPYCACHEPREFIX"] = cold_dir
    return env


def _time(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=TREE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {proc.returncode}): {proc.stderr.decode()[-800:]}")
    return elapsed


def importtime(python: str, code: list[str], top: int = 15) -> list[dict[str, Any]]:
    """The ``top`` modules with the largest cumulative import time (warm ``.pyc``)."""
    proc = subprocess.run(
        [python, "-X", "importtime", *code], env=_env(None), cwd=TREE, capture_output=True, text=True
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cumulative_us, name = line[len("import time:") :].split("|", 2)
        rows.append({"module": name.strip(), "self_us": int(self_us), "cumulative_us": int(cumulative_us)})
    modules = len(rows)
    rows.sort(key=lambda r: -r["cumulative_us"])
    return [{"modules_imported": modules}, *rows[:top]]


def run(rounds: int, python: str, columns: tuple[str, ...] = ("warm", "cold")) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agentrt-coldstart-") as tmp:
        store = os.path.join(tmp, "empty.db")
        # `agentrt runs` only reads a store (it never creates one): make the empty store first.
        create = f"from agentrt.stores import SqliteStore; SqliteStore({store!r}).close()"
        subprocess.run([python, "-c", create], check=True)
        cmds = commands(python, store)
        names = list(cmds)
        samples: dict[str, dict[str, list[float]]] = {column: {n: [] for n in names} for column in columns}
        for name in names:  # one untimed run each: .pyc written
            _time(cmds[name], _env(None))
        for r in range(rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                samples["warm"][name].append(_time(cmds[name], _env(None)))
                if "cold" in samples:
                    cold_dir = tempfile.mkdtemp(dir=tmp, prefix="pyc-")
                    samples["cold"][name].append(_time(cmds[name], _env(cold_dir)))
                    shutil.rmtree(cold_dir, ignore_errors=True)
    out: dict[str, Any] = {}
    for column, per_name in samples.items():
        cells = {name: spread(values) for name, values in per_name.items()}
        floor, cli_floor = cells[FLOOR]["median"], cells[CLI_FLOOR]["median"]
        for cell in cells.values():
            cell["ratio_to_floor"] = cell["median"] / floor
            cell["ratio_to_asyncio"] = cell["median"] / cli_floor
        out[column] = cells
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smoke: 1 round, no ratio asserted")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 15; quick 1)")
    parser.add_argument(
        "--warm-only", action="store_true", help="leave out the cold (no .pyc) column: most of the run time"
    )
    parser.add_argument("--tree", default=None, help="measure the agentrt of another checkout (before/after)")
    parser.add_argument("--tag", default="", help="suffix of the result file name (with --tree)")
    args = parser.parse_args(argv)
    global TREE
    TREE = Path(args.tree).resolve() if args.tree else REPO
    rounds = args.rounds or (1 if args.quick else 15)
    python = sys.executable
    started = time.monotonic()
    print(
        f"benchmarks/coldstart.py ({'quick' if args.quick else 'full'}) "
        f"on CPython {platform.python_version()}"
    )
    cells = run(rounds, python, ("warm",) if args.warm_only else ("warm", "cold"))
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "mode": "quick" if args.quick else "full",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "rounds": rounds,
        "command": "python "
        + " ".join(["benchmarks/coldstart.py", *(argv if argv is not None else sys.argv[1:])]),
        "tree": str(TREE),
        "target_ratio": TARGET,
        "cli_target_ratio": CLI_TARGET,
        "columns": cells,
        "importtime": {
            "import agentrt": importtime(python, ["-c", "import agentrt"]),
            "agentrt runs": importtime(python, ["-m", "agentrt", "runs", "--store", ":memory:"]),
        },
    }
    for column in cells:
        print(f"  {column} (.pyc {'present' if column == 'warm' else 'absent'}):")
        for name, cell in cells[column].items():
            print(
                f"    {name:<30} {cell['median'] * 1e3:7.1f} ms  "
                f"IQR {cell['q1'] * 1e3:6.1f}-{cell['q3'] * 1e3:6.1f}"
                f"  x{cell['ratio_to_floor']:.2f} asyncio+attrs, x{cell['ratio_to_asyncio']:.2f} asyncio"
            )
    # judged on the warm column; keyed "<row> / <floor>" (runs is judged against both floors)
    result["targets"] = {}
    for name, floor, target in TARGETS:
        cell, base = cells["warm"][name], cells["warm"][floor]
        ratio = cell["median"] / base["median"]
        result["targets"][f"{name} / {floor.removeprefix('floor: ')}"] = {
            "row": name,
            "floor": floor,
            "value_s": cell["median"],
            "floor_s": base["median"],
            "ratio": ratio,
            "target": target,
            "met": ratio <= target,
        }
        print(f"  {name} / {floor.removeprefix('floor: ')}: x{ratio:.2f} (target <= {target}x)")
    py = ".".join(platform.python_version_tuple()[:2])
    path = RESULTS / f"coldstart-{py}{args.tag}{'-quick' if args.quick else ''}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  wrote {bench_env.shown(path)} in {time.monotonic() - started:.1f} s")
    return 0  # a benchmark reports; it never fails on a ratio (CI runs --quick on noisy machines)


if __name__ == "__main__":
    sys.exit(main())
