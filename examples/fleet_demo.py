"""Try the fleet in one command (``make fleet-demo``): PostgreSQL, two workers, one killed, all finish.

    python examples/fleet_demo.py [--runs 12] [--steps 4] [--keep-logs]

What it does, each step printed as the command a person would type:

1. starts a throwaway PostgreSQL server on loopback: Debian's binaries (``/usr/lib/postgresql/*/bin``,
   or ``$AGENTRT_PG_BIN``), ``initdb`` into a temporary directory (as the ``postgres`` user when run
   as root: the server refuses root), a free port, no fsync;
2. makes a blob key (``agentrt keygen --print``) for the shared store;
3. starts two workers (``agentrt worker --store URL --import fleet_demo``);
4. submits a batch of runs in one command (``agentrt submit fleet_demo:survey --count N``): each run
   makes a few slow tool calls, and every call is written to a ledger with its idempotency key;
5. kills one worker with SIGKILL while it holds runs, and shows the survivor taking them over;
6. waits until every run completed and checks the ledger: no call whose result was journaled was
   made again; a call the killed worker had in flight (or had finished but not yet journaled) is
   made once more, with the same key, as documented;
7. stops everything and deletes the temporary directory, whatever happened (also on Ctrl-C).

Exit status 0 when every run completed exactly as described, 1 otherwise, 2 when PostgreSQL's
binaries are not installed (``apt-get install postgresql``).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import attrs

from agentrt import Task, agent, tool

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


# ----------------------------------------------------------------------------- the agent the workers run


@tool
def survey_step(site: int, step: int, idempotency_key: str = "") -> str:
    """One slow call to an outside system; the ledger ($FLEET_DEMO_LEDGER) records each call."""
    with open(os.environ["FLEET_DEMO_LEDGER"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"key": idempotency_key, "pid": os.getpid(), "at": "start"}) + "\n")
    time.sleep(float(os.environ.get("FLEET_DEMO_STEP_SECONDS", "0.3")))
    with open(os.environ["FLEET_DEMO_LEDGER"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"key": idempotency_key, "pid": os.getpid(), "at": "done"}) + "\n")
    return f"site {site} step {step} ok"


@attrs.frozen
class Site:
    site: int = 0
    steps: int = 4


@attrs.frozen
class Report:
    lines: list[str]


async def run_survey(input: Site, task: Task) -> Report:
    lines = []
    for step in range(input.steps):
        lines.append(await task.tools.survey_step(site=input.site, step=step))
    return Report(lines)


survey = agent(input=Site, output=Report, tools=[survey_step], run=run_survey, name="survey")


# ----------------------------------------------------------------------------- a throwaway PostgreSQL


def find_bindir() -> str | None:
    """PostgreSQL's server binaries: ``$AGENTRT_PG_BIN``, else Debian's newest."""
    for bindir in [
        os.environ.get("AGENTRT_PG_BIN", ""),
        *sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True),
    ]:
        if bindir and os.path.exists(os.path.join(bindir, "initdb")):
            return bindir
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def postgres(root: Path, bindir: str) -> Iterator[str]:
    """A PostgreSQL server in ``root`` on a free loopback port; stopped on the way out."""
    data, sock = root / "pgdata", root / "pgsock"
    sock.mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0:  # the server refuses to run as root
        user = pwd.getpwnam("postgres")
        for path in (root, sock):
            os.chown(path, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    say(f"{bindir}/initdb -D {data} -A trust -U agentrt")
    subprocess.run(
        [
            *prefix,
            f"{bindir}/initdb",
            "-D",
            str(data),
            "-A",
            "trust",
            "-U",
            "agentrt",
            "--no-sync",
            "-E",
            "UTF8",
        ],
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off"
    log = root / "postgres.log"
    say(f"{bindir}/pg_ctl -D {data} start   (port {port}, loopback only)")
    subprocess.run(
        [*prefix, f"{bindir}/pg_ctl", "-D", str(data), "-o", options, "-l", str(log), "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://agentrt@127.0.0.1:{port}/postgres"
    finally:
        say(f"{bindir}/pg_ctl -D {data} stop")
        subprocess.run(
            [*prefix, f"{bindir}/pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop"], capture_output=True
        )


# ----------------------------------------------------------------------------- the demo


def say(text: str) -> None:
    print(f"fleet-demo: {text}", flush=True)


def agentrt(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    say("$ agentrt " + shlex.join(args))
    proc = subprocess.run(
        [sys.executable, "-m", "agentrt", *args], cwd=HERE, env=env, capture_output=True, text=True
    )
    if check and proc.returncode != 0:
        raise RuntimeError(f"agentrt {args[0]} exited with {proc.returncode}: {proc.stderr.strip()}")
    return proc


def runs_of(url: str, env: dict[str, str]) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "agentrt", "runs", "--store", url, "--json"],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(proc.stdout)["runs"])


def tally(runs: list[dict]) -> str:
    counts = Counter(r["status"] + (" (interrupted)" if r.get("interrupted") else "") for r in runs)
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))


def demo(root: Path, url: str, args: argparse.Namespace) -> bool:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["FLEET_DEMO_LEDGER"] = str(root / "ledger.jsonl")
    env["AGENTRT_LEASE_SECONDS"] = "2"  # a killed worker's runs are free again within 2 s
    env.pop("AGENTRT_STORE", None)
    env["AGENTRT_BLOB_KEY"] = agentrt("keygen", "--print", env=env).stdout.strip()

    workers: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name in ("A", "B"):
            share = str(max(1, (args.runs + 1) // 2))  # each worker takes half the runs at once
            command = [
                "worker",
                "--store",
                url,
                "--import",
                "fleet_demo",
                "--poll-seconds",
                "1",
                "--concurrency",
                share,
            ]
            say(f"worker {name}: $ agentrt " + shlex.join(command))
            with open(root / f"worker-{name}.log", "wb") as log:
                workers[name] = subprocess.Popen(
                    [sys.executable, "-m", "agentrt", *command], cwd=HERE, env=env, stdout=log, stderr=log
                )
        agentrt(
            "submit",
            "fleet_demo:survey",
            "--count",
            str(args.runs),
            "--input",
            json.dumps({"steps": args.steps}),
            "--store",
            url,
            env=env,
        )
        victim = workers["A"]
        deadline = time.monotonic() + 60
        while not _holds_runs(root, victim.pid):
            if time.monotonic() > deadline:
                say("worker A never took a run")
                return False
            time.sleep(0.05)
        time.sleep(0.4)  # mid-call
        say(f"kill -9 {victim.pid}   (worker A, while it holds runs)")
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        last = tally(runs_of(url, env))
        say(f"runs now: {last}")
        deadline = time.monotonic() + 120
        while True:
            runs = runs_of(url, env)
            now = tally(runs)
            if now != last:
                say(f"runs now: {now}")
                last = now
            if all(r["status"] == "completed" for r in runs):
                break
            if time.monotonic() > deadline:
                say("not every run completed within 120 s")
                return False
            time.sleep(0.5)
        return _check_ledger(root, victim.pid, args)
    finally:
        for name, proc in workers.items():
            if proc.poll() is None:
                say(f"stopping worker {name} (SIGTERM: it drains and releases its leases)")
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _ledger(root: Path) -> list[dict]:
    path = root / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _holds_runs(root: Path, pid: int) -> bool:
    return any(line["pid"] == pid for line in _ledger(root))


def _check_ledger(root: Path, killed: int, args: argparse.Namespace) -> bool:
    """Every call finished once per key, except calls of the killed worker whose result it had not
    journaled yet: those are made again, once, with the same key (a payment API keyed by it pays
    once).  A call the surviving worker made is never made again."""
    lines = _ledger(root)
    starts: dict[str, list[int]] = {}
    for line in lines:
        if line["at"] == "start":
            starts.setdefault(line["key"], []).append(line["pid"])
    done = {line["key"] for line in lines if line["at"] == "done"}
    calls = args.runs * args.steps
    again = {key: pids for key, pids in starts.items() if len(pids) > 1}
    wrong = [key for key, pids in again.items() if len(pids) > 2 or pids[0] != killed]
    by_killed = sum(1 for line in lines if line["pid"] == killed and line["at"] == "done")
    say(
        f"{args.runs}/{args.runs} runs completed; {len(done)} of {calls} tool calls completed; "
        f"worker A finished {by_killed} call(s) before it was killed; "
        f"{len(again)} call(s) it had in flight or not yet journaled made again, with their key; "
        f"{len(wrong)} other call(s) made again"
    )
    return len(starts) == calls and done == set(starts) and not wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=12, help="how many runs to submit (default 12)")
    parser.add_argument("--steps", type=int, default=4, help="tool calls per run (default 4)")
    parser.add_argument(
        "--keep-logs", action="store_true", help="keep the temporary directory (logs, ledger)"
    )
    args = parser.parse_args(argv)
    bindir = find_bindir()
    if bindir is None:
        print(
            "fleet-demo: no PostgreSQL server binaries: apt-get install postgresql (or set AGENTRT_PG_BIN "
            "to the directory holding initdb and pg_ctl)",
            file=sys.stderr,
        )
        return 2
    # SIGTERM (and SIGHUP) end the demo as Ctrl-C does, through the cleanup below.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(130))
    root = Path(tempfile.mkdtemp(prefix="agentrt-fleet-demo-"))
    say(f"working in {root}")
    ok = False
    try:
        with postgres(root, bindir) as url:
            ok = demo(root, url, args)
    except KeyboardInterrupt:
        say("interrupted")
    finally:
        if args.keep_logs:
            say(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
            say(f"removed {root}")
    say("OK: every run finished; only calls in flight at the kill were made again" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
