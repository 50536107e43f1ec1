"""The embedding snippets of docs/embedding.md, run as written under a real uvicorn: the help-desk
trial (HTTP start, SSE, reply, SIGKILL mid-call, restart, finish without a tool call made again),
once with the app served alone and once mounted under a host's own Starlette app.

Each snippet is taken from the page by its ``<!-- snippet: FILE -->`` comment and written, byte for
byte, beside a copy of examples/helpdesk.py; uvicorn imports it as a user would (``uvicorn
service:app``).  Nothing in the snippet is told about the test: recovery after the kill has to come
from the app as documented.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.serve.conftest import CHROMIUM, CHROMIUM_ARGS, free_port, sse_events

pytestmark = pytest.mark.system

REPO = Path(__file__).resolve().parents[2]
SNIPPET = re.compile(r"<!-- snippet: (\S+) .*?-->\n```python\n(.*?)\n```", re.DOTALL)


def snippets() -> dict[str, str]:
    """The runnable snippets of docs/embedding.md by file name."""
    return dict(SNIPPET.findall((REPO / "docs" / "embedding.md").read_text()))


class Uvicorn:
    """``python -m uvicorn MODULE:app`` in ``cwd``, on one port across restarts."""

    def __init__(self, cwd: Path, module: str, env: dict[str, str]) -> None:
        self.cwd = cwd
        self.module = module
        self.env = env
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = cwd / "uvicorn.log"

    def start(self, ready_path: str) -> None:
        cmd = [sys.executable, "-m", "uvicorn", f"{self.module}:app", "--port", str(self.port)]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                cmd, cwd=self.cwd, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"uvicorn exited with {self.proc.returncode}:\n{self.log.read_text()}")
            try:
                if httpx.get(self.url + ready_path, timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"uvicorn did not answer within 60 s:\n{self.log.read_text()}")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(REPO / "examples" / "helpdesk.py", tmp_path / "helpdesk.py")
    return tmp_path


def ledger(project: Path) -> list[dict]:
    path = project / "helpdesk-ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@contextlib.contextmanager
def served(project: Path, file: str) -> Iterator[Uvicorn]:
    """uvicorn serving the snippet ``file`` of the docs, written as printed into ``project``."""
    (project / file).write_text(snippets()[file] + "\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["HELPDESK_REFUND_SECONDS"] = "1.5"  # a slow payment provider: the kill lands mid-call
    for name in ("AGENTRT_STORE", "AGENTRT_TOKEN", "HELPDESK_LEDGER"):
        env.pop(name, None)
    server = Uvicorn(project, file.removesuffix(".py"), env)
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("file", "base", "ready"), [("service.py", "", "/runs"), ("host.py", "/agentrt", "/health")]
)
def test_the_documented_app_recovers_a_killed_run(project: Path, file: str, base: str, ready: str) -> None:
    with served(project, file) as server:
        server.start(ready)
        client = httpx.Client(base_url=server.url + base, timeout=30)
        with client:
            made = client.post(
                "/runs",
                json={"agent": "helpdesk", "input": {"order_id": "A-1001", "complaint": "arrived broken"}},
            )
            assert made.status_code == 201, made.text
            run_id = made.json()["run_id"]
            with client.stream("GET", f"/runs/{run_id}/events") as stream:
                for _id, kind, data in sse_events(stream):
                    if kind == "waiting":
                        assert "Refund 249.0 EUR" in data["data"]["prompt"]["question"]
                        break
            replied = client.post(f"/runs/{run_id}/reply", json={"value": {"approve": True, "note": "sorry"}})
            assert replied.status_code == 202, replied.text
            deadline = time.monotonic() + 30
            while not any(line["call"] == "issue_refund" for line in ledger(project)):
                assert time.monotonic() < deadline, "the refund was never called"
                time.sleep(0.05)
            server.kill()  # mid-call: the refund is in flight
        server.start(ready)
        with httpx.Client(base_url=server.url + base, timeout=30) as client:
            deadline = time.monotonic() + 60
            while (body := client.get(f"/runs/{run_id}").json())["status"] != "completed":
                assert body["status"] in ("running", "waiting"), body
                assert time.monotonic() < deadline, f"not recovered: {body}"
                time.sleep(0.1)
            assert body["output"] == {"order_id": "A-1001", "refunded_eur": 249.0, "note": "sorry"}
            view_in_browser(server.url + base + f"/#{run_id}", project)  # the page, served by the same app
    lines = ledger(project)
    assert [line["call"] for line in lines if line["call"] == "lookup_order"] == ["lookup_order"]
    refunds = [line for line in lines if "refund" in line]
    assert len(refunds) == 1, lines  # the call in flight was made again with its key; it paid once
    keys = {line["key"] for line in lines if line["call"] == "issue_refund"}
    assert len(keys) == 1, lines


def view_in_browser(url: str, project: Path) -> None:
    """The run, opened by its deep link in a real Chromium: completed, its events ending in `end`."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI") == "true":
            pytest.fail(f"no Chromium at {CHROMIUM}; CI runs the browser tests")
        return  # the HTTP half of the trial still ran
    import playwright.sync_api as playwright_api

    with playwright_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            user_data_dir=str(project / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.goto(url)
            expect = playwright_api.expect
            expect(page.locator("#run-status")).to_have_text("completed", timeout=30_000)
            expect(page.locator("#run-summary")).to_contain_text("sorry")
            expect(page.locator('#events li[data-kind="end"]')).to_have_count(1, timeout=30_000)
            expect(page.locator('#events li[data-kind="replied"]')).to_have_count(1)
        finally:
            context.close()


def test_a_mounted_app_whose_runtime_nobody_entered_refuses_clearly(project: Path) -> None:
    """Without the host's ``async with runtime:`` line, the mounted app answers 503 naming the line,
    instead of accepting runs nothing would drive."""
    code = snippets()["host.py"].replace("    async with runtime:", "    if True:")
    assert code != snippets()["host.py"]
    (project / "nolifespan.py").write_text(code + "\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    server = Uvicorn(project, "nolifespan", env)
    try:
        server.start("/health")
        answer = httpx.post(
            server.url + "/agentrt/runs",
            json={"agent": "helpdesk", "input": {"order_id": "A-1", "complaint": "x"}},
        )
        assert answer.status_code == 503
        error = answer.json()["error"]
        assert error["code"] == "runtime_not_started"
        assert "async with runtime:" in error["message"] and "Mount" in error["message"]
        assert httpx.get(server.url + "/agentrt/runs").status_code == 503
    finally:
        server.stop()
    assert "runtime_not_started" not in server.log.read_text()  # logged once, as a sentence
    assert server.log.read_text().count("was never started") == 1


TIMER_AGENT = """
import attrs
from agentrt import Task, agent

@attrs.frozen
class Later:
    seconds: float = 1.0

@attrs.frozen
class Done:
    slept: float

async def run_later(input: Later, task: Task) -> Done:
    await task.sleep(input.seconds)
    return Done(input.seconds)

helpdesk = agent(input=Later, output=Done, tools=[], run=run_later, name="later")
"""


def test_the_documented_app_fires_a_timer_that_fell_due_while_it_was_down(project: Path) -> None:
    """service.py as written, serving (under the name it imports) an agent that sleeps: killed while
    the run waits on its timer, started again after the timer is due, it finishes the run."""
    (project / "helpdesk.py").write_text(TIMER_AGENT)
    with served(project, "service.py") as server:
        server.start("/runs")
        with httpx.Client(base_url=server.url, timeout=30) as client:
            run_id = client.post("/runs", json={"agent": "later", "input": {"seconds": 1.0}}).json()["run_id"]
            deadline = time.monotonic() + 30
            while (body := client.get(f"/runs/{run_id}").json()).get("waiting_on") != "timer":
                assert time.monotonic() < deadline, body
                time.sleep(0.05)
            server.kill()
        time.sleep(1.2)  # the timer falls due while nothing serves the store
        server.start("/runs")
        with httpx.Client(base_url=server.url, timeout=30) as client:
            deadline = time.monotonic() + 30
            while (body := client.get(f"/runs/{run_id}").json())["status"] != "completed":
                assert time.monotonic() < deadline, f"the timer never fired: {body}"
                time.sleep(0.05)
            assert body["output"] == {"slept": 1.0}
