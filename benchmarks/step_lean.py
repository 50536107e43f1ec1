"""Issue 26's durable step: a working prototype of a lean step design, and that design's literal floor.

``benchmarks/step_floor.py`` runs it beside today's runtime (``python benchmarks/step_floor.py``);
this module holds the design.  step_floor.py's ablations show today's step data costing ~5× its own
rows even with no runtime around it: the checkpoint's encoding, deflating two blobs at every step
and three stream events.  The lean step keeps a step's information and its one transaction, and
changes how the data is made:

* **the checkpoint** is checkpoint_floor.py's plain-frame codec (a slot getter per await site, the
  C pickler alone, a keyed BLAKE2b MAC that also covers the store, run and seq it is written for),
  kept in its row as it is: no deflate at step time;
* **the tool's result** is pickled by the C pickler with a MAC bound to its run, seq and member, and
  the agent gets the decoded copy a resume would give it (as the runtime's journal does);
* **the step's stream events** (``tool_started`` and ``tool_finished`` of the call, the next
  ``checkpoint``) go in ONE stream row: a JSON array made by the C encoder;
* **the run row**: today's fenced ``UPDATE`` with today's signed head, and the retention's
  pruning when due (as ``SqliteStore.save_checkpoint``), all in one transaction on the real
  store schema, with plain ``sqlite3``.

It drives step.py's own agent (its frame holds the ``Task``, the attrs input and a ``for`` loop's
range iterator; its request is the SDK's ``ToolCall``: the C pickler reaches attrs' Python
``__getstate__`` for three objects per checkpoint), or the same loop with only plain data in its
frame (``checkpoint_agents.tool_loop``: what the codec costs when nothing calls back into Python).

Its floor is issue 26's taken literally: the statements a lean run makes, with their parameters,
recorded and replayed by plain ``sqlite3`` (:func:`replay_row`).  Its check (:func:`check_resumable`):
a lean run stopped half way is finished in a fresh process from its newest checkpoint, with the
output of an uninterrupted run.

What it leaves out, which a real version must carry: today's codec for frames the C pickler cannot
take as they are (closure cells, the exception being handled, values with agentrt's reducers), the
record names ``agentrt dump`` and ``upgrade`` read, readers of the
packed stream row (``subscribe``, SSE, the views split it), and compaction at rest -- its blobs are
kept undeflated, so its rows are larger than today's (``blob_sizes``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import pickle
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _path in (str(REPO), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)
import checkpoint_agents  # noqa: E402  (tool_loop: the plain-data agent)
import step  # noqa: E402  (the agent and its tool: those of step.py's and step_floor.py's rows)
from checkpoint_floor import ShapeCodec  # noqa: E402
from step_floor import Recording, remove_db  # noqa: E402

from agentrt._runtime.pending import summarize  # noqa: E402
from agentrt.keys import keyring_for_store  # noqa: E402
from agentrt.stores import SqliteStore  # noqa: E402
from agentrt.stores._identity import make_head  # noqa: E402
from agentrt.stores.base import NewRun, prune_due  # noqa: E402

OWNER = "step-lean"
RUN_ID = "lean-run"
#: the agent a lean run drives: step.py's own (False), or the same loop with only plain data in its
#: frame (True: ``checkpoint_agents.tool_loop``)
AGENT_SPECS = {False: "benchmarks.step:step_agent", True: "checkpoint_agents:tool_loop"}
_MAC = 32
_SHARED = ShapeCodec(b"")  # its per-site and per-shape caches, shared by every run's codec

_UPDATE_RUN = (
    "UPDATE runs SET seq = ?, pending = ?, updated_at = ?, code_required = ?, head = ? "
    "WHERE run_id = ? AND lease_owner = ? AND epoch = ? AND status = 'running' "
    "AND waiting_on IS NULL AND wake_at IS NULL"
)
_INSERT_RESULT = (
    "INSERT INTO results (run_id, seq, idx, ok, blob, created_at) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT DO NOTHING"
)
_INSERT_CHECKPOINT = (
    "INSERT INTO checkpoints (run_id, seq, blob, pending, created_at) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (run_id, seq) DO UPDATE SET blob = excluded.blob, "
    "pending = excluded.pending, created_at = excluded.created_at"
)
_INSERT_STREAM = "INSERT INTO stream (run_id, id, kind, data, created_at) VALUES (?, ?, 'step', ?, ?)"
_FINISH_RUN = (
    "UPDATE runs SET status = 'completed', output = ?, pending = NULL, updated_at = ?, head = ? "
    "WHERE run_id = ? AND lease_owner = ? AND epoch = ?"
)


def connect(db: Path) -> sqlite3.Connection:
    """A plain ``sqlite3`` connection with the store's settings (its file is in WAL mode already)."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def prepare(db: Path, n: int, plain: bool) -> tuple[str, Any, int, int | None]:
    """A fresh store holding run :data:`RUN_ID` of ``n`` calls, leased to :data:`OWNER`: its store id,
    keyring, epoch and retention (made by ``SqliteStore``, as the runtime makes a run)."""
    remove_db(db)
    store = SqliteStore(db)
    try:
        rec = store.create_run(NewRun(RUN_ID, AGENT_SPECS[plain], {"n": n}, owner=OWNER, ttl_seconds=3600.0))
        return store.store_id, keyring_for_store(store), rec.epoch, store.retention
    finally:
        store.close()


