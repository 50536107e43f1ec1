"""Issue 26's store-bytes target: what a waiting run would take in a denser layout of the same rows.

    python benchmarks/store_floor.py            # 1,000 waiting runs (as resume.py --memory-only)
    python benchmarks/store_floor.py --quick    # smoke: 200 runs

``python benchmarks/resume.py --memory-only`` measures the store bytes of a run waiting for a
reply (N = 2 tool calls, then an ask; default retention): ~3.4 kB, against issue 26's target of
1.2 kB.  This prototype keeps *the same information* -- the run's 3 checkpoints (the retention
keeps every one: ``retry --from`` and ``fork`` need them), its 2 journal entries, the 9 events of
its durable stream and its run row -- and stores it denser, then measures the pages it takes
(SQLite's ``dbstat``, 2 KiB pages, as agentrt's store) per run:

1. **today**: agentrt's own store after the runs (the rows as ``SqliteStore`` wrote them);
2. **checkpoints as reverse deltas**: the newest checkpoint of a run packed as today (deflate
   against the fixed dictionary), each older one deflated against the dictionary *and the
   checkpoint after it* -- a restore of the newest reads one row, as now; an older one (``retry
   --from``, ``fork``) inflates back from the newest.  A step would re-pack the previous newest as
   a delta: one more ``UPDATE`` and deflate per step, which is why it is a prototype, not the store.
3. **+ the stream in one row per step**: each step's events (as written together: 3 per tool
   call) in one row, their JSON deflated against a dictionary of the stream's own vocabulary.
4. **+ a slimmer run row**: the pending request left out (the newest checkpoint's row has it)
   and the code requirement kept once per distinct text (a small table) instead of per run.

Every layout is read back and compared with the original rows before it is measured (blobs byte
for byte, events as JSON values), so a number here is for a layout that loses nothing.

Results: ``store-floor-<python>[-quick].json`` in the results folder (benchmarks/_env.py).
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import sys
import tempfile
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _path in (str(REPO), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)
import _env  # noqa: E402
import resume  # noqa: E402  (the waiting runs of its memory benchmark)

from agentrt.stores._sql.packing import DICTIONARY_V2, pack, unpack  # noqa: E402

PAGE_SIZE = 2048  # agentrt's SQLite page size
EVENTS_PER_ROW = 3  # one tool call's step writes three events in one transaction
#: what stream events say again and again (their kinds and keys), nearest last
STREAM_DICTIONARY = (
    b'{"agent":"","input":{}}{"waiting_on":"reply","seq":,"prompt":""}'
    b'["started",["waiting",["completed",{"output":'
    b'["tool_started",{"tool":"","seq":1,"idx":0,"key":":1"}]'
    b'["tool_finished",{"tool":"","seq":1,"idx":0,"ok":true,"seconds":0.000'
    b'["checkpoint",{"seq":1,"size_bytes":,"request":{"kind":"tool","name":"","kwargs":{"i":0}}}]'
)


def _deflate(data: bytes, dictionary: bytes) -> bytes:
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, dictionary[-32768:])
    return deflate.compress(data) + deflate.flush()


def _inflate(data: bytes, dictionary: bytes) -> bytes:
    return zlib.decompressobj(-15, dictionary[-32768:]).decompress(data)


def _source(runs: int, work: Path) -> tuple[Path, dict[str, Any]]:
    """The memory benchmark's store of ``runs`` waiting runs, and its own measurement."""
    measured = resume.bench_agentrt_memory(runs, work)["waiting_for_reply"]
    return work / "mem-waiting.db", measured


