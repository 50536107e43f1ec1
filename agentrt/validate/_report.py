"""Printing findings: one compiler-style line each, or one JSON document.

Text lines read like a compiler's so editors and CI annotators can jump to them
(``path:line:col: CODE severity: message``); the JSON shape is the contract of
``docs/hazards.md`` (``{"findings": [...]}``) plus a ``summary`` object.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any  # Any: JSON documents

from agentrt.validate._model import ERROR, Finding, Profile

__all__ = ["exit_status", "render_json", "render_text", "summary"]

EXIT_CLEAN = 0
EXIT_FINDINGS = 1


def summary(findings: Sequence[Finding], profile: Profile, files: int) -> dict[str, Any]:
    kept = [f for f in findings if profile.keeps(f)]
    failing = sum(profile.counts_as_error(f) for f in kept)
    return {
        "files": files,
        "findings": len(kept),
        "errors": sum(f.severity == ERROR for f in kept),
        "portability": sum(f.severity != ERROR for f in kept),
        "counted_as_errors": failing,
        "profile": profile.name,
        "exit_status": EXIT_FINDINGS if failing else EXIT_CLEAN,
    }


def exit_status(findings: Sequence[Finding], profile: Profile) -> int:
    """1 when any finding counts as an error under ``profile``, else 0."""
    return EXIT_FINDINGS if any(profile.counts_as_error(f) for f in findings) else EXIT_CLEAN


def render_text(findings: Sequence[Finding], profile: Profile, files: int) -> str:
    lines = [
        f"{f.path}:{f.line}:{f.col}: {f.code} {f.severity}: {f.message}" for f in findings if profile.keeps(f)
    ]
    s = summary(findings, profile, files)
    noun = "file" if files == 1 else "files"
    if s["findings"] == 0:
        lines.append(f"agentrt check: no findings in {files} {noun} (profile {profile.name})")
    else:
        kinds = [_plural(s["errors"], "error"), _plural(s["portability"], "portability finding")]
        line = f"agentrt check: {_plural(s['findings'], 'finding')} in {files} {noun}: "
        line += ", ".join(kind for kind in kinds if not kind.startswith("0 "))
        failing = s["counted_as_errors"]
        if failing == 0:
            line += "; none counts as an error"
        elif failing != s["errors"]:  # the profile counts portability findings as errors too
            line += f"; {failing} count as errors" if failing > 1 else "; 1 counts as an error"
        lines.append(f"{line} (profile {profile.name})")
    return "\n".join(lines)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def render_json(findings: Sequence[Finding], profile: Profile, files: int) -> str:
    document = {
        "findings": [f.to_json() for f in findings if profile.keeps(f)],
        "summary": summary(findings, profile, files),
    }
    return json.dumps(document, indent=2)
