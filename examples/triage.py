"""A parent agent that hands each issue to a sub-agent (the issue summarizer), then lets the model
decide each issue's priority.

    agentrt run examples/triage.py:triage --executors examples/executors.py:offline \\
        --input '{"repo": "octo/widgets", "issue_numbers": [42, 7]}'

``summarize_issue`` is listed in the parent's tools, so ``await task.tools.issue_summarizer(...)``
starts a durable child run (``RUN_ID.SEQ[.IDX]``, visible with ``agentrt runs``).  The parent
waits without holding a worker; if the process dies, ``agentrt resume`` continues the parent,
which picks up its children where they stopped.  ``task.llm.decide`` offers the model three
events (``High``, ``Normal``, ``Low``) and returns the one it chose, its payload validated.
"""

from __future__ import annotations

import attrs

import agentrt
from agentrt import Task, agent, progress, ui_tools

try:
    from examples.issue_summarizer import summarize_issue
except ImportError:  # pragma: no cover
    from issue_summarizer import summarize_issue  # type: ignore[no-redef]


@attrs.frozen
class Input:
    repo: str
    issue_numbers: list[int]


@attrs.frozen
class Triage:
    issue_number: int
    summary: str
    priority: str


@attrs.frozen
class Output:
    items: list[Triage]


@agentrt.serializable
@attrs.frozen
class High:
    """Fix now: a regression, a security problem, or users blocked."""

    reason: str


@agentrt.serializable
@attrs.frozen
class Normal:
    """A real bug with a workaround; schedule it."""

    reason: str


@agentrt.serializable
@attrs.frozen
class Low:
    """Nice to have: a request or a cosmetic issue."""

    reason: str


async def run(input: Input, task: Task) -> Output:
    await task.ui.notify(progress(f"Triaging {len(input.issue_numbers)} issues"))
    summaries = await task.gather(
        [task.tools.issue_summarizer(repo=input.repo, issue_number=n) for n in input.issue_numbers]
    )
    choices = await task.gather(
        [
            task.llm.decide(
                prompt=f"How urgent is this issue?\n\n{s.summary}\nLabels: {', '.join(s.labels)}",
                events=[High, Normal, Low],
                src="priority",
            )
            for s in summaries
        ]
    )
    items = [
        Triage(n, s.summary, type(choice).__name__.lower())
        for n, s, choice in zip(input.issue_numbers, summaries, choices, strict=True)
    ]
    return Output(sorted(items, key=lambda t: (t.priority != "high", t.issue_number)))


triage = agent(input=Input, output=Output, tools=[summarize_issue, *ui_tools], run=run, name="triage")
