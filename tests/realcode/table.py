"""Print the corpus table of the ported agents on this interpreter (for a closing note):

    PYTHONPATH=$PWD python -m tests.realcode.table

One row per port: the example it ports, its suspensions, and "as written" -- ``exact`` when every
checkpoint at every suspension (restored in this process and in a fresh one) finishes as the
uninterrupted run did, ``refused ARxxx`` when ``Machine.get()`` refuses with that code.
"""

from __future__ import annotations

import platform
import sys
import tempfile
from pathlib import Path

from tests.realcode import PORTS
from tests.realcode._run import every_suspension, fresh_process, fresh_verdict, reference


def verdict(in_process: str, fresh: str) -> str:
    def short(text: str) -> str:
        first = text.splitlines()[0] if text else text
        return first if len(first) <= 160 else first[:157] + "..."

    if in_process == fresh:
        return short(in_process)
    return f"in process: {short(in_process)}; fresh process: {short(fresh)}"


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="realcode-") as directory:
        fresh = fresh_process(Path(directory))
    print(f"CPython {platform.python_version()}: {len(PORTS)} ported agents\n")
    print("| agent | ports | suspensions | as written |")
    print("|---|---|---|---|")
    rows = [(port, verdict(every_suspension(port), fresh_verdict(port, fresh))) for port in PORTS]
    for port, row in rows:
        print(f"| `{port.name}` | {port.example} | {len(reference(port).payloads)} | {row} |")
    exact = sum(row == "exact" for _, row in rows)
    refused = sum(row.startswith("refused") for _, row in rows)
    print(f"\n{exact} of {len(rows)} exact, {refused} refused, {len(rows) - exact - refused} otherwise")
    return 0


if __name__ == "__main__":
    sys.exit(main())
