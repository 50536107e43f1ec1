"""Summarize a GitHub issue and extract its labels (the reference SDK's example, ported).

    agentrt run examples/issue_summarizer.py:summarize_issue \\
        --input '{"repo": "octo/widgets", "issue_number": 42}'

The GitHub tools are a local fixture (``examples/github_fixture.py``, no network) and the
model call is the ``summarize`` tool served by a deterministic fake (``examples/fake_model.py``)
until model executors land.  Each ``await`` is a checkpoint: kill the process at any moment and
``agentrt resume RUN_ID`` carries on without repeating a finished call.
"""

from __future__ import annotations

import attrs

from agentrt import Task, agent, pick, progress, ui_tools

try:  # run as examples.issue_summarizer or from a file path
    from examples.fake_model import summarize
    from examples.github_fixture import github_tools
except ImportError:  # pragma: no cover - the examples directory itself is on sys.path
    from fake_model import summarize  # type: ignore[no-redef]
    from github_fixture import github_tools  # type: ignore[no-redef]


@attrs.frozen
class Input:
    repo: str = attrs.field(metadata={"description": "The GitHub repository in 'owner/name' format"})
    issue_number: int = attrs.field(metadata={"description": "The issue number to summarize"})


@attrs.frozen
class Output:
    summary: str
    labels: list[str]


tools = [
    *ui_tools,
    *pick(github_tools, ["github_issues_get", "github_issues_list_comments"]),
    summarize,
]


async def run(input: Input, task: Task) -> Output:
    owner, repo = input.repo.split("/")

    await task.ui.notify(progress("Fetching issue..."))
    issue = await task.tools.github_issues_get(owner=owner, repo=repo, issue_number=input.issue_number)

    await task.ui.notify(progress("Reading the discussion..."))
    comments = await task.tools.github_issues_list_comments(
        owner=owner, repo=repo, issue_number=input.issue_number
    )
    discussion = "\n".join(f"{c['user']['login']}: {c['body']}" for c in comments)

    # Use the model to summarize
    await task.ui.notify(progress("Summarizing..."))
    text = await task.tools.summarize(
        text=f"{issue['title']}. {issue['body']}\n\n{discussion}", max_sentences=2
    )

    task.console.info("summarized", issue=issue["number"], comments=len(comments))
    return Output(summary=text, labels=[label["name"] for label in issue.get("labels", [])])


summarize_issue = agent(
    input=Input,
    output=Output,
    tools=tools,
    run=run,
    name="issue_summarizer",
    description="Summarizes a GitHub issue and extracts its labels.",
)
