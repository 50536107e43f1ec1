"""Issue 26's durable-step target: the floor of the leanest step design, beside today's runtime.

    python benchmarks/step_floor.py            # 7 interleaved rounds of 1,000 calls per row
    python benchmarks/step_floor.py --quick    # smoke: 2 rounds of 50 calls (no ratio asserted)

``benchmarks/step.py`` measures a durable step through ``Runtime`` against its floor (the same
rows with plain ``sqlite3``).  This asks what a step would cost if the runtime around it cost
nothing: **the shell** drives one run with agentrt's own parts and no others -- the ``Stepper``
steps the machine and signs its checkpoint (``Machine.get_bound``, the store's key and binding),
the tool's result is encoded as the runtime journals it (``encode_result_with_copy``), a step's
three stream events are queued with the runtime's JSON, and ``SqliteStore.save_checkpoint``
writes the checkpoint, the journal entry, the events and the run's row in one transaction -- with
no event loop, no driver task, no lease renewal and no observers: a ``for`` loop calling them.

The shell's writes are real: ``--check`` stops a shell run half way and lets a ``Runtime`` in a
fresh process finish it, and compares the output with an uninterrupted run's.

Rows (process CPU time per tool call, ``time.process_time``: SQLite's writes to the page cache
are kernel time of this process; medians of interleaved rounds, IQR beside):

* floor: plain sqlite3, two transactions and one (``step.py``'s, same blob sizes, same settings);
* ``Runtime``: the agent of ``step.py`` through the runtime (async tool, SQLite, NORMAL);
* shell: all of the above work; and three ablations that show what each part of the data costs:
  blobs kept unpacked (no deflate), no stream events, and nothing written at all (the encoding
  alone: stepping, signing, journal blob, event JSON);
* the lean design (``benchmarks/step_lean.py``): the step the ablations point to, built and run --
  the plain-frame checkpoint codec, blobs kept as they are, a step's events in one stream row --
  beside ITS floor, its own statements replayed with plain ``sqlite3``; its check: a lean run
  stopped half way is finished by a fresh process with an uninterrupted run's output.

Issue 26's target is a step within 2x of "the same rows in one transaction with raw sqlite3": the
shell's and the lean design's ratios to their own rows replayed are printed last.

Results: ``step-floor-<python>[-quick].json`` in the results folder (benchmarks/_env.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _path in (str(REPO), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)
import _env  # noqa: E402  (benchmarks/_env.py: the results folder)
import step  # noqa: E402  (the agent, its tool and the floor)

from agentrt._runtime import stream as _stream  # noqa: E402
from agentrt._runtime.encoding import checkpoint_bind, decode_result, encode_result_with_copy  # noqa: E402
from agentrt._runtime.state import START, LiveRun  # noqa: E402
from agentrt._runtime.stepper import Checkpoint, Complete, Dispatch, Stepper  # noqa: E402
from agentrt.keys import keyring_for_store  # noqa: E402
from agentrt.lowlevel import Machine  # noqa: E402
from agentrt.stores import SqliteStore  # noqa: E402
from agentrt.stores._sql import store as _sql_store  # noqa: E402
from agentrt.stores.base import NewRun  # noqa: E402

OWNER = "step-floor-shell"
#: step_lean.py's rows: plain-data agent or not -> (the design's row, its rows replayed)
LEAN = {
    False: ("lean design, step.py's agent", "floor: lean rows (step.py's agent), replayed"),
    True: ("lean design, plain-data agent", "floor: lean rows (plain-data agent), replayed"),
}
AGENT_SPEC = "benchmarks.step:step_agent"


class Shell:
    """One run driven by agentrt's parts in a plain loop (see the module docstring)."""

    def __init__(self, store: SqliteStore, *, write: bool = True, events: bool = True) -> None:
        self.store = store
        self.write = write
        self.events = events
        self.agent = step._agent()
        key = keyring_for_store(store).write
        self.stepper = Stepper(
            sign=lambda machine, run_id, seq, chain: machine.get_bound(
                key, checkpoint_bind(store, run_id, seq, chain)
            )
        )

    def start(self, n: int) -> LiveRun:
        run_id = uuid.uuid4().hex[:12]
        rec = self.store.create_run(NewRun(run_id, AGENT_SPEC, {"n": n}, owner=OWNER, ttl_seconds=3600.0))
        live = LiveRun(run_id, self.agent)
        live.epoch = rec.epoch
        value = self.agent.convert_input(rec.input)
        live.machine = Machine(self.agent.run, value, self.agent.make_task(run_id))
        live.payload = START
        self._event(run_id, "started", {"agent": self.agent.name, "input": rec.input})
        return live

    def _event(self, run_id: str, kind: str, data: dict[str, Any]) -> None:
        if self.events and self.write:
            self.store.queue_stream(run_id, kind, _stream._json_text(data))
        elif self.events:
            _stream._json_text(data)  # the work, not the write

    def drive(self, live: LiveRun, stop_after: int | None = None) -> Any:
        """Step ``live`` until it completes (its output) or has made ``stop_after`` calls (None)."""
        store, stepper, run_id = self.store, self.stepper, live.run_id
        calls = 0
        while True:
            command = stepper.activate(live, time.time())
            if type(command) is Checkpoint:
                journal, live.unjournaled = live.unjournaled, []
                if self.write:
                    store.save_checkpoint(
                        run_id,
                        OWNER,
                        live.seq,
                        command.blob,
                        command.pending,
                        command.recorded.rows,
                        epoch=live.epoch,
                        code_required=command.code_required,
                        journal=journal,
                    )
                self._event(
                    run_id,
                    "checkpoint",
                    {"seq": live.seq, "size_bytes": len(command.blob), "request": command.pending},
                )
                if stop_after is not None and calls >= stop_after:
                    if self.write:
                        store.flush_stream()
                        store.release_lease(run_id, OWNER)
                    return None
            elif type(command) is Dispatch and command.direct:
                self._call(live)
                calls += 1
            elif type(command) is Complete:
                if self.write:
                    store.finish_run(
                        run_id,
                        OWNER,
                        "completed",
                        output=command.output,
                        events=command.recorded.rows,
                        epoch=live.epoch,
                    )
                self._event(run_id, "completed", {"output": command.output})
                if self.write:
                    store.flush_stream()
                return command.output
            else:  # the step agent makes one tool call at a time and ends: nothing else comes
                raise AssertionError(f"the shell does not handle {command!r}")

    def _call(self, live: LiveRun) -> None:
        """The pending tool call, made as the runtime makes an async tool's, and its result encoded."""
        request, seq, run_id = live.payload, live.seq, live.run_id
        tool = self.agent.tools[request.name]
        started = time.monotonic()
        self._event(
            run_id,
            "tool_started",
            {"tool": request.name, "seq": seq, "idx": 0, "key": f"{run_id}:{seq}"},
        )
        coro = tool.fn(**request.kwargs)
        try:
            coro.send(None)
        except StopIteration as stop:
            value = stop.value
        else:  # pragma: no cover - the benchmark's tool never waits
            raise AssertionError("the step tool waited")
        self._event(
            run_id,
            "tool_finished",
            {
                "tool": request.name,
                "seq": seq,
                "idx": 0,
                "ok": True,
                "seconds": round(time.monotonic() - started, 6),
            },
        )
        blob, copy = encode_result_with_copy(self.store, run_id, seq, 0, True, value)
        live.unjournaled.append((seq, 0, True, blob))
        live.results[0] = copy or decode_result(self.store, run_id, seq, 0, True, blob)