def _read(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(db)
    try:
        waiting = [r[0] for r in conn.execute("SELECT run_id FROM runs WHERE status = 'waiting'")]
        keep = set(waiting)
        data: dict[str, Any] = {
            "runs": {},
            "checkpoints": defaultdict(list),
            "results": defaultdict(list),
            "stream": defaultdict(list),
        }
        cols = [r[1] for r in conn.execute("PRAGMA table_info(runs)")]
        for row in conn.execute("SELECT * FROM runs"):
            rec = dict(zip(cols, row, strict=True))
            if rec["run_id"] in keep:
                data["runs"][rec["run_id"]] = rec
        for run_id, seq, blob, pending, created in conn.execute(
            "SELECT run_id, seq, blob, pending, created_at FROM checkpoints ORDER BY run_id, seq"
        ):
            if run_id in keep:
                data["checkpoints"][run_id].append((seq, unpack(blob), pending, created))
        for run_id, seq, idx, ok, blob, created in conn.execute(
            "SELECT run_id, seq, idx, ok, blob, created_at FROM results ORDER BY run_id, seq, idx"
        ):
            if run_id in keep:
                data["results"][run_id].append((seq, idx, ok, unpack(blob), created))
        for run_id, sid, kind, text, created in conn.execute(
            "SELECT run_id, id, kind, data, created_at FROM stream ORDER BY run_id, id"
        ):
            if run_id in keep:
                data["stream"][run_id].append((sid, kind, text, created))
        return data
    finally:
        conn.close()


_RUN_COLUMNS = (
    "run_id TEXT PRIMARY KEY, agent TEXT NOT NULL, status TEXT NOT NULL, input TEXT NOT NULL, "
    "seq INTEGER NOT NULL, waiting_on TEXT, created_at REAL NOT NULL, updated_at REAL NOT NULL, "
    "epoch INTEGER NOT NULL, priority INTEGER NOT NULL, cancel_requested INTEGER NOT NULL, head TEXT"
)


def _write(db: Path, data: dict[str, Any], *, deltas: bool, batched: bool, slim: bool) -> None:
    """The same rows in the layout the flags name (see the module docstring)."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
    conn.execute("PRAGMA journal_mode=WAL")
    extra = "" if slim else ", pending TEXT, code_required TEXT"
    code_ref = ", code_ref INTEGER" if slim else ""
    conn.execute(f"CREATE TABLE runs ({_RUN_COLUMNS}{extra}{code_ref})")
    conn.execute("CREATE INDEX runs_by_status ON runs (status, created_at)")
    conn.execute("CREATE TABLE codes (id INTEGER PRIMARY KEY, text TEXT UNIQUE)")
    conn.execute(
        "CREATE TABLE checkpoints (run_id TEXT NOT NULL, seq INTEGER NOT NULL, blob BLOB NOT NULL, "
        "pending TEXT, created_at REAL NOT NULL, PRIMARY KEY (run_id, seq))"
    )
    conn.execute(
        "CREATE TABLE results (run_id TEXT NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL, "
        "ok INTEGER NOT NULL, blob BLOB NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (run_id, seq, idx)) "
        "WITHOUT ROWID"
    )
    if batched:
        conn.execute(
            "CREATE TABLE stream (run_id TEXT NOT NULL, id INTEGER NOT NULL, n INTEGER NOT NULL, "
            "data BLOB NOT NULL, PRIMARY KEY (run_id, id)) WITHOUT ROWID"
        )
    else:
        conn.execute(
            "CREATE TABLE stream (run_id TEXT NOT NULL, id INTEGER NOT NULL, kind TEXT NOT NULL, "
            "data TEXT NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (run_id, id)) WITHOUT ROWID"
        )
    codes: dict[str, int] = {}
    conn.execute("BEGIN")
    for run_id, rec in data["runs"].items():
        values = [
            rec[c]
            for c in (
                "run_id",
                "agent",
                "status",
                "input",
                "seq",
                "waiting_on",
                "created_at",
                "updated_at",
                "epoch",
                "priority",
                "cancel_requested",
                "head",
            )
        ]
        if slim:
            code = codes.setdefault(rec["code_required"], len(codes) + 1)
            conn.execute("INSERT INTO runs VALUES (" + ",".join("?" * 13) + ")", (*values, code))
        else:
            conn.execute(
                "INSERT INTO runs VALUES (" + ",".join("?" * 14) + ")",
                (*values, rec["pending"], rec["code_required"]),
            )
        checkpoints = data["checkpoints"][run_id]
        for i, (seq, blob, pending, created) in enumerate(checkpoints):
            if deltas and i + 1 < len(checkpoints):
                stored = b"D" + _deflate(blob, DICTIONARY_V2 + checkpoints[i + 1][1])
            else:
                stored = pack(blob)
            conn.execute(
                "INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?)", (run_id, seq, stored, pending, created)
            )
        for seq, idx, ok, blob, created in data["results"][run_id]:
            conn.execute(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?)", (run_id, seq, idx, ok, pack(blob), created)
            )
        events = data["stream"][run_id]
        if batched:
            for start in range(0, len(events), EVENTS_PER_ROW):
                chunk = events[start : start + EVENTS_PER_ROW]
                text = json.dumps(
                    [[kind, json.loads(body), created] for _, kind, body, created in chunk],
                    separators=(",", ":"),
                ).encode()
                conn.execute(
                    "INSERT INTO stream VALUES (?, ?, ?, ?)",
                    (run_id, chunk[0][0], len(chunk), _deflate(text, STREAM_DICTIONARY)),
                )
        else:
            conn.executemany("INSERT INTO stream VALUES (?, ?, ?, ?, ?)", [(run_id, *e) for e in events])
    conn.executemany("INSERT INTO codes VALUES (?, ?)", [(i, t) for t, i in codes.items()])
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _verify(db: Path, data: dict[str, Any], *, deltas: bool, batched: bool, slim: bool) -> None:
    """Read every row back and compare with the original: the layout loses nothing."""
    conn = sqlite3.connect(db)
    try:
        for run_id, rows in data["checkpoints"].items():
            stored = conn.execute(
                "SELECT seq, blob, pending, created_at FROM checkpoints WHERE run_id = ? ORDER BY seq DESC",
                (run_id,),
            ).fetchall()
            newer: bytes | None = None
            got = []
            for seq, blob, pending, created in stored:
                raw = (
                    _inflate(blob[1:], DICTIONARY_V2 + newer)
                    if blob[:1] == b"D" and newer is not None
                    else unpack(blob)
                )
                got.append((seq, raw, pending, created))
                newer = raw
            assert got[::-1] == rows, f"checkpoints of {run_id} differ"
        for run_id, events in data["stream"].items():
            if batched:
                back = []
                for sid, n, blob in conn.execute(
                    "SELECT id, n, data FROM stream WHERE run_id = ? ORDER BY id", (run_id,)
                ):
                    items = json.loads(_inflate(blob, STREAM_DICTIONARY))
                    assert len(items) == n
                    back += [(sid + k, kind, body, created) for k, (kind, body, created) in enumerate(items)]
                want = [(sid, kind, json.loads(text), created) for sid, kind, text, created in events]
                assert back == want, f"stream of {run_id} differs"
            else:
                back = conn.execute(
                    "SELECT id, kind, data, created_at FROM stream WHERE run_id = ? ORDER BY id", (run_id,)
                ).fetchall()
                assert back == events
        if slim:
            for run_id, rec in data["runs"].items():
                (text,) = conn.execute(
                    "SELECT text FROM codes JOIN runs ON codes.id = runs.code_ref WHERE run_id = ?", (run_id,)
                ).fetchone()
                newest_pending = data["checkpoints"][run_id][-1][2]
                assert text == rec["code_required"] and newest_pending == rec["pending"]
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke: 200 runs")
    args = parser.parse_args(argv)
    runs = 200 if args.quick else 1000
    layouts = {
        "same rows, rewritten in key order": {"deltas": False, "batched": False, "slim": False},
        "checkpoints as reverse deltas": {"deltas": True, "batched": False, "slim": False},
        "+ stream in one packed row per step": {"deltas": True, "batched": True, "slim": False},
        "+ slimmer run row": {"deltas": True, "batched": True, "slim": True},
    }
    result: dict[str, Any] = {"python": platform.python_version(), "runs": runs, "layouts": {}}
    with tempfile.TemporaryDirectory(prefix="agentrt-store-floor-") as tmp:
        work = Path(tmp)
        source, measured = _source(runs, work)
        data = _read(source)
        waiting = len(data["runs"])
        result["today"] = {
            "store_bytes_per_run": measured["store_bytes_per_run"],
            "by_table": measured["store_bytes_per_run_by_table"],
        }
        print(
            f"benchmarks/store_floor.py on CPython {platform.python_version()}: store bytes per waiting run "
            f"({waiting} runs, N = 2 tool calls then an ask; SQLite pages of {PAGE_SIZE} B in use)"
        )
        print(f"  today (resume.py --memory-only's measure)       {measured['store_bytes_per_run']:7.0f} B")
        for name, flags in layouts.items():
            db = work / f"{len(result['layouts'])}.db"
            _write(db, data, **flags)
            _verify(db, data, **flags)
            tables = resume._store_bytes_by_table(db)
            empty = work / f"{len(result['layouts'])}-empty.db"
            _write(empty, {"runs": {}, "checkpoints": {}, "results": {}, "stream": {}}, **flags)
            base = resume._store_bytes_by_table(empty)
            per_table = {
                t: (tables[t] - base.get(t, 0)) / waiting for t in tables if tables[t] != base.get(t, 0)
            }
            total = sum(per_table.values())
            result["layouts"][name] = {
                "flags": flags,
                "store_bytes_per_run": round(total, 1),
                "by_table": {t: round(v, 1) for t, v in sorted(per_table.items())},
            }
            parts = ", ".join(f"{t} {v:.0f}" for t, v in sorted(per_table.items(), key=lambda kv: -kv[1]))
            print(f"  {name:47s} {total:7.0f} B  ({parts})")
    out = _env.results_dir() / _env.result_name("store-floor", args.quick)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
