"""Finish construct examples from their first checkpoint, in a process that never ran them.

Reads one JSON object per line on stdin -- ``{"key": KEY, "name": EXAMPLE, "blob": BASE64,
"imports": [MODULE, ...]}`` -- imports ``imports`` (what a host would import before restoring),
then runs the example's ``main()`` with the blob restored (``Machine.set``) in place of a fresh start; the
requests are answered the way ``_drive`` does (checkpointing and restoring at every later
suspension too).  Writes one JSON line per job: ``{"key": ..., "result": repr(value)}`` or
``{"key": ..., "error": "Type: message"}``.
Used by ``tests/validate/test_constructs.py``; run from the repository root.
"""

from __future__ import annotations

import base64
import importlib
import json
import sys
from typing import Any

from tests.validate.constructs._drive import driving


def resume(name: str, blob: bytes, imports: list[str]) -> Any:
    for extra in imports:
        importlib.import_module(extra)
    module = importlib.import_module(f"tests.validate.constructs.{name}")
    with driving("resume", blob):
        return module.main()


def main() -> None:
    for line in sys.stdin:
        job = json.loads(line)
        try:
            value = resume(job["name"], base64.b64decode(job["blob"]), job["imports"])
            answer = {"key": job["key"], "result": repr(value)}
        except Exception as exc:
            answer = {"key": job["key"], "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
