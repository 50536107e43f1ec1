"""Mode (c) worker: restore checkpoints in a fresh interpreter and finish them.

    python -m tests.corpus.restore_worker DIR [MANIFEST]

``DIR/MANIFEST`` (default ``manifest.json``) holds ``{"blobs": [{"case": name, "k": k,
"blob": filename}, ...]}``.  The worker imports the corpus modules (and nothing the
blobs name), restores every blob with ``Machine.set``, records ``pending``, drives the
run to its end with ``protocol.respond``, and appends one pickled record
``(key, result)`` per blob to ``DIR/results.pickle``, with key ``"<case>@<k>"`` and
result ``{"pending": payload, "outcome": Outcome}`` or ``{"error": text}``.

Records are flushed one by one and ``DIR/current`` names the blob in hand, so if the
interpreter dies (a crash in the engine) or hangs, the parent knows which blob did it,
keeps the records already written and can start a new worker for the rest.
A ``"__engine__"`` record means ``agentrt.lowlevel`` does not import here.

Another suite reuses the worker by naming itself in the manifest: ``"suite": PACKAGE`` is
imported instead of ``tests.corpus`` (it registers its agents, as a host imports its code
before restoring) and ``"responder": "MODULE:NAME"`` answers the restored run's suspensions
instead of ``protocol.respond`` (tests/realcode answers with SDK response objects).
"""

from __future__ import annotations

import importlib
import json
import pickle
import sys
import traceback
from pathlib import Path

RESULTS = "results.pickle"
CURRENT = "current"


def main(argv: list[str]) -> int:
    directory = Path(argv[1])
    manifest = json.loads((directory / (argv[2] if len(argv) > 2 else "manifest.json")).read_text())

    importlib.import_module(manifest.get("suite", "tests.corpus"))  # registers and imports every agent module
    from tests.corpus import protocol
    from tests.corpus.harness import finish_restored, show

    responder = protocol.respond
    if "responder" in manifest:
        module_name, _, attr = manifest["responder"].partition(":")
        responder = getattr(importlib.import_module(module_name), attr)

    with open(directory / RESULTS, "ab") as out:

        def record(key: str, result: dict) -> None:
            try:
                data = pickle.dumps((key, result))
            except Exception as exc:
                data = pickle.dumps((key, {"error": f"result not picklable ({exc!r}): {show(result)}"}))
            out.write(data)
            out.flush()

        if protocol.ENGINE_IMPORT_ERROR is not None:
            record("__engine__", {"error": protocol.ENGINE_IMPORT_ERROR})
            return 0
        for entry in manifest["blobs"]:
            key = f"{entry['case']}@{entry['k']}"
            (directory / CURRENT).write_text(key)
            try:
                blob = (directory / entry["blob"]).read_bytes()
                machine = protocol.Machine.set(blob)
            except Exception:
                record(key, {"error": "Machine.set raised:\n" + traceback.format_exc()})
                continue
            try:
                pending = machine.pending
                outcome = finish_restored(machine, responder)
            except Exception:  # harness errors (protocol, looping)
                record(key, {"error": "driving the restored run failed:\n" + traceback.format_exc()})
                continue
            record(key, {"pending": pending, "outcome": outcome})
    (directory / CURRENT).write_text("")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
