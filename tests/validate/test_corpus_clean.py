"""Zero error-severity findings on the checkpoint construct corpus and on the examples.

Portability findings are expected in the corpus: it deliberately uses what only
agentrt resumes (async generators, helpers from another module, functions by
reference).  The corpus's cases the runtime refuses on purpose (``REFUSED``) are
reported with the runtime's code, and only those (tests/realcode/test_realcode.py
compares the two case by case).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrt.validate import ERROR, Finding, check_path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "tests" / "corpus").glob("*.py"))
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def _refused_on_purpose(finding: Finding) -> bool:
    from tests.corpus import CASES
    from tests.corpus.registry import REFUSED

    return any(
        case.fn.__qualname__ == finding.function and REFUSED.get(case.name) == finding.code for case in CASES
    )


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_checkpoint_corpus_has_no_errors(path: Path) -> None:
    errors = [f for f in check_path(path) if f.severity == ERROR and not _refused_on_purpose(f)]
    assert not errors, "\n".join(f"{f.path}:{f.line}: {f.code} {f.message}" for f in errors)


def test_corpus_portability_findings_are_the_known_ones() -> None:
    codes = {f.code for path in CORPUS for f in check_path(path) if not _refused_on_purpose(f)}
    assert codes <= {"AR106", "AR107", "AR109"}, codes


@pytest.mark.parametrize(
    "path",
    EXAMPLES or [pytest.param(None, marks=pytest.mark.skip("no examples yet"))],
    ids=lambda p: p.name if p else "none",
)
def test_examples_have_no_errors(path: Path) -> None:
    errors = [f for f in check_path(path) if f.severity == ERROR]
    assert not errors, "\n".join(f"{f.path}:{f.line}: {f.code} {f.message}" for f in errors)
