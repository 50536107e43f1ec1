"""Checkpoint cost in CPU instructions (callgrind): a measurement the machine's load cannot skew.

Wall-clock ratios on a shared 2-core machine move with whatever else runs.
``valgrind --tool=callgrind`` counts executed instructions instead, which repeat
exactly for the same binary and inputs.  For each case this runs a tiny driver
twice under callgrind -- with 0 and with N operations -- and reports the
difference per operation, for agentrt's ``get`` and ``set`` + ``step`` of a signed
blob (the default: ``AGENTRT_BLOB_KEY`` set) and of an unsigned one
(``Machine.set(blob, allow_unsigned=True)``: the opcode scan, the decode-bounds walk and
the dry run on top), and for ``cloudpickle.dumps`` + ``loads`` of the same live values.
The restored machine is dropped after each ``step`` (so its ``discard`` is counted).
``--dispatch`` adds dispatch-py 0.8 on scenario (a) (``pickle.dumps`` / ``pickle.loads`` +
one step), run in ``benchmarks/.venv-dispatch-3.X`` if ``benchmarks/checkpoint.py`` made it.

    python benchmarks/instructions.py                  # writes benchmarks/results/instructions-3.X.json
    python benchmarks/instructions.py --dispatch       # ... with dispatch-py's counts beside them
    python benchmarks/instructions.py --tree /tmp/base # another checkout (e.g. a worktree of a base
                                                       # commit), same driver; prints, writes nothing

Each run uses ``AGENTRT_CODE_CACHE=0`` (every process synthesizes its resume code once, so the
0-operation run and the N-operation run pay the same) and ``PYTHONHASHSEED=0``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
OPS = 300
KEY = "benchmark-key-926f08afae1f31d412721b54c740579e48331b295778bd07a10b289474186411"

DRIVER = r"""
import sys
root = sys.argv[1]
sys.path.insert(0, root)
import cloudpickle
import agentrt
assert agentrt.__file__.startswith(root), (agentrt.__file__, root)
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

case, what, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
m = Machine(agents.flat_agent, 7, "ai") if case == "a" else Machine(agents.chain_root, "goal")
m.step(); m.step(1); m.step(1)
blob = m.get()
unsigned = (getattr(m, "get_bound", None) or m._signed_get)(b"", ("checkpoint", None, None))
Machine.set(blob).step(1); Machine.set(unsigned, allow_unsigned=True).step(1)
if what.startswith("proto"):  # benchmarks/checkpoint_floor.py's plain-frame prototype (issue 26)
    from benchmarks.checkpoint_floor import KEY as PROTO_KEY, ShapeCodec, release
    codec = ShapeCodec(PROTO_KEY)
    proto_blob = codec.get(m._coro, check_plain=True)
    def proto_restore():
        coro, _, runs_code = codec.set(proto_blob)
        coro.send(1)
        release(coro, runs_code)
    proto_restore()
if what == "cloudpickle":  # only then: a tuple of the locals held here is a second holder of each
    values = chain_values(m._coro)  # float, which get() must then box (see _reduce._share_floats)
    cloudpickle.loads(cloudpickle.dumps(values))
if what == "get":
    for _ in range(n): m.get()
elif what == "set":
    for _ in range(n): Machine.set(blob).step(1)
elif what == "set_unsigned":
    for _ in range(n): Machine.set(unsigned, allow_unsigned=True).step(1)
elif what == "proto_get":
    for _ in range(n): codec.get(m._coro)
elif what == "proto_set":
    for _ in range(n): proto_restore()
else:
    for _ in range(n): cloudpickle.loads(cloudpickle.dumps(values))
"""

DISPATCH_DRIVER = r"""
import pickle, sys
sys.path.insert(0, sys.argv[1])
from _dispatch_worker import flat_agent
what, n = sys.argv[2], int(sys.argv[3])
coro = flat_agent(7, "compilers")
driver = coro.__await__()
driver.send(None); driver.send(3); driver.send(3)
blob = pickle.dumps(coro)
def restore():
    restored = pickle.loads(blob)
    restored.__await__().send(3)
restore()
if what == "get":
    for _ in range(n): pickle.dumps(coro)
else:
    for _ in range(n): restore()
