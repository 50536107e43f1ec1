"""One agent, two processes: checkpoint a suspended ``async def`` and finish it elsewhere.

    python examples/lowlevel_demo.py                 # both halves (the second in a new process)
    python examples/lowlevel_demo.py start BLOBFILE  # run to the middle, write the checkpoint
    python examples/lowlevel_demo.py resume BLOBFILE # restore the checkpoint, run to the end

The agent is a plain ``async def``: no decorator, no rewriting.  Its only trap is
``await suspend(payload)``; the driver below plays the host, answering each payload.
The checkpoint is taken in the middle of a ``for`` loop, so the blob holds the loop's
iterator, the half-built ``plan`` and the ``budget`` local, and the second process
picks up at exactly that ``await``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentrt.lowlevel import Done, Machine, suspend

CHECKPOINT_AFTER_DAY = 2  # the first process stops while waiting on day 2's forecast


async def plan_trip(city: str, days: int) -> dict[str, Any]:
    budget = await suspend(("ask", f"What is the budget for {days} days in {city}?"))
    plan: list[dict[str, Any]] = []
    for day in range(1, days + 1):
        forecast = await suspend(("tool", "weather", {"city": city, "day": day}))
        activity = "museum" if forecast == "rain" else "walking tour"
        plan.append({"day": day, "forecast": forecast, "activity": activity})
    confirmed = await suspend(("confirm", f"{len(plan)} days in {city} within {budget} EUR?"))
    return {"city": city, "budget": budget, "plan": plan, "confirmed": confirmed}


def host_reply(payload: tuple[Any, ...]) -> Any:
    """What the host answers; in real life a user, a tool call or a model."""
    kind = payload[0]
    if kind == "ask":
        return 1200
    if kind == "tool":
        return "rain" if payload[2]["day"] % 2 == 0 else "sun"
    if kind == "confirm":
        return True
    raise ValueError(f"unexpected payload {payload!r}")


def start(blob_path: Path) -> None:
    machine = Machine(plan_trip, "Lisbon", 3)
    payload = machine.step()  # nothing runs until the first step
    while payload != ("tool", "weather", {"city": "Lisbon", "day": CHECKPOINT_AFTER_DAY}):
        print(f"[start  pid={os.getpid()}] agent asks {payload!r}")
        payload = machine.step(host_reply(payload))
    blob = machine.get()
    blob_path.write_bytes(blob)
    print(f"[start  pid={os.getpid()}] agent waits on {payload!r}")
    print(f"[start  pid={os.getpid()}] checkpoint: {len(blob)} bytes -> {blob_path}")


def resume(blob_path: Path) -> dict[str, Any]:
    machine = Machine.set(blob_path.read_bytes())
    payload = machine.pending
    print(f"[resume pid={os.getpid()}] restored; agent waits on {payload!r}")
    while True:
        result = machine.step(host_reply(payload))
        if isinstance(result, Done):
            print(f"[resume pid={os.getpid()}] done:")
            print(json.dumps(result.value, indent=2))
            value: dict[str, Any] = result.value
            return value
        payload = result
        print(f"[resume pid={os.getpid()}] agent asks {payload!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("phase", nargs="?", choices=["start", "resume"], help="run only one half")
    parser.add_argument("blob", nargs="?", type=Path, help="checkpoint file")
    args = parser.parse_args(argv)

    if args.phase is not None:
        if args.blob is None:
            parser.error(f"{args.phase} needs a BLOBFILE")
        if args.phase == "start":
            start(args.blob)
        else:
            resume(args.blob)
        return 0

    with tempfile.TemporaryDirectory(prefix="agentrt-demo-") as tmp:
        blob_path = Path(tmp) / "plan_trip.blob"
        start(blob_path)
        # A brand-new interpreter: nothing survives but the bytes in the file.
        return subprocess.run([sys.executable, __file__, "resume", str(blob_path)], check=False).returncode


if __name__ == "__main__":
    # A checkpoint names code by module and qualified name.  Run main() from the module
    # imported under its real name, `lowlevel_demo`, rather than from `__main__`, so the
    # blob points at a module that any process can import the same way.
    import lowlevel_demo

    raise SystemExit(lowlevel_demo.main())