class LeanStep:
    """One run driven by the lean step design (see the module docstring)."""

    def __init__(
        self, conn: Any, store_id: str, ring: Any, epoch: int, retention: int | None, plain: bool
    ) -> None:
        self.conn, self.store_id, self.ring, self.epoch, self.retention = (
            conn,
            store_id,
            ring,
            epoch,
            retention,
        )
        self.codec = copy.copy(_SHARED)
        self.codec.key = ring.write
        self.stream_id = 0
        self.queued: list[list[Any]] = []
        self.code_required = json.dumps([AGENT_SPECS[plain]])  # per run: its code, as the runtime's
        self.agent = step._agent()  # its tools, and the agent itself unless ``plain``
        self.plain = plain

    def bind(self, seq: int, member: str = "") -> bytes:
        return f"{self.store_id}:{RUN_ID}:{seq}{member}".encode()

    def start(self, n: int) -> Any:
        """The agent's coroutine, not started (as ``Machine`` makes it)."""
        agent, payload = self.agent, {"n": n}
        self.queued.append(["started", {"agent": AGENT_SPECS[self.plain], "input": payload}])
        if self.plain:
            return checkpoint_agents.tool_loop(n)
        return agent.run(agent.convert_input(payload), agent.make_task(RUN_ID))

    def drive(
        self,
        coro: Any,
        value: Any = None,
        seq: int = 0,
        journal: tuple[int, int, bool, bytes] | None = None,
        stop_after: int | None = None,
    ) -> Any:
        """Step ``coro`` with ``value`` until it returns (its output) or made ``stop_after`` calls."""
        conn, codec, calls = self.conn, self.codec, 0
        while True:
            try:
                request = coro.send(value)[1]
            except StopIteration as stop:
                self._finish(seq, journal, stop.value)
                return stop.value
            seq += 1
            blob = codec.get(coro, bind=self.bind(seq))
            summary = (
                summarize(request)
                if not self.plain
                else {"kind": "tool", "name": request[1], "kwargs": request[2]}
            )
            pending = json.dumps(summary)
            now = time.time()
            self.queued.append(["checkpoint", {"seq": seq, "size_bytes": len(blob), "request": summary}])
            head = make_head(self.ring, self.store_id, RUN_ID, seq, blob[:_MAC], False)
            conn.execute("BEGIN IMMEDIATE")
            cur = conn.execute(
                _UPDATE_RUN, (seq, pending, now, self.code_required, head, RUN_ID, OWNER, self.epoch)
            )
            if cur.rowcount != 1:
                conn.execute("ROLLBACK")
                raise RuntimeError(f"run {RUN_ID} is no longer {OWNER}'s at epoch {self.epoch}")
            if journal is not None:
                conn.execute(_INSERT_RESULT, (RUN_ID, *journal, now))
            conn.execute(_INSERT_CHECKPOINT, (RUN_ID, seq, blob, pending, now))
            self._flush(now)
            if prune_due(seq, self.retention):
                cutoff = seq - (self.retention or 0)
                for table in ("checkpoints", "results", "replaced_checkpoints"):
                    conn.execute(f"DELETE FROM {table} WHERE run_id = ? AND seq <= ?", (RUN_ID, cutoff))
            conn.execute("COMMIT")
            if stop_after is not None and calls >= stop_after:
                return None
            value, journal = self.call(seq, request)
            calls += 1

    def call(self, seq: int, request: Any) -> tuple[Any, tuple[int, int, bool, bytes]]:
        """The requested tool call made as the runtime makes an async tool's: the agent's copy of its
        result and the journal entry that holds it."""
        name, kwargs = (request[1], request[2]) if self.plain else (request.name, request.kwargs)
        started = time.monotonic()
        self.queued.append(["tool_started", {"tool": name, "seq": seq, "idx": 0, "key": f"{RUN_ID}:{seq}"}])
        try:
            self.agent.tools[name].fn(**kwargs).send(None)
        except StopIteration as stop:
            result = stop.value
        else:  # pragma: no cover - the benchmark's tool never waits
            raise AssertionError("the step tool waited")
        self.queued.append(
            [
                "tool_finished",
                {
                    "tool": name,
                    "seq": seq,
                    "idx": 0,
                    "ok": True,
                    "seconds": round(time.monotonic() - started, 6),
                },
            ]
        )
        body = pickle.dumps(result, 5)
        mac = hashlib.blake2b(self.bind(seq, ":0") + body, key=self.ring.write, digest_size=_MAC).digest()
        return pickle.loads(body), (seq, 0, True, mac + body)

    def _flush(self, now: float) -> None:
        self.stream_id += 1
        self.conn.execute(_INSERT_STREAM, (RUN_ID, self.stream_id, json.dumps(self.queued), now))
        self.queued.clear()

    def _finish(self, seq: int, journal: tuple[int, int, bool, bytes] | None, output: Any) -> None:
        conn, now = self.conn, time.time()
        output = self.agent.output_to_json(output)
        self.queued.append(["completed", {"output": output}])
        head = make_head(self.ring, self.store_id, RUN_ID, seq, b"", True)
        conn.execute("BEGIN IMMEDIATE")
        if journal is not None:
            conn.execute(_INSERT_RESULT, (RUN_ID, *journal, now))
        conn.execute(_FINISH_RUN, (json.dumps(output), now, head, RUN_ID, OWNER, self.epoch))
        self._flush(now)
        conn.execute("COMMIT")


