"""A rolling deploy: a worker running the old code and one running the new code share one store.

Runs suspended under each version are answered while both workers run: each must be finished
by a worker that carries the code it is suspended in (its output names the version that started
it and the version that finished it), none may fail, and a worker gives a run it cannot resume
back at once, at most once (its claims pass over that code from then on).  Then the old worker
stops: runs still suspended in the old code wait (they are not failed) until ``agentrt upgrade``
moves them, and the new worker finishes them.  Every worker is a real ``agentrt worker``
subprocess; the commands a user types meanwhile (run, reply, upgrade) run in the test process
(``tests/cli/inprocess.py``); on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import signal
import subprocess
import textwrap
import threading
import time
from collections.abc import Collection
from pathlib import Path

import pytest

from agentrt.stores import open_store
from tests.cli.helpers import cli, cli_env, command

pytestmark = pytest.mark.system

AGENT = """
import attrs
from agentrt import Task, agent, ui_tools


@attrs.frozen
class In:
    name: str


@attrs.frozen
class Out:
    text: str


async def run(input: In, task: Task) -> Out:
    started = {version!r}
    answer = await task.ui.ask({{"q": "color for " + input.name}})
    {after}
    return Out(f"{{started}}>{{answer}}>{version}")


bot = agent(input=In, output=Out, tools=[*ui_tools], run=run, name="bot")
"""
# v2 adds a statement after the await: the frame moves to it automatically (agentrt upgrade).
VERSIONS = {"v1": "answer = answer.strip()", "v2": "answer = answer.strip().upper()"}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def location(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "fleet.db")
    return request.getfixturevalue("pg_url")


def _checkout(tmp_path: Path, version: str) -> Path:
    directory = tmp_path / version
    directory.mkdir()
    (directory / "fleet_agent.py").write_text(
        textwrap.dedent(AGENT.format(version=version, after=VERSIONS[version]))
    )
    return directory


def _start_run(checkout: Path, store: str, run_id: str) -> None:
    proc = cli("run", "fleet_agent:bot", "--input", json.dumps({"name": run_id}), "--store", store,
               "--run-id", run_id, "--json", cwd=checkout, env=_env())  # fmt: skip
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "waiting", proc.stderr


def _env() -> dict[str, str]:
    return cli_env(PYTHONDONTWRITEBYTECODE="1")


class Worker:
    """An ``agentrt worker`` process, and its log (one JSON object per event) read as it is written."""

    def __init__(self, checkout: Path, store: str, **env: str) -> None:
        self.process = subprocess.Popen(
            command("worker", "--store", store, "--poll-seconds", "0.2", "--log-format", "json"),
            cwd=checkout,
            env={**_env(), **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.events: list[dict] = []
        self.text: list[str] = []
        self._written = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.pid = self.process.pid

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._written:
                self.text.append(line)
                if line.startswith("{"):
                    self.events.append(json.loads(line))
                self._written.notify_all()

    def wait_for(self, event: str, run_ids: Collection[str], timeout: float = 60.0) -> None:
        """Until the log has ``event`` for one of ``run_ids``."""
        with self._written:
            seen = self._written.wait_for(
                lambda: any(e["event"] == event and e["run_id"] in run_ids for e in self.events), timeout
            )
            assert seen, self.events

    def stop(self) -> list[dict]:
        """SIGTERM (drain), and the worker's log."""
        self._end(signal.SIGTERM)
        assert self.process.returncode == 0, "".join(self.text)
        return self.events

    def kill(self) -> None:
        """SIGKILL, unless it has ended already."""
        if self.process.returncode is None:
            self._end(signal.SIGKILL)

    def _end(self, sig: int) -> None:
        self.process.send_signal(sig)
        self.process.wait(timeout=60)
        self._reader.join(timeout=60)
        assert self.process.stderr is not None
        self.process.stderr.close()


def _reply(store: str, run_id: str, answer: str) -> None:
    proc = cli("reply", run_id, json.dumps(answer), "--store", store, "--json", env=_env())
    assert proc.returncode == 0, proc.stderr


def _wait_finished(store, run_ids: list[str], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(store.get_run(r).finished for r in run_ids):
        assert time.monotonic() < deadline, {r: store.get_run(r).status for r in run_ids}
        time.sleep(0.1)


def test_old_and_new_workers_each_finish_the_runs_suspended_in_their_code(tmp_path, location):
    old, new = _checkout(tmp_path, "v1"), _checkout(tmp_path, "v2")
    for i in range(3):
        _start_run(old, location, f"old-{i}")
        _start_run(new, location, f"new-{i}")
    store = open_store(location, create=False)
    try:
        wants = {r.run_id: r.code_required for r in store.list_runs()}
        assert all(wants.values()) and len(set(wants.values())) == 2  # one text per version
        assert wants["old-0"] == wants["old-2"] != wants["new-0"] == wants["new-2"]

        old_worker, new_worker = Worker(old, location), Worker(new, location)
        try:
            for i in range(3):
                for kind in ("old", "new"):
                    _reply(location, f"{kind}-{i}", " blue ")
            _wait_finished(store, list(wants))
        finally:
            logs = {"v1": old_worker.stop(), "v2": new_worker.stop()}
        outputs = {r.run_id: (r.status, r.output) for r in store.list_runs()}
        for i in range(3):
            assert outputs[f"old-{i}"] == ("completed", {"text": "v1>blue>v1"}), outputs
            assert outputs[f"new-{i}"] == ("completed", {"text": "v2>BLUE>v2"}), outputs
        for version, log in logs.items():
            assert not [e for e in log if e["event"] in ("driver_error", "failed", "lease_lost")], log
            released = [e["run_id"] for e in log if e["event"] == "released"]
            assert len(released) == len(set(released)), released  # never claimed the same run twice
            other = "new" if version == "v1" else "old"
            assert all(r.startswith(other) for r in released), released
            finished = {e["run_id"] for e in log if e["event"] == "completed"}
            mine = "old" if version == "v1" else "new"
            assert finished == {f"{mine}-{i}" for i in range(3)}, (version, finished)

        # The old workers are gone: runs still suspended in the old code wait until they are moved.
        for i in range(2):
            _start_run(old, location, f"late-{i}")
        new_worker = Worker(new, location)
        late = [f"late-{i}" for i in range(2)]
        try:
            for run_id in late:
                _reply(location, run_id, " green ")
            # it claimed one, could not resume it and gave it back: its claims pass over v1 from now on
            new_worker.wait_for("released", late)
            assert {store.get_run(f"late-{i}").status for i in range(2)} == {"waiting"}
            proc = cli("upgrade", "--store", location, "--json", cwd=new, env=_env())
            report = json.loads(proc.stdout)
            assert proc.returncode == 0, proc.stderr
            assert {r["run_id"]: (r["verdict"], r["applied"]) for r in report["runs"]} == {
                f"late-{i}": ("migrates", True) for i in range(2)
            }
            _wait_finished(store, [f"late-{i}" for i in range(2)])
        finally:
            log = new_worker.stop()
        for i in range(2):
            rec = store.get_run(f"late-{i}")
            assert (rec.status, rec.output) == ("completed", {"text": "v1>GREEN>v2"})  # started v1, ended v2
        assert not [e for e in log if e["event"] in ("driver_error", "failed")], log
    finally:
        store.close()