@contextlib.contextmanager
def unpacked() -> Iterator[None]:
    """Blobs kept in their rows as they are (no deflate), for the ablation row."""
    saved = _sql_store.pack
    _sql_store.pack = lambda blob: blob  # type: ignore[assignment]
    try:
        yield
    finally:
        _sql_store.pack = saved


def cpu_per_call(run: Callable[[int], None], n: int) -> float:
    """CPU seconds per call: (a run of ``n`` calls - a run of none) / ``n``."""
    t0 = time.process_time()
    run(0)
    empty = time.process_time() - t0
    t0 = time.process_time()
    run(n)
    return (time.process_time() - t0 - empty) / n


def shell_row(
    work: Path, tag: str, *, write: bool = True, events: bool = True, pack: bool = True
) -> Callable[[int], None]:
    def run(n: int) -> None:
        db = work / f"{tag}-{n}.db"
        for suffix in ("", "-wal", "-shm", ".key"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{db}{suffix}")
        store = SqliteStore(db)
        try:
            shell = Shell(store, write=write, events=events)
            with contextlib.nullcontext() if pack else unpacked():
                out = shell.drive(shell.start(n))
            assert out == {"acc": n * (n - 1) // 2}, out
        finally:
            store.close()

    return run


class Recording:
    """A store's ``sqlite3`` connection that records every statement it makes, with its parameters."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.calls: list[tuple[str, str, Any]] = []

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        self.calls.append(("execute", sql, params))
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        rows = list(rows)
        self.calls.append(("executemany", sql, rows))
        return self._conn.executemany(sql, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def remove_db(db: Path) -> None:
    for suffix in ("", "-wal", "-shm", ".key"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{db}{suffix}")


def _recorded(work: Path, tag: str, n: int, pack: bool) -> list[tuple[str, str, Any]]:
    """Every statement, with its parameters, that a shell run of ``n`` calls makes on its store."""
    db = work / f"record-{tag}-{n}.db"
    remove_db(db)
    store = SqliteStore(db)
    recording = Recording(store._conn)  # type: ignore[arg-type]
    store._conn = recording  # type: ignore[assignment]
    try:
        shell = Shell(store)
        with contextlib.nullcontext() if pack else unpacked():
            shell.drive(shell.start(n))
    finally:
        store.close()
    return recording.calls


def replay_row(work: Path, tag: str, n: int, *, pack: bool = True) -> Callable[[int], None]:
    """The floor of issue 26 taken literally: the rows the shell writes -- the same statements with
    the same parameters, in the same transactions (one per step) -- made by plain ``sqlite3`` on a
    store's schema, with the store's settings (WAL, synchronous=NORMAL), nothing computed."""
    calls = {0: _recorded(work, tag, 0, pack), n: _recorded(work, tag, n, pack)}

    def run(k: int) -> None:
        db = work / f"replay-{tag}-{k}.db"
        remove_db(db)
        SqliteStore(db).close()  # the schema (run(0) pays for it too)
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        try:
            for method, sql, params in calls[k]:
                getattr(conn, method)(sql, params)
        finally:
            conn.close()

    return run


def runtime_row(work: Path) -> Callable[[int], None]:
    def run(n: int) -> None:
        asyncio.run(
            step._agentrt_run(work / f"runtime-{n}-{time.monotonic_ns()}.db", n, False, "NORMAL", None)
        )

    return run


def floor_row(work: Path, one_tx: bool, sizes: tuple[int, int]) -> Callable[[int], None]:
    def run(n: int) -> None:
        db = work / f"floor-{one_tx}-{n}-{time.monotonic_ns()}.db"
        step.floor_per_call(db, max(n, 1) if n else 1, "NORMAL", sizes[0], sizes[1], one_tx=one_tx)

    return run


def check_resumable(work: Path) -> None:
    """A shell run stopped half way is finished by a ``Runtime`` in a fresh process, with the output an
    uninterrupted run gives: the shell's rows are the runtime's."""
    n = 20
    db = work / "check.db"
    store = SqliteStore(db)
    shell = Shell(store)
    live = shell.start(n)
    shell.drive(live, stop_after=n // 2)
    store.close()
    code = (
        "import asyncio, sys\n"
        "sys.path[:0] = [sys.argv[2], sys.argv[3]]\n"
        "from agentrt import Runtime\n"
        "from agentrt.stores import SqliteStore\n"
        "async def main():\n"
        "    async with Runtime(SqliteStore(sys.argv[1]), step_budget_seconds=None) as rt:\n"
        "        await rt.resume(sys.argv[4])\n"
        "        print((await rt.wait(sys.argv[4], timeout=60)).acc)\n"
        "asyncio.run(main())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(db), str(REPO), str(HERE), live.run_id],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"the runtime could not finish the shell's run:\n{result.stderr}")
    got = int(result.stdout.strip().splitlines()[-1])
    if got != n * (n - 1) // 2:
        raise SystemExit(
            f"the runtime finished the shell's run with {got}, an uninterrupted run gives {n * (n - 1) // 2}"
        )
    print(
        f"  check: a shell run stopped after {n // 2} of {n} calls, finished by a Runtime in a fresh "
        f"process: output {got}, as an uninterrupted run's",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke: 2 rounds of 50 calls")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--calls", type=int, default=None)
    args = parser.parse_args(argv)
    rounds = args.rounds or (2 if args.quick else 7)
    n = args.calls or (50 if args.quick else 1000)
    with tempfile.TemporaryDirectory(prefix="agentrt-step-floor-") as tmp:
        work = Path(tmp)
        import step_lean  # here: it builds on this module's recording

        check_resumable(work)
        for plain in LEAN:
            print(step_lean.check_resumable(work, plain), flush=True)
        sizes = _blob_sizes(work, n)
        rows: dict[str, Callable[[int], None]] = {}
        for plain, (design, replayed) in LEAN.items():
            rows[replayed] = step_lean.replay_row(work, n, plain)
            rows[design] = step_lean.lean_row(work, plain)
        rows |= {
            "floor: the shell's rows, replayed": replay_row(work, "packed", n),
            "floor: the unpacked shell's rows, replayed": replay_row(work, "unpacked", n, pack=False),
            "floor: plain sqlite3, 2 tx": floor_row(work, False, sizes),
            "floor: plain sqlite3, 1 tx": floor_row(work, True, sizes),
            "Runtime (async tool)": runtime_row(work),
            "shell": shell_row(work, "shell"),
            "shell, blobs unpacked": shell_row(work, "unpacked", pack=False),
            "shell, no stream events": shell_row(work, "noevents", events=False),
            "shell, unpacked, no events": shell_row(work, "bare", events=False, pack=False),
            "shell, nothing written": shell_row(work, "nowrite", write=False),
        }
        samples: dict[str, list[float]] = {name: [] for name in rows}
        for r in range(rounds):
            for name, run in rows.items():
                samples[name].append(cpu_per_call(run, n))
            print(f"  round {r + 1}/{rounds} done", flush=True)
        lean_sizes = {LEAN[plain][0]: step_lean.blob_sizes(work, plain) for plain in LEAN}
    floor = statistics.median(samples["floor: plain sqlite3, 2 tx"])
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "calls": n,
        "rounds": rounds,
        "blob_sizes": {"result": sizes[0], "checkpoint": sizes[1]},
        "lean_stored_sizes": lean_sizes,
        "rows": {},
    }
    print(
        f"\nbenchmarks/step_floor.py on CPython {platform.python_version()}: CPU per tool call, "
        f"medians of {rounds} rounds of {n} calls (SQLite, WAL, synchronous=NORMAL)"
    )
    for name, values in samples.items():
        med = statistics.median(values)
        q = statistics.quantiles(values, n=4) if len(values) >= 2 else [med, med, med]
        result["rows"][name] = {
            "cpu_us": round(med * 1e6, 1),
            "iqr_us": [round(q[0] * 1e6, 1), round(q[2] * 1e6, 1)],
            "ratio_to_floor": round(med / floor, 2),
        }
        print(
            f"  {name:32s} {med * 1e6:7.1f} us  IQR {q[0] * 1e6:6.1f}-{q[2] * 1e6:6.1f}  "
            f"{med / floor:5.2f}x the floor"
        )
    result["to_its_rows_replayed"] = {}
    for design, replayed in (("shell", "floor: the shell's rows, replayed"), *LEAN.values()):
        ratio = statistics.median(samples[design]) / statistics.median(samples[replayed])
        result["to_its_rows_replayed"][design] = round(ratio, 2)
        print(f"  {design}: {ratio:.2f}x its own rows replayed with plain sqlite3 (issue 26's target: 2x)")
    for design, sizes_of in lean_sizes.items():
        print(f"  {design}, mean stored bytes: {sizes_of}")
    out = _env.results_dir() / _env.result_name("step-floor", args.quick)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  wrote {out}")
    return 0


def _blob_sizes(work: Path, n: int) -> tuple[int, int]:
    """The journal entry's and checkpoint's mean stored sizes, from a shell run (for the floor)."""
    shell_row(work, "sizes")(min(n, 100))
    return step.blob_sizes(work / f"sizes-{min(n, 100)}.db")


if __name__ == "__main__":
    sys.exit(main())
