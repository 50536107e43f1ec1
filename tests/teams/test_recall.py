"""Recall: a lane's files chunked and scored against its brief; over the threshold the bundle
carries the best chunks instead of asking for the full read."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrt.teams import ContractError
from agentrt.teams.plan import parse_spec
from agentrt.teams.recall import CHUNK_LINES, chunks_of, recall, recall_section
from tests.teams.test_team_runtime import Recorder, run_approved, write_config

GUIDE = """# Reports

Reports list the rows of a query.

## Export

The CSV export streams rows with a header line; large reports stream without timing out.

## Billing

Invoices are sent monthly.
"""


def test_chunks_split_at_blank_lines_and_at_most_chunk_lines() -> None:
    chunks = chunks_of("g.md", GUIDE)
    assert [(c["first_line"], c["last_line"]) for c in chunks][:3] == [(1, 2), (3, 4), (5, 6)]
    long = chunks_of("x", "\n".join(f"line {i}" for i in range(CHUNK_LINES + 5)))
    assert [c["last_line"] - c["first_line"] + 1 for c in long] == [CHUNK_LINES, 5]


def test_recall_scores_chunks_by_the_share_of_the_query_they_hold() -> None:
    got = recall({"docs/guide.md": GUIDE}, "CSV export streams rows header", threshold=0.4)
    assert got["used"] and got["top_score"] == 1.0
    best = got["chunks"][0]
    assert (best["path"], best["first_line"]) == ("docs/guide.md", 7) and "header line" in best["text"]
    section = recall_section(got)
    assert section.startswith("# Recalled context (top score 1.0 >= 0.4") and "docs/guide.md:7-8" in section
    low = recall({"docs/guide.md": GUIDE}, "kubernetes helm chart rollout", threshold=0.4)
    assert not low["used"] and low["top_score"] == 0.0 and low["chunks"] == []
    assert recall_section(low).startswith("# Files to read (recall's top score 0.0 < 0.4")
    assert recall({}, "anything")["used"] is False


def test_a_lane_with_files_gets_recalled_chunks_or_the_files_to_read(tmp_path: Path) -> None:
    project = tmp_path
    spec = (Path(__file__).resolve().parents[2] / "examples" / "team_spec.md").read_text()
    spec = spec.replace(
        "    brief: Add GET /reports/{id}.csv streaming rows with a header line. Reuse the report query.",
        "    brief: Add GET /reports/{id}.csv streaming rows with a header line. Reuse the report query.\n"
        "    read: [docs/guide.md, docs/gone.md]",
    ).replace(
        "    brief: One section in the user guide on exporting a report as CSV.",
        "    brief: One section in the user guide on exporting a report as CSV.\n    read: [docs/guide.md]",
    )
    (project / "spec.md").write_text(spec)
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text(GUIDE)
    write_config(project, "models:\n  recallScoreThreshold: 0.45\n")
    out = run_approved(project, Recorder())
    assert out["goal_status"] == "complete"
    context = project / ".agentrt" / "context" / "team1"
    api = (context / "backend-api.md").read_text()
    assert "# Recalled context" in api and "The CSV export streams rows with a header line" in api
    assert "# Files not found\n- docs/gone.md" in api
    docs = (context / "doc-writer-docs.md").read_text()  # its brief shares too little with the guide
    assert "# Files to read (recall's top score" in docs and "- docs/guide.md" in docs


def test_read_must_be_a_list_of_paths() -> None:
    lane = "{task_id: a, specialist: backend, work_type: draft, read: x.md}"
    spec = f"---\nslug: s\ntask: t\nlanes:\n  - {lane}\n---\n"
    with pytest.raises(ContractError, match="must be a list of file paths"):
        parse_spec(spec)
