"""Summarize a GitHub issue, post the summary back, and extract its labels (the reference SDK's
example, ported).

    agentrt run examples/issue_summarizer.py:summarize_issue \\
        --executors examples/executors.py:offline \\
        --input '{"repo": "octo/widgets", "issue_number": 42}'

The GitHub tools are a local fixture (``examples/github_fixture.py``, no network).  The model
call is a ``task.llm.generate_text`` request answered by the executors the host binds:
``examples/executors.py:offline`` (deterministic, no network) or ``:openai`` (any
OpenAI-compatible endpoint; ``make demo`` runs it against a local stand-in).  Each ``await`` is a
checkpoint: kill the process at any moment and ``agentrt resume RUN_ID --executors ...`` carries
on without repeating a finished tool call or model call.
"""

from __future__ import annotations

import attrs

from agentrt import Task, agent, pick, progress, ui_tools

try:  # run as examples.issue_summarizer or from a file path
    from examples.github_fixture import github_tools
except ImportError:  # pragma: no cover - the examples directory itself is on sys.path
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
    *pick(github_tools, ["github_issues_get", "github_issues_list_comments", "github_issues_add_comment"]),
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
    text = await task.llm.generate_text(
        prompt=f"Summarize this issue in two sentences.\n\n{issue['title']}. {issue['body']}\n\n{discussion}",
        system="You summarize GitHub issues for busy maintainers.",
        model="quick",
        metadata={"max_sentences": 2},
        src="summarize",
    )
    task.console.info("summarized", issue=issue["number"], comments=len(comments), usage=text.usage)

    await task.ui.notify(progress("Posting the summary..."))
    await task.tools.github_issues_add_comment(
        owner=owner, repo=repo, issue_number=input.issue_number, body=f"Summary: {text.output}"
    )
    return Output(summary=text.output, labels=[label["name"] for label in issue.get("labels", [])])


summarize_issue = agent(
    input=Input,
    output=Output,
    tools=tools,
    run=run,
    name="issue_summarizer",
    description="Summarizes a GitHub issue and extracts its labels.",
)
