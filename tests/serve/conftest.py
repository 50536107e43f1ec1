"""A real server for the HTTP API tests: ``agentrt serve`` (or a small host app) in a child process,
uvicorn on a free loopback port, talked to with httpx."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

# The server's packages (the serve extra) are part of the test extra: a missing one fails here, it
# does not skip the HTTP tests.
import sse_starlette  # noqa: F401
import starlette  # noqa: F401
import uvicorn  # noqa: F401

HERE = Path(__file__).parent
TOKEN = "s3cret-token"


#: Debian's Chromium, driven by Playwright (no browser download), and the flags it needs here: as
#: root it needs --no-sandbox, and this machine's closed network refuses its background connections.
CHROMIUM = os.environ.get("AGENTRT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One server process; ``restart()`` starts it again on the same port and store."""

    def __init__(
        self, store: Path, tmp: Path, *, token: str | None = TOKEN, host_app: bool = False, agents: str = ""
    ) -> None:
        self.agents = agents
        self.store = store
        self.tmp = tmp
        self.token = token
        self.host_app = host_app
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = tmp / f"server-{self.port}.log"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def client(self, **kwargs: object) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=30, **kwargs)  # type: ignore[arg-type]

    def start(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
        env["AGENTRT_LEASE_SECONDS"] = "2"
        env.pop("AGENTRT_TOKEN", None)
        if self.host_app:
            cmd = [sys.executable, str(HERE / "host_app.py"), str(self.store), str(self.port)]
            cmd += [self.agents] if self.agents else []
        else:
            cmd = [
                sys.executable,
                "-m",
                "agentrt",
                "serve",
                "--import",
                "serve_agents",
                "--store",
                str(self.store),
            ]
            cmd += ["--port", str(self.port)] + (["--token", self.token] if self.token else [])
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, cwd=self.tmp, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log.read_text()}")
            try:
                if httpx.get(self.url + "/", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server did not answer within 60 s:\n{self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs (the crash the fault tests are about)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("serve")
    srv = Server(tmp / "agentrt.db", tmp)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "agentrt.db", tmp_path)
    srv.start()
    yield srv
    srv.stop()


def sse_events(response: httpx.Response) -> Iterator[tuple[str | None, str, dict]]:
    """``(id, event, data)`` of each server-sent event (httpx-sse parses the wire format)."""
    from httpx_sse import EventSource

    for sse in EventSource(response).iter_sse():
        if not sse.data:
            # httpx-sse dispatches a data-less "message" after a keep-alive comment once an id was seen;
            # the SSE spec (and browsers) drop an event without data.
            continue
        yield (sse.id or None, sse.event, json.loads(sse.data))


def wait_status(client: httpx.Client, run_id: str, statuses: tuple[str, ...], timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(f"/runs/{run_id}").json()
        if body["status"] in statuses:
            return body
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} still {body['status']} after {timeout} s: {body}")
        time.sleep(0.05)
