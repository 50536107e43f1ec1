"""A command line that never misleads (issue 27): its errors speak command-line words, fit one line
with a library's lines folded in, and the hint an error gives is a command that does what it says."""

from __future__ import annotations

import json
import re
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.cli.helpers import cli, cli_env, command

AGENTS = """
import attrs
from agentrt import Task, agent, ui_tools

@attrs.frozen
class In:
    q: str = "go?"

@attrs.frozen
class Out:
    text: str

async def run_asks(input: In, task: Task) -> Out:
    return Out(str(await task.ui.ask(input.q)))

asks = agent(input=In, output=Out, tools=[*ui_tools], run=run_asks)

async def run_thinks(input: In, task: Task) -> Out:
    return Out(await task.llm.generate_text(prompt=input.q))

thinks = agent(input=In, output=Out, tools=[], run=run_thinks)
"""


def error_line(stderr: str) -> str:
    """The one line a failed command printed (and nothing else)."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("agentrt: error: "), stderr
    return lines[0]


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_no_such_run_speaks_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "flows.py").write_text(AGENTS)
    store = str(tmp_path / "agentrt.db")
    assert cli("submit", "flows:asks", "--store", store, cwd=tmp_path).returncode == 0
    for args in (
        ("reply", "nosuch", '"yes"'),
        ("show", "nosuch"),
        ("cancel", "nosuch"),
        ("resume", "nosuch"),
    ):
        proc = cli(*args, "--store", store, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        line = error_line(proc.stderr)
        assert "Runtime" not in line, line
        assert f"`agentrt runs --store {store}` lists its runs" in line, line


def test_a_missing_executor_names_the_option(tmp_path: Path) -> None:
    (tmp_path / "flows.py").write_text(AGENTS)
    proc = cli("run", "flows:thinks", "--store", str(tmp_path / "agentrt.db"), cwd=tmp_path)
    assert proc.returncode == 2
    line = error_line(proc.stderr)
    assert "Runtime(" not in line and "--executors MODULE:ATTR" in line, line


def test_a_wrong_postgresql_port_is_one_line_at_once(tmp_path: Path) -> None:
    """psycopg's pool logged four multi-line warnings, then agentrt's line, after 10 s of retries."""
    key = cli("keygen", "--print", subprocess=True).stdout.strip()
    url = f"postgresql://agentrt:secret@127.0.0.1:{unused_port()}/agentrt"
    started = time.monotonic()
    proc = cli("runs", "--store", url, env=cli_env(AGENTRT_BLOB_KEY=key), cwd=tmp_path, subprocess=True)
    assert time.monotonic() - started < 8  # not the pool's 10 s timeout
    assert proc.returncode == 3
    line = error_line(proc.stderr)
    assert "Connection refused" in line and "secret" not in line, line


def test_the_key_hint_is_a_command_that_prints_the_key(tmp_path: Path) -> None:
    """The shared-store error says which command prints a key; run as written it prints one (and
    writes nothing), and with it set the store gets past the key check."""
    url = f"postgresql://agentrt:secret@127.0.0.1:{unused_port()}/agentrt"
    env = cli_env(HOME=str(tmp_path / "home"))
    for name in ("AGENTRT_BLOB_KEY", "AGENTRT_BLOB_KEY_FILE", "AGENTRT_KEY_FILE"):
        env.pop(name, None)
    proc = cli("runs", "--store", url, env=env, cwd=tmp_path, subprocess=True)
    assert proc.returncode == 3
    line = error_line(proc.stderr)
    hinted = re.search(r"run `(agentrt keygen[^`]*)` and set AGENTRT_BLOB_KEY to the printed key", line)
    assert hinted, line
    printed = cli(*shlex.split(hinted.group(1))[1:], env=env, cwd=tmp_path, subprocess=True)
    assert printed.returncode == 0, printed.stderr
    key = printed.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", key), printed.stdout
    assert not (tmp_path / "home").exists()  # printed, not written
    again = cli("runs", "--store", url, env={**env, "AGENTRT_BLOB_KEY": key}, cwd=tmp_path, subprocess=True)
    assert "blob key" not in again.stderr and "Connection refused" in error_line(again.stderr)


def test_plain_keygen_says_how_to_get_a_key_for_a_shared_store(tmp_path: Path) -> None:
    proc = cli("keygen", "--file", str(tmp_path / "blob.key"), subprocess=True)
    assert proc.returncode == 0, proc.stderr
    assert "agentrt keygen --print" in proc.stdout and "AGENTRT_BLOB_KEY" in proc.stdout


def test_serve_on_a_busy_port_fails_before_announcing_itself(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = cli(
            "serve",
            "--port",
            str(port),
            "--store",
            str(tmp_path / "agentrt.db"),
            cwd=tmp_path,
            subprocess=True,
        )
    assert proc.returncode == 2  # the README's status for usage and environment errors
    lines = [line for line in proc.stderr.splitlines() if "no --import given" not in line]
    assert len(lines) == 1 and lines[0].startswith("agentrt: error: "), proc.stderr
    assert f"--port {port}" in lines[0] and "in use" in lines[0], proc.stderr
    assert "http://" not in proc.stderr  # never announced
    assert not (tmp_path / "agentrt.db").exists()  # nor a store made for a server that never ran


def test_reply_prints_the_status_the_reply_led_to(tmp_path: Path) -> None:
    """With no worker, reply says so (the run still waits, for a worker); with one, the status the
    reply led to, not the `waiting` the run left."""
    (tmp_path / "flows.py").write_text(AGENTS)
    store = str(tmp_path / "agentrt.db")
    env = cli_env(AGENTRT_LEASE_SECONDS="2")
    for run_id in ("alone", "served"):
        assert cli("submit", "flows:asks", "--run-id", run_id, "--store", store, cwd=tmp_path).returncode == 0
    worker = subprocess.Popen(
        [*command("worker", "--store", store, "--poll-seconds", "0.2", "--log-format", "none")],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not all(
            json.loads(cli("show", r, "--store", store, "--json", cwd=tmp_path).stdout)["status"] == "waiting"
            for r in ("alone", "served")
        ):
            assert time.monotonic() < deadline, "the worker never drove the runs to their question"
            time.sleep(0.1)
        proc = cli("reply", "served", '"yes"', "--store", store, "--json", cwd=tmp_path, env=env)
        answer = json.loads(proc.stdout)
        assert answer["taken"] is True and answer["status"] in ("running", "completed"), answer
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
    started = time.monotonic()
    proc = cli("reply", "alone", '"yes"', "--store", store, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 2  # no worker is running: nothing to wait for
    assert "no worker is running for this store" in proc.stdout, proc.stdout
    assert f"(start one: agentrt worker --store {store})" in proc.stdout
    answer = json.loads(cli("show", "alone", "--store", store, "--json", cwd=tmp_path).stdout)
    assert answer["status"] == "waiting"


def test_submit_a_batch_in_one_process(tmp_path: Path) -> None:
    """--count N and --input-file (JSON Lines): every input is checked before any run is stored."""
    (tmp_path / "flows.py").write_text(AGENTS)
    store = str(tmp_path / "agentrt.db")
    (tmp_path / "bad.jsonl").write_text('{"q": "one?"}\n\n{"q": 2}\n')
    proc = cli("submit", "flows:asks", "--input-file", "bad.jsonl", "--store", store, cwd=tmp_path)
    assert proc.returncode == 2
    assert "--input-file bad.jsonl line 3: input.q" in error_line(proc.stderr)
    assert not Path(store).exists()  # the good first line was not stored either
    (tmp_path / "batch.jsonl").write_text('{"q": "one?"}\n\n{"q": "two?"}\n')
    proc = cli(
        "submit",
        "flows:asks",
        "--input-file",
        "batch.jsonl",
        "--count",
        "2",
        "--store",
        store,
        "--json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    made = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [m["status"] for m in made] == ["queued"] * 4 and len({m["run_id"] for m in made}) == 4
    proc = cli("submit", "flows:asks", "--count", "3", "--store", store, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.count(" queued\n") == 3, proc.stdout
    runs = json.loads(cli("runs", "--store", store, "--json", cwd=tmp_path).stdout)["runs"]
    shown = [
        json.loads(cli("show", r["run_id"], "--store", store, "--json", cwd=tmp_path).stdout) for r in runs
    ]
    inputs = sorted(r["input"]["q"] for r in shown)
    assert inputs == ["go?"] * 3 + ["one?"] * 2 + ["two?"] * 2
    proc = cli("submit", "flows:asks", "--count", "2", "--run-id", "x", "--store", store, cwd=tmp_path)
    assert proc.returncode == 2 and "--run-id names one run" in error_line(proc.stderr)


def test_an_empty_key_file_names_the_keygen_that_fills_it(tmp_path: Path) -> None:
    key_file = tmp_path / "fleet.key"
    key_file.touch(mode=0o600)
    url = f"postgresql://agentrt:secret@127.0.0.1:{unused_port()}/agentrt"
    env = cli_env(AGENTRT_BLOB_KEY_FILE=str(key_file))
    env.pop("AGENTRT_BLOB_KEY", None)
    line = error_line(cli("runs", "--store", url, env=env, cwd=tmp_path, subprocess=True).stderr)
    hinted = re.search(r"`(agentrt keygen --file [^`]+)`", line)
    assert hinted, line
    assert cli(*shlex.split(hinted.group(1))[1:], env=env, cwd=tmp_path, subprocess=True).returncode == 0
    again = error_line(cli("runs", "--store", url, env=env, cwd=tmp_path, subprocess=True).stderr)
    assert "key" not in again and "Connection refused" in again, again
