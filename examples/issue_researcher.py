"""An LLM agent: the model reads a GitHub issue and its comments with tools, then submits a report.

    agentrt run examples/issue_researcher.py:issue_researcher \\
        --executors examples/executors.py:offline \\
        --input '{"repo": "octo/widgets", "issue_number": 42}'

There is no ``run`` function: ``llm_agent(...)`` is the loop.  In ``multi-turn`` mode the model
works in turns -- here it asks for the issue and its comments in one turn (the two tool calls run
together) -- until it calls the injected ``submit`` tool with a ``Report``; a report that does
not fit the class is refused and the model told why.  Every model turn and every batch of tool
calls is a durable step: kill the process between turns and ``agentrt resume RUN_ID --executors
...`` carries on without asking the model again for a finished turn or fetching the issue twice.
``agentrt dump RUN_ID`` shows the conversation so far (the ``messages`` local).

``examples/executors.py:offline`` answers like a careful model would, without one; ``:openai``
talks to any OpenAI-compatible endpoint.
"""

from __future__ import annotations

import attrs

from agentrt import llm_agent

try:  # run as examples.issue_researcher or from a file path
    from examples.github_fixture import github_issues_get, github_issues_list_comments
except ImportError:  # pragma: no cover - the examples directory itself is on sys.path
    from github_fixture import github_issues_get, github_issues_list_comments  # type: ignore[no-redef]


@attrs.frozen
class Input:
    repo: str = attrs.field(metadata={"description": "The GitHub repository in 'owner/name' format"})
    issue_number: int = attrs.field(metadata={"description": "The issue to research"})


@attrs.frozen
class Report:
    """What the researcher found out about one issue."""

    issue_number: int
    summary: str = attrs.field(metadata={"description": "Two sentences at most"})
    workaround: str | None = attrs.field(
        default=None, metadata={"description": "A workaround from the comments, if one is given"}
    )
    comment_count: int = 0


issue_researcher = llm_agent(
    name="issue_researcher",
    system=(
        "You research one GitHub issue. Fetch the issue and its comments with the tools (both in "
        "one turn), then submit a short summary, the workaround if a comment gives one, and how "
        "many comments there are."
    ),
    input=Input,
    output=Report,
    tools=[github_issues_get, github_issues_list_comments],
    mode="multi-turn",
    max_turns=6,
)
