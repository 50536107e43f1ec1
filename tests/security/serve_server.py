"""A real HTTP server for the attack tests: ``agentrt serve`` (or ``serve_host.py``, an embedding with
a tenant hook) in a child process on a free loopback port, importing this worktree's agentrt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.serve.conftest import free_port

HERE = Path(__file__).parent
REPO = HERE.parents[1]


class AttackServer:
    """One server process: ``serve(*args)`` for ``agentrt serve ARGS``, ``host()`` for serve_host.py."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.store = tmp / "attack.db"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp / f"server-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(REPO), env.get("PYTHONPATH", "")])
        env["AGENTRT_LEASE_SECONDS"] = "2"
        env.pop("AGENTRT_TOKEN", None)
        return env

    def serve(self, *args: str) -> AttackServer:
        cmd = [
            sys.executable,
            "-m",
            "agentrt",
            "serve",
            "--import",
            "serve_targets",
            "--store",
            str(self.store),
        ]
        return self._start([*cmd, "--port", str(self.port), *args])

    def host(self) -> AttackServer:
        return self._start([sys.executable, str(HERE / "serve_host.py"), str(self.store), str(self.port)])

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``agentrt ARGS`` against the same store, as an operator would run it."""
        cmd = [sys.executable, "-m", "agentrt", *args, "--store", str(self.store)]
        return subprocess.run(cmd, cwd=self.tmp, env=self.env(), capture_output=True, text=True, timeout=60)

    def _start(self, cmd: list[str]) -> AttackServer:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                cmd, cwd=self.tmp, env=self.env(), stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log.read_text()}")
            try:
                if httpx.get(self.url + "/", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server did not answer within 60 s:\n{self.log.read_text()}")

    def rss_bytes(self) -> int:
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
