"""Write this interpreter's golden blobs: ``python -m tests.golden.make_golden``."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

from agentrt import Machine
from tests.golden import agents

HERE = Path(__file__).parent
OLD_CHANGED = """
from agentrt.lowlevel import suspend
async def changed_since_checkpoint(x):
    y = await suspend(("changed", x, "old version"))
    return y - 1
"""


def main() -> None:
    out = HERE / f"{sys.version_info[0]}.{sys.version_info[1]}"
    out.mkdir(exist_ok=True)
    expected = {}
    m = Machine(agents.mixed_state, [1, 2, 3])
    m.step()
    m.step(10)
    (out / "mixed_state.blob").write_bytes(m.get())
    expected["mixed_state"] = {"pending": ["helper", 2], "answers": [20, 30]}

    # The incompatible one: the same module name and qualname, older code.
    real = sys.modules[agents.__name__]
    old = types.ModuleType(agents.__name__)
    exec(compile(OLD_CHANGED, real.__file__, "exec"), old.__dict__)
    sys.modules[agents.__name__] = old
    try:
        m = Machine(old.changed_since_checkpoint, 1)
        m.step()
        (out / "incompatible_changed_code.blob").write_bytes(m.get())
    finally:
        sys.modules[agents.__name__] = real
    (out / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    print(f"wrote golden blobs to {out}")


if __name__ == "__main__":
    main()
