"""The hazard corpus (tests/validate/hazards/): every static code reported when the value
is live at an await, and not reported when the same value is dead at every await.

Each corpus file marks its expectations inline (see ``_annotations``); the
validator's findings must match the marks exactly, line by line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrt.validate import check_file, check_source
from tests.validate._annotations import describe, marks, observed

HAZARDS = Path(__file__).parent / "hazards"
CORPUS = sorted(p for p in HAZARDS.glob("*.py") if not p.name.startswith("_"))
#: Every code the validator can report before a run (AR110 is runtime-only).
STATIC_CODES = (
    "AR101",
    "AR102",
    "AR103",
    "AR104",
    "AR105",
    "AR106",
    "AR107",
    "AR108",
    "AR109",
    "AR111",
    "AR112",
)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_findings_match_the_marks(path: Path) -> None:
    expected, negative = marks(path)
    findings = check_file(path)
    got = observed(findings)
    missing = expected - got
    unexpected = got - expected
    assert not missing and not unexpected, (
        f"{path.name}\nmissing:\n{describe(findings, missing)}\nunexpected:\n{describe(findings, unexpected)}"
    )
    forbidden = {(f.line, f.code) for f in findings} & negative
    assert not forbidden, f"reported on a `negative` line: {sorted(forbidden)}"


def test_every_static_code_has_positive_and_negative_cases() -> None:
    positive: set[str] = set()
    negative: set[str] = set()
    for path in CORPUS:
        expected, negatives = marks(path)
        positive |= {code for _, code, _ in expected}
        negative |= {code for _, code in negatives}
    assert set(STATIC_CODES) <= positive, f"no positive case for {sorted(set(STATIC_CODES) - positive)}"
    assert set(STATIC_CODES) <= negative, f"no negative case for {sorted(set(STATIC_CODES) - negative)}"


def test_clean_code_has_no_findings() -> None:
    assert check_file(HAZARDS / "clean.py") == []


def test_await_line_and_function_are_reported() -> None:
    [finding] = [f for f in check_file(HAZARDS / "ar103_regex.py") if f.function == "match_live"]
    assert (finding.code, finding.variable, finding.line, finding.await_line) == ("AR103", "m", 13, 14)
    assert finding.col == 5
    assert "variable 'm' (re.Match from re.match()) is live across the await at line 14 in match_live()" in (
        finding.message
    )
    assert "fix:" in finding.message


def test_closure_finding_names_the_inner_function() -> None:
    findings = [f for f in check_file(HAZARDS / "flow.py") if f.code == "AR112"]
    assert [(f.function, f.variable) for f in findings] == [("factory.<locals>.agent", "lock")]


def test_a_closure_variable_counts_as_live_like_the_runtime_says() -> None:
    """A local read inside a comprehension is a cell where the comprehension has its own
    code object (3.11) and a plain local where it is inlined (3.12+).  Cells are always
    checkpointed, so the finding follows the code object, not the source."""
    source = (
        "import re\n"
        "async def agent(lines, x):\n"
        "    pattern = re.compile('a')\n"
        "    kept = [line for line in lines if pattern.match(line)]\n"
        "    await x\n"
        "    return kept\n"
    )
    agent = next(c for c in compile(source, "a.py", "exec").co_consts if hasattr(c, "co_cellvars"))
    findings = check_source(source, "a.py")
    if "pattern" in agent.co_cellvars:
        assert [(f.code, f.variable, f.severity) for f in findings] == [("AR103", "pattern", "portability")]
    else:
        assert findings == []


def test_yield_of_an_async_generator_is_a_suspension() -> None:
    [finding] = [
        f for f in check_file(HAZARDS / "flow.py") if f.function == "across_a_yield" and f.code == "AR103"
    ]
    assert "across the yield at line" in finding.message
