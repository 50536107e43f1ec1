"""The new-specialist interview's pure half: checking the answers and the boundary scan."""

from __future__ import annotations

import pytest

from agentrt.teams import ContractError
from agentrt.teams.interview import boundary_scan, draft_from_answers

GOOD = {
    "purpose": "data-stewardship",
    "boundaries": ["does not deploy"],
    "default_tier": "cheap",
    "tools": ["read"],
    "body": "Keeps the schema consistent.",
}


def test_answers_become_a_draft_with_the_reason_in_its_body() -> None:
    draft = draft_from_answers("steward", "owns the schema", GOOD)
    assert draft["name"] == "steward" and draft["default_tier"] == "cheap"
    assert draft["body"].endswith("Minted through the team gate: owns the schema")


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        ("a string", "answer with an object"),
        ({**GOOD, "purpose": " "}, "key 'purpose': is required"),
        ({**GOOD, "boundaries": []}, "key 'boundaries': is required"),
        ({**GOOD, "tools": ["read", 3]}, "key 'tools': is required"),
        ({**GOOD, "default_tier": "huge"}, "key 'default_tier': must be one of cheap, mid, powerful"),
        ({**GOOD, "salary": 1}, "key 'salary': is not a question of the interview"),
    ],
)
def test_an_incomplete_answer_says_what_to_fix(answers: object, message: str) -> None:
    with pytest.raises(ContractError, match=message):
        draft_from_answers("steward", "why", answers)


def test_the_scan_names_each_overlap_and_ignores_common_words() -> None:
    draft = draft_from_answers(
        "steward", "why", {**GOOD, "boundaries": ["reports schema failures", "does not touch the code"]}
    )
    neighbours = {
        "qa": {"purpose": "verification", "boundaries": ["reports failures with reproductions"]},
        "backend": {"purpose": "implementation", "boundaries": ["does not touch the frontend"]},
        "twin": {"purpose": "Data-Stewardship ", "boundaries": []},
        "steward": {"purpose": "data-stewardship", "boundaries": ["reports schema failures"]},  # itself
    }
    assert boundary_scan(draft, neighbours) == [
        "boundary 'reports schema failures' overlaps qa's boundary 'reports failures with reproductions' "
        "(shared: failures, reports)",
        "purpose 'data-stewardship' is also twin's purpose",
    ]
