"""Recall: the one entry point that finds the parts of a lane's files worth reading.

The reference routes recall through a single entry point; when it returns chunks and the top
score is at least ``models.recallScoreThreshold`` (default 0.4), the agent receives the chunks and
skips the full file read.  Here a lane names its files in the spec (``read: [path, ...]``,
relative to the project); :func:`recall` splits them into chunks (blank-line separated blocks,
at most :data:`CHUNK_LINES` lines) and scores each against the lane's title and brief.

The score is lexical and explainable: the share of the query's distinct significant words the
chunk contains (0 to 1).  Above the threshold the bundle carries the best chunks (``path:lines``
and text) and says to skip the full read; below it, the bundle lists the files to read in full.
Pure over the text given; the lead's tool reads the files (confined to the project).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any  # Any: recall results are JSON for the lead's checkpoint

__all__ = ["CHUNK_LINES", "DEFAULT_THRESHOLD", "chunks_of", "recall", "recall_section"]

CHUNK_LINES = 40
DEFAULT_THRESHOLD = 0.4
TOP_K = 3
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_STOP = frozenset(
    {
        "the", "and", "for", "with", "that", "this", "from", "into", "are", "was", "were", "has",
        "have", "not", "but", "its", "one", "all", "any", "can", "should", "must", "add", "use",
    }
)  # fmt: skip


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def chunks_of(path: str, text: str) -> list[dict[str, Any]]:
    """``{path, first_line, last_line, text}`` blocks: split at blank lines, at most CHUNK_LINES lines."""
    out: list[dict[str, Any]] = []
    block: list[str] = []
    start = 1
    for number, line in enumerate(text.splitlines(), start=1):
        if not block:
            start = number
        if line.strip():
            block.append(line)
        if (not line.strip() and block) or len(block) >= CHUNK_LINES:
            out.append({"path": path, "first_line": start, "last_line": number, "text": "\n".join(block)})
            block = []
    if block:
        out.append(
            {"path": path, "first_line": start, "last_line": start + len(block) - 1, "text": "\n".join(block)}
        )
    return out


def recall(
    files: Mapping[str, str], query: str, threshold: float = DEFAULT_THRESHOLD, k: int = TOP_K
) -> dict[str, Any]:
    """Score every chunk of ``files`` (path -> text) against ``query``: ``{"top_score", "used",
    "chunks" (the best ``k``, with their scores), "paths"}``; ``used`` when the top score reaches
    ``threshold`` (then the chunks stand in for the full read)."""
    wanted = _terms(query)
    scored = []
    for path, text in files.items():
        for chunk in chunks_of(path, text):
            score = len(wanted & _terms(chunk["text"])) / len(wanted) if wanted else 0.0
            scored.append({**chunk, "score": round(score, 3)})
    scored.sort(key=lambda c: (-c["score"], c["path"], c["first_line"]))
    top = scored[0]["score"] if scored else 0.0
    return {
        "top_score": top,
        "threshold": threshold,
        "used": bool(scored) and top >= threshold,
        "chunks": [c for c in scored[:k] if c["score"] > 0],
        "paths": sorted(files),
    }


def recall_section(result: Mapping[str, Any]) -> str:
    """The bundle's section: the recalled chunks (skip the full read), or the files to read."""
    if result["used"]:
        lines = [
            f"# Recalled context (top score {result['top_score']} >= {result['threshold']}: "
            "use these chunks; skip the full read)"
        ]
        for c in result["chunks"]:
            lines += [f"## {c['path']}:{c['first_line']}-{c['last_line']} (score {c['score']})", c["text"]]
        return "\n".join(lines)
    paths: Sequence[str] = result["paths"]
    score, threshold = result["top_score"], result["threshold"]
    head = f"# Files to read (recall's top score {score} < {threshold}: read them in full)"
    return head + "".join(f"\n- {p}" for p in paths)
