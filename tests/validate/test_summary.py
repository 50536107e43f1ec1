"""The closing line of ``agentrt check``: counts with their nouns agreeing, and only the kinds found."""

from __future__ import annotations

import pytest

from agentrt.validate._model import ERROR, PORTABILITY, Finding, Profile
from agentrt.validate._report import render_text


def _findings(errors: int, portability: int) -> list[Finding]:
    def one(n: int, severity: str) -> Finding:
        return Finding(
            "a.py", n, 1, "AR112" if severity == ERROR else "AR107", severity, n + 1, "f", "x", "m"
        )  # type: ignore[arg-type]

    return [one(n, ERROR) for n in range(errors)] + [one(100 + n, PORTABILITY) for n in range(portability)]


@pytest.mark.parametrize(
    ("errors", "portability", "files", "profile", "summary"),
    [
        (3, 0, 1, "default", "3 findings in 1 file: 3 errors (profile default)"),
        (1, 0, 1, "default", "1 finding in 1 file: 1 error (profile default)"),
        (1, 1, 2, "default", "2 findings in 2 files: 1 error, 1 portability finding (profile default)"),
        (
            0,
            2,
            1,
            "default",
            "2 findings in 1 file: 2 portability findings; none counts as an error (profile default)",
        ),
        (
            0,
            1,
            1,
            "portable",
            "1 finding in 1 file: 1 portability finding; 1 counts as an error (profile portable)",
        ),
        (
            2,
            2,
            3,
            "portable",
            "4 findings in 3 files: 2 errors, 2 portability findings; 4 count as errors (profile portable)",
        ),
    ],
)
def test_summary_line(errors, portability, files, profile, summary):
    text = render_text(_findings(errors, portability), Profile.named(profile), files)
    assert text.splitlines()[-1] == "agentrt check: " + summary
