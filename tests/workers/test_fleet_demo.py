"""``make fleet-demo`` (examples/fleet_demo.py) runs as a newcomer would run it: a throwaway
PostgreSQL, two workers, one SIGKILLed while it holds runs, every run finishes with no journaled tool
call made again, and nothing is left behind (no server, no directory)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pgcluster import find_bindir

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.system, pytest.mark.postgres, pytest.mark.fleet]


def test_make_fleet_demo_runs_the_demo() -> None:
    recipe = (REPO / "Makefile").read_text().split("\nfleet-demo:\n", 1)[1].split("\n\n", 1)[0]
    assert "examples/fleet_demo.py" in recipe


def test_the_fleet_demo_kills_a_worker_and_every_run_finishes() -> None:
    if find_bindir() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run the fleet demo: apt-get install postgresql")
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["FLEET_DEMO_STEP_SECONDS"] = "0.2"
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "fleet_demo.py"), "--runs", "6", "--steps", "3"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert re.search(r"kill -9 \d+ +\(worker A, while it holds runs\)", out), out
    summary = re.search(
        r"6/6 runs completed; 18 of 18 tool calls completed; .* 0 other call\(s\) made again", out
    )
    assert summary, out
    assert out.rstrip().endswith(
        "OK: every run finished; only calls in flight at the kill were made again"
    ), out
    root = Path(re.search(r"working in (\S+)", out).group(1))  # type: ignore[union-attr]
    assert not root.exists()
    port = int(re.search(r"\(port (\d+), loopback only\)", out).group(1))  # type: ignore[union-attr]
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0  # the server is gone
