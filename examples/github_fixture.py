"""A local, offline stand-in for a GitHub toolset: the same tool names and shapes, fixture data.

Every call appends one line to the file named by ``AGENTRT_EXAMPLE_SIDE_EFFECTS`` (when set)
with the tool name and its idempotency key, so a demo or a test can show which calls ran and
that a finished call is never run twice across a crash.  ``AGENTRT_EXAMPLE_PAUSE`` (seconds)
makes ``github_issues_add_comment`` slow, which gives a demo time to kill the process.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from agentrt import tool

ISSUES: dict[tuple[str, str, int], dict[str, Any]] = {
    ("octo", "widgets", 42): {
        "number": 42,
        "title": "Crash when exporting a report with an empty date range",
        "state": "open",
        "user": {"login": "mira"},
        "body": (
            "Exporting a report crashes the app when the date range is empty. "
            "Steps: open Reports, clear both dates, press Export. "
            "Expected: a message asking for a range. Actual: the window closes and the log shows "
            "ZeroDivisionError in summarize_period(). Happens on 2.3.0 and 2.3.1, not on 2.2.x."
        ),
        "labels": [{"name": "bug"}, {"name": "export"}, {"name": "regression"}],
        "comments": 3,
    },
    ("octo", "widgets", 7): {
        "number": 7,
        "title": "Dark mode for the settings page",
        "state": "open",
        "user": {"login": "sam"},
        "body": "The settings page ignores the dark theme. It would be nice to follow the system setting.",
        "labels": [{"name": "enhancement"}, {"name": "ui"}],
        "comments": 1,
    },
}

COMMENTS: dict[tuple[str, str, int], list[dict[str, Any]]] = {
    ("octo", "widgets", 42): [
        {"user": {"login": "lee"}, "body": "Reproduced on 2.3.1. The range length is used as a divisor."},
        {"user": {"login": "mira"}, "body": "Workaround: set any one-day range before exporting."},
        {"user": {"login": "lee"}, "body": "Fix is a guard in summarize_period(); PR coming."},
    ],
    ("octo", "widgets", 7): [{"user": {"login": "kai"}, "body": "+1, the white flash at night is painful."}],
}


class NotFound(LookupError):
    """The fixture has no such issue (what the GitHub API answers with 404)."""


def _side_effect(name: str, key: str | None) -> None:
    path = os.environ.get("AGENTRT_EXAMPLE_SIDE_EFFECTS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": name, "key": key, "pid": os.getpid()}) + "\n")


def _pause() -> None:
    seconds = float(os.environ.get("AGENTRT_EXAMPLE_PAUSE", "0") or 0)
    if seconds:
        time.sleep(seconds)


@tool
def github_issues_get(owner: str, repo: str, issue_number: int, idempotency_key: str = "") -> dict[str, Any]:
    """Get one issue of a repository.

    Args:
        owner: The account that owns the repository.
        repo: The repository name.
        issue_number: The number of the issue.
    """
    _side_effect("github_issues_get", idempotency_key)
    try:
        return json.loads(json.dumps(ISSUES[(owner, repo, issue_number)]))
    except KeyError:
        raise NotFound(f"issue {owner}/{repo}#{issue_number} not found") from None


@tool
def github_issues_list_comments(
    owner: str, repo: str, issue_number: int, idempotency_key: str = ""
) -> list[dict[str, Any]]:
    """List the comments of an issue, oldest first.

    Args:
        owner: The account that owns the repository.
        repo: The repository name.
        issue_number: The number of the issue.
    """
    _side_effect("github_issues_list_comments", idempotency_key)
    return json.loads(json.dumps(COMMENTS.get((owner, repo, issue_number), [])))


@tool
def github_repos_get(owner: str, repo: str, idempotency_key: str = "") -> dict[str, Any]:
    """Get a repository.

    Args:
        owner: The account that owns the repository.
        repo: The repository name.
    """
    _side_effect("github_repos_get", idempotency_key)
    count = sum(1 for (o, r, _n) in ISSUES if (o, r) == (owner, repo))
    return {"full_name": f"{owner}/{repo}", "open_issues_count": count, "default_branch": "main"}


@tool
def github_issues_add_comment(
    owner: str, repo: str, issue_number: int, body: str, idempotency_key: str = ""
) -> dict[str, Any]:
    """Comment on an issue (the fixture records it; the same idempotency key posts once).

    Args:
        owner: The account that owns the repository.
        repo: The repository name.
        issue_number: The number of the issue.
        body: The comment text (Markdown).
    """
    _side_effect("github_issues_add_comment", idempotency_key)
    _pause()
    if (owner, repo, issue_number) not in ISSUES:
        raise NotFound(f"issue {owner}/{repo}#{issue_number} not found")
    return {"id": abs(hash(idempotency_key or body)) % 10**8, "body": body}


github_tools = [github_issues_get, github_issues_list_comments, github_issues_add_comment, github_repos_get]