"""


def collected(argv: list[str]) -> int:
    env = dict(os.environ)
    env.update({"AGENTRT_BLOB_KEY": KEY, "AGENTRT_CODE_CACHE": "0", "PYTHONHASHSEED": "0"})
    env.pop("AGENTRT_ALLOW_UNSIGNED", None)
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out", *argv],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
    match = re.search(r"Collected : (\d+)", out.stderr)
    if not match:
        raise RuntimeError(f"callgrind printed no total:\n{out.stderr[-2000:]}")
    return int(match.group(1))


def per_op(argv: list[str]) -> int:
    """(instructions with OPS operations - with none) / OPS; argv ends with the operation count."""
    return (collected([*argv, str(OPS)]) - collected([*argv, "0"])) // OPS


def measure(driver: Path, tree: Path) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for case, label in (("a", "(a) 1 frame, 20 locals"), ("b", "(b) 5-deep coroutine chain")):
        run = [sys.executable, str(driver), str(tree), case]
        cloud = per_op([*run, "cloudpickle"])
        get = per_op([*run, "get"])
        signed = per_op([*run, "set"])
        unsigned = per_op([*run, "set_unsigned"])
        rows[label] = {
            "cloudpickle_dumps_loads": cloud,
            "get": get,
            "signed": {"set_step": signed, "ratio": round((get + signed) / cloud, 2)},
            "unsigned": {"set_step": unsigned, "ratio": round((get + unsigned) / cloud, 2)},
        }
        if (tree / "benchmarks" / "checkpoint_floor.py").exists():  # issue 26's prototype, where it exists
            proto_get, proto_set = per_op([*run, "proto_get"]), per_op([*run, "proto_set"])
            rows[label]["prototype"] = {
                "get": proto_get,
                "set_step": proto_set,
                "ratio": round((proto_get + proto_set) / cloud, 2),
            }
    return rows


def measure_dispatch(driver: Path) -> dict[str, int] | None:
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    python = ROOT / "benchmarks" / f".venv-dispatch-{version}" / "bin" / "python"
    if not python.exists():
        print(
            f"no {python.relative_to(ROOT)} (python benchmarks/checkpoint.py makes it): dispatch-py skipped"
        )
        return None
    run = [str(python), str(driver), str(ROOT / "benchmarks")]
    return {"get": per_op([*run, "get"]), "set_step": per_op([*run, "set"])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, help="measure this other checkout instead (prints only)")
    parser.add_argument("--dispatch", action="store_true", help="count dispatch-py on scenario (a) too")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind); skipping")
        return 0
    tree = (args.tree or ROOT).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp) / "driver.py"
        driver.write_text(DRIVER)
        rows = measure(driver, tree)
        dispatch = None
        if args.dispatch:
            dispatch_driver = Path(tmp) / "dispatch_driver.py"
            dispatch_driver.write_text(DISPATCH_DRIVER)
            dispatch = measure_dispatch(dispatch_driver)
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    report: dict[str, Any] = {
        "python": platform.python_version(),
        "ops": OPS,
        "tree": str(tree),
        "cases": rows,
    }
    if dispatch is not None:
        report["dispatch_py_a"] = dispatch
    print(f"CPU instructions per suspension, CPython {platform.python_version()} (callgrind), {tree}:\n")
    print("| case | cloudpickle dumps+loads | get | set+step signed | ratio | set+step unsigned | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, row in rows.items():
        s, u = row["signed"], row["unsigned"]
        print(
            f"| {label} | {row['cloudpickle_dumps_loads']:,} | {row['get']:,} "
            f"| {s['set_step']:,} | {s['ratio']}× | {u['set_step']:,} | {u['ratio']}× |"
        )
    for label, row in rows.items():
        if "prototype" in row:
            p = row["prototype"]
            print(
                f"| {label}, plain-frame prototype (checkpoint_floor.py) "
                f"| {row['cloudpickle_dumps_loads']:,} | {p['get']:,} | {p['set_step']:,} "
                f"| {p['ratio']}× | | |"
            )
    if dispatch is not None:
        a = rows["(a) 1 frame, 20 locals"]
        ours = a["get"] + a["signed"]["set_step"]
        theirs = dispatch["get"] + dispatch["set_step"]
        print(
            f"\ndispatch-py (a): pickle.dumps {dispatch['get']:,} / loads + step {dispatch['set_step']:,}; "
            f"agentrt / dispatch-py = {ours / theirs:.2f}×"
        )
        if "prototype" in a:
            mine = a["prototype"]["get"] + a["prototype"]["set_step"]
            print(f"plain-frame prototype / dispatch-py = {mine / theirs:.2f}×")
    if args.tree is None:
        RESULTS.mkdir(parents=True, exist_ok=True)
        out = RESULTS / f"instructions-{version}.json"
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwritten to {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
