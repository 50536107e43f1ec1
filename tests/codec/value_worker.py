"""A fresh interpreter that restores blobs of ``tests.codec.value_table`` agents (issue 24).

    python -m tests.codec.value_worker

Reads one request per line on stdin, answers one JSON line on stdout:

- ``{"hold": PATH}``: ``Machine.set`` the blob at PATH (a ``value_table.hold`` agent), step it
  to its end, answer ``{"result": bool}`` (the value came back equal and shared) or ``{"error": text}``;
- ``{"values": PATH}``: restore a ``value_table.hold_values`` blob, step it to its end, start a new
  ``hold_values`` agent with what came back, checkpoint it, write that blob to ``PATH + ".back"``
  and answer ``{"back": PATH + ".back"}``: the property test restores it in the parent again.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

from agentrt.lowlevel import Done, Machine
from tests.codec import value_table


def _finish(blob: bytes) -> object:
    machine = Machine.set(blob)
    done = machine.step(None)
    if not isinstance(done, Done):
        raise AssertionError(f"the restored agent suspended again: {done!r}")
    return done.value


def answer(request: dict[str, str]) -> dict[str, object]:
    try:
        if "hold" in request:
            return {"result": bool(_finish(Path(request["hold"]).read_bytes()))}
        values = _finish(Path(request["values"]).read_bytes())
        again = Machine(value_table.hold_values, values)
        again.step()
        back = request["values"] + ".back"
        Path(back).write_bytes(again.get())
        again.discard()
        return {"back": back}
    except Exception:
        return {"error": traceback.format_exc()}


def main() -> int:
    for line in sys.stdin:
        print(json.dumps(answer(json.loads(line))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
