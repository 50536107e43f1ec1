"""Checkpoint cost in CPU instructions (callgrind): a measurement the machine's load cannot skew.

Wall-clock ratios on a shared 2-core machine move with whatever else runs.
``valgrind --tool=callgrind`` counts executed instructions instead, which repeat
exactly for the same binary and inputs.  For each case this runs a tiny driver
twice under callgrind -- with 0 and with N operations -- and reports the
difference per operation, for agentrt's ``get`` and ``set`` + ``step`` (with and
without ``AGENTRT_BLOB_KEY``) and for ``cloudpickle.dumps`` + ``loads`` of the
same live values.

    python benchmarks/instructions.py            # writes benchmarks/results/instructions-3.X.json
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
OPS = 300

DRIVER = r"""
import sys
sys.path.insert(0, {root!r})
import cloudpickle
from agentrt.lowlevel import Machine
from agentrt._frames._capture import capture
from benchmarks import checkpoint_agents as agents

def chain_values(coro):
    values = []
    while coro is not None and type(coro).__name__ == "coroutine":
        state = capture(coro)
        values.append((state.local_values, state.stack_values[:-1]))
        coro = coro.cr_await
    return tuple(values)

case, what, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = Machine(agents.flat_agent, 7, "ai") if case == "a" else Machine(agents.chain_root, "goal")
m.step(); m.step(1); m.step(1)
blob = m.get(); Machine.set(blob).step(1)
values = chain_values(m._coro)
cloudpickle.loads(cloudpickle.dumps(values))
if what == "get":
    for _ in range(n): m.get()
elif what == "set":
    for _ in range(n): Machine.set(blob).step(1)
else:
    for _ in range(n): cloudpickle.loads(cloudpickle.dumps(values))
"""


def instructions(driver: Path, case: str, what: str, n: int, key: str | None) -> int:
    env = dict(os.environ)
    env.pop("AGENTRT_BLOB_KEY", None)
    if key:
        env["AGENTRT_BLOB_KEY"] = key
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/cg.out",
                sys.executable,
                str(driver),
                case,
                what,
                str(n),
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
    match = re.search(r"Collected : (\d+)", out.stderr)
    if not match:
        raise RuntimeError(f"callgrind printed no total:\n{out.stderr[-2000:]}")
    return int(match.group(1))


def per_op(driver: Path, case: str, what: str, key: str | None = None) -> int:
    return (instructions(driver, case, what, OPS, key) - instructions(driver, case, what, 0, key)) // OPS


def main() -> int:
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind); skipping")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp) / "driver.py"
        driver.write_text(DRIVER.format(root=str(ROOT)))
        rows = {}
        for case, label in (("a", "(a) 1 frame, 20 locals"), ("b", "(b) 5-deep coroutine chain")):
            cloud = per_op(driver, case, "cloudpickle")
            row = {"cloudpickle_dumps_loads": cloud}
            for mode, key in (("unkeyed", None), ("keyed", "benchmark-key")):
                get, restore = per_op(driver, case, "get", key), per_op(driver, case, "set", key)
                row[mode] = {"get": get, "set_step": restore, "ratio": round((get + restore) / cloud, 2)}
            rows[label] = row
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"instructions-{version}.json"
    report = {"python": platform.python_version(), "ops": OPS, "cases": rows}
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"CPU instructions per suspension, CPython {platform.python_version()} (callgrind):\n")
    print(
        "| case | cloudpickle dumps+loads | get / set+step (unkeyed) | ratio "
        "| get / set+step (keyed) | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for label, row in rows.items():
        u, k = row["unkeyed"], row["keyed"]
        print(
            f"| {label} | {row['cloudpickle_dumps_loads']:,} "
            f"| {u['get']:,} / {u['set_step']:,} | {u['ratio']}× "
            f"| {k['get']:,} / {k['set_step']:,} | {k['ratio']}× |"
        )
    print(f"\nwritten to {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