def acc(output: Any) -> int:
    """The sum a run's output holds (the plain agent returns a dict, step.py's a ``StepOutput``)."""
    return int(output["acc"] if isinstance(output, dict) else output.acc)


def lean_run(db: Path, n: int, plain: bool, conn_wrapper: Callable[[Any], Any] = lambda conn: conn) -> Any:
    """A lean run of ``n`` calls in a fresh store at ``db``; its output."""
    store_id, ring, epoch, retention = prepare(db, n, plain)
    conn = conn_wrapper(connect(db))
    try:
        lean = LeanStep(conn, store_id, ring, epoch, retention, plain)
        return lean.drive(lean.start(n))
    finally:
        conn.close()


def lean_row(work: Path, plain: bool) -> Callable[[int], None]:
    def run(n: int) -> None:
        out = lean_run(work / f"lean-{plain}-{n}.db", n, plain)
        assert acc(out) == n * (n - 1) // 2, out

    return run


def _recorded(work: Path, n: int, plain: bool) -> list[tuple[str, str, Any]]:
    """Every statement, with its parameters, that a lean run of ``n`` calls makes on its connection."""
    recordings: list[Recording] = []

    def recorded_conn(conn: Any) -> Any:
        recordings.append(Recording(conn))
        return recordings[-1]

    lean_run(work / f"lean-record-{plain}-{n}.db", n, plain, recorded_conn)
    return recordings[0].calls


