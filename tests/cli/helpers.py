"""Run the ``agentrt`` command as a user would: in this process by default (see
:mod:`tests.cli.inprocess`), in a subprocess where the process itself is what a test is about."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from subprocess import CompletedProcess, run
from typing import Any

from tests.cli.inprocess import run_in_process

REPO = Path(__file__).resolve().parents[2]


def cli_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("AGENTRT_STORE", None)
    env.update(extra)
    return env


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentrt", *args]


def cli(
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    cwd: Path = REPO,
    subprocess: bool = False,
) -> CompletedProcess[str]:
    """``agentrt ARGS`` with ``env`` in ``cwd``: its exit status, stdout and stderr.

    In this process unless ``subprocess``; ``timeout`` applies to a subprocess only (a call in
    this process that hangs is reported by pytest's faulthandler timeout)."""
    if subprocess:
        env = env or cli_env()
        return run(command(*args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return run_in_process(args, env or cli_env(), cwd)


def cli_json(*args: str, **kw: Any) -> tuple[int, dict[str, Any], str]:
    proc = cli(*args, "--json", **kw)
    obj = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, obj, proc.stderr


def popen(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command(*args),
        cwd=REPO,
        env=env or cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_side_effects(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out
