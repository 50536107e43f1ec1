"""The calls a corpus agent makes, logged to a file shared by every process of a test, and the kill.

``AGENTRT_TEST_CALLS`` names the log (one JSON line per call: ``pid`` and ``call``, a name stable
across runs such as ``model#2`` or ``tool:roll_dice({})``).  With ``AGENTRT_TEST_KILL_AT=N`` the
process that is about to make call number N of the log (counting from 0, all processes together)
logs it and SIGKILLs itself: that call is in flight when the process dies.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any


def record(call: str) -> int:
    """Log ``call``; its number in the log (-1 when there is no log)."""
    path = os.environ.get("AGENTRT_TEST_CALLS")
    if not path:
        return -1
    log = Path(path)
    before = len(log.read_text().splitlines()) if log.exists() else 0
    with log.open("a") as f:
        f.write(json.dumps({"pid": os.getpid(), "call": call}) + "\n")
    kill_at = os.environ.get("AGENTRT_TEST_KILL_AT")
    if kill_at is not None and int(kill_at) == before:
        os.kill(os.getpid(), signal.SIGKILL)
    return before


def tool_call(tool: str, /, **args: Any) -> None:
    record(f"tool:{tool}({json.dumps(args, sort_keys=True)})")


def calls(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [json.loads(line)["call"] for line in path.read_text().splitlines() if line.strip()]
