"""Regenerate this interpreter's golden blobs and dump outputs.

    cd /work/main && PYTHONPATH=. python -m tests.inspect.make_golden   # once per Python 3.11 / 3.12 / 3.13

Writes ``tests/inspect/golden/3.X/{nested,held,value}.blob`` and, for each, the
normalised outputs of ``agentrt dump BLOB`` (``.txt``) and ``agentrt dump BLOB
--json`` (``.json``).  Review the diff before committing: the outputs are what
users read.
"""

from __future__ import annotations

import os

from agentrt import _codec
from agentrt.lowlevel import Machine
from tests.inspect import agents
from tests.inspect.golden_tools import BLOBS, REPO, blob_path, dump_args, golden_dir, normalize, run_cli


def make_blobs() -> dict[str, bytes]:
    m = Machine(agents.nested, ["a", "b", "c"])
    m.step()
    m.step("A")
    nested = m.get()
    m.discard()
    m = Machine(agents.held, 3)
    m.step()
    m.step(1)
    held = m.get()
    m.discard()
    value = _codec.dumps({"answers": [1, 2, 3], "when": ("today", None)})
    return {"nested": nested, "held": held, "value": value}


def main() -> None:
    os.environ.pop("AGENTRT_BLOB_KEY", None)
    os.chdir(REPO)
    out = golden_dir()
    out.mkdir(parents=True, exist_ok=True)
    blobs = make_blobs()
    assert set(blobs) == set(BLOBS)
    for name, blob in blobs.items():
        blob_path(name).write_bytes(blob)
        for suffix, extra in ((".txt", ()), (".json", ("--json",))):
            code, stdout, stderr = run_cli(*dump_args(name, *extra))
            if code != 0:
                raise SystemExit(f"agentrt dump {name} failed ({code}): {stderr}")
            (out / f"{name}{suffix}").write_text(normalize(stdout))
    print(f"wrote golden blobs and dumps to {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