def replay_row(work: Path, n: int, plain: bool) -> Callable[[int], None]:
    """The lean design's floor: the statements a lean run makes, with the same parameters, in the same
    transactions, made by plain ``sqlite3`` on the same freshly made store, nothing computed."""
    recorded = {k: _recorded(work, k, plain) for k in (0, n)}

    def run(k: int) -> None:
        db = work / f"lean-replay-{plain}-{k}.db"
        prepare(db, k, plain)
        conn = connect(db)
        try:
            for method, sql, params in recorded[k]:
                getattr(conn, method)(sql, params)
        finally:
            conn.close()

    return run


def blob_sizes(work: Path, plain: bool, n: int = 100) -> dict[str, float]:
    """The mean stored sizes of a lean run's checkpoints and journal entries, and its stream row's."""
    db = work / f"lean-sizes-{plain}.db"
    lean_run(db, n, plain)
    conn = sqlite3.connect(db)
    try:
        sizes = {
            table: conn.execute(f"SELECT avg(length({column})) FROM {table}").fetchone()[0]
            for table, column in (("checkpoints", "blob"), ("results", "blob"), ("stream", "data"))
        }
    finally:
        conn.close()
    return {name: round(float(size), 1) for name, size in sizes.items()}


def resume_and_finish(db: Path, plain: bool) -> Any:
    """Finish the lean run in ``db`` from its newest checkpoint (in the process that calls this)."""
    store = SqliteStore(db)
    try:
        store_id, ring = store.store_id, keyring_for_store(store)
    finally:
        store.close()
    conn = connect(db)
    try:
        seq, epoch = conn.execute("SELECT seq, epoch FROM runs WHERE run_id = ?", (RUN_ID,)).fetchone()
        (blob,) = conn.execute(
            "SELECT blob FROM checkpoints WHERE run_id = ? AND seq = ?", (RUN_ID, seq)
        ).fetchone()
        (last_id,) = conn.execute("SELECT max(id) FROM stream WHERE run_id = ?", (RUN_ID,)).fetchone()
        lean = LeanStep(conn, store_id, ring, epoch, None, plain)
        lean.stream_id = last_id
        coro, request, _ = lean.codec.set(blob, bind=lean.bind(seq))
        value, journal = lean.call(seq, request)  # the call the stopped run had not made
        return lean.drive(coro, value, seq, journal)
    finally:
        conn.close()


def check_resumable(work: Path, plain: bool) -> str:
    """A lean run stopped after half its calls is finished by a fresh process from its newest
    checkpoint, with the output of an uninterrupted run (raises if not); a line saying so."""
    n, db = 20, work / f"lean-check-{plain}.db"
    store_id, ring, epoch, retention = prepare(db, n, plain)
    conn = connect(db)
    try:
        lean = LeanStep(conn, store_id, ring, epoch, retention, plain)
        lean.drive(lean.start(n), stop_after=n // 2)
    finally:
        conn.close()
    code = (
        "import sys\n"
        "sys.path[:0] = [sys.argv[2]]\n"
        "import step_lean\n"
        "out = step_lean.resume_and_finish(step_lean.Path(sys.argv[1]), sys.argv[3] == 'plain')\n"
        "print(step_lean.acc(out))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(db), str(HERE), "plain" if plain else "step"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"a fresh process could not finish the lean run:\n{result.stderr}")
    got, want = int(result.stdout.strip().splitlines()[-1]), n * (n - 1) // 2
    if got != want:
        raise SystemExit(f"the lean run, resumed, gave {got}; an uninterrupted run gives {want}")
    return (
        f"  check: a lean run ({'plain-data agent' if plain else 'step.py agent'}) stopped after "
        f"{n // 2} of {n} calls, finished by a fresh process from its newest checkpoint: output "
        f"{got}, as an uninterrupted run's"
    )
