"""Reading the `# expect: ...` / `# negative: ...` marks of the hazard corpus.

    m = re.match("a", s)  # expect: AR103          reported here (error severity)
    c = helper(2)         # expect: AR101p         reported here, portability severity
    t = create_task(c())  # expect: AR102  negative: AR101   one reported, one must not be

A line's `expect` codes must be exactly the findings on that line (a multiset: a line
with two reported parameters says `AR106p AR106p`); `negative` codes must not be
reported on that line.  Lines without marks must have no finding.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter
from pathlib import Path

from agentrt.validate import Finding

_MARK = re.compile(r"\b(expect|negative):\s*((?:AR\d{3}p?[\s,]*)+)")

Expected = Counter[tuple[int, str, str]]


def marks(path: Path) -> tuple[Expected, set[tuple[int, str]]]:
    """``(expected (line, code, severity) multiset, negative (line, code) set)``."""
    expected: Expected = Counter()
    negative: set[tuple[int, str]] = set()
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        for kind, codes in _MARK.findall(token.string):
            for code in re.findall(r"AR\d{3}p?", codes):
                if kind == "expect":
                    severity = "portability" if code.endswith("p") else "error"
                    expected[(line, code.rstrip("p"), severity)] += 1
                else:
                    negative.add((line, code))
    return expected, negative


def observed(findings: list[Finding]) -> Expected:
    return Counter((f.line, f.code, f.severity) for f in findings)


def describe(findings: list[Finding], keys: Expected) -> str:
    lines = []
    for line, code, severity in sorted(keys.elements()):
        match = [f for f in findings if (f.line, f.code, f.severity) == (line, code, severity)]
        detail = match[0].message if match else "(not reported)"
        lines.append(f"  line {line}: {code} {severity}: {detail}")
    return "\n".join(lines)
