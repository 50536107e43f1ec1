"""Print the value table's summary on this interpreter (for a closing note), measured, not recalled:

    PYTHONPATH=$PWD python -m tests.codec.value_summary

Each case of ``value_table`` is held across an await and checkpointed signed and unsigned; a blob
that is written is restored here and the agent finishes comparing the value with a new one.  The
verdict per mode is ``exact`` or the code ``Machine.get()`` refused with (anything else is printed
as a failure).  ``test_value_table`` asserts the same table, with each signed blob restored in a
fresh interpreter.
"""

from __future__ import annotations

import collections
import os
import platform
import sys

from agentrt.exceptions import CannotCrossAwait
from agentrt.lowlevel import Done, Machine
from tests.codec import value_table
from tests.codec.value_table import CASES, EXACT

_UNBOUND = ("checkpoint", None, None)


def verdict(name: str, signed: bool) -> str:
    machine = Machine(value_table.hold, name)
    machine.step()
    try:
        blob = machine.get() if signed else machine.get_bound(b"", _UNBOUND)
    except CannotCrossAwait as refused:
        machine.discard()
        return refused.code
    machine.discard()
    restored = Machine.set(blob, allow_unsigned=not signed)
    done = restored.step(None)
    return EXACT if isinstance(done, Done) and done.value is True else "DIFFERS"


def main() -> int:
    os.environ.setdefault("OPENAI_API_KEY", "sk-from-env")
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-env")
    rows = [(case, verdict(case.name, True), verdict(case.name, False)) for case in CASES]
    print(f"CPython {platform.python_version()}: {len(rows)} values held across an await\n")
    for label, column in (("signed (default)", 1), ("unsigned", 2)):
        counts = collections.Counter(row[column] for row in rows)
        parts = [f"{counts.pop(EXACT, 0)} exact"] + [
            f"{n} refused {code}" for code, n in sorted(counts.items())
        ]
        print(f"- {label}: " + ", ".join(parts))
    wrong = [
        f"{case.name}: signed {s} (table: {case.signed}), unsigned {u} (table: {case.unsigned})"
        for case, s, u in rows
        if (s, u) != (case.signed, case.unsigned)
    ]
    print("\nrefused when signed: " + ", ".join(f"{c.name} ({s})" for c, s, _ in rows if s != EXACT))
    print(
        "\n"
        + ("every verdict matches the table" if not wrong else "DIFFERS FROM THE TABLE:\n" + "\n".join(wrong))
    )
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
