"""A parent agent that hands each issue to a sub-agent (the issue summarizer).

    agentrt run examples/triage.py:triage --input '{"repo": "octo/widgets", "issue_numbers": [42, 7]}'

``summarize_issue`` is listed in the parent's tools, so ``await task.tools.issue_summarizer(...)``
starts a durable child run (``RUN_ID.SEQ[.IDX]``, visible with ``agentrt runs``).  The parent
waits without holding a worker; if the process dies, ``agentrt resume`` continues the parent,
which picks up its children where they stopped.
"""

from __future__ import annotations

import attrs

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


def priority_of(labels: list[str]) -> str:
    if "regression" in labels or "security" in labels:
        return "high"
    return "normal" if "bug" in labels else "low"


async def run(input: Input, task: Task) -> Output:
    await task.ui.notify(progress(f"Triaging {len(input.issue_numbers)} issues"))
    summaries = await task.gather(
        [task.tools.issue_summarizer(repo=input.repo, issue_number=n) for n in input.issue_numbers]
    )
    items = [
        Triage(n, s.summary, priority_of(s.labels))
        for n, s in zip(input.issue_numbers, summaries, strict=True)
    ]
    return Output(sorted(items, key=lambda t: (t.priority != "high", t.issue_number)))


triage = agent(input=Input, output=Output, tools=[summarize_issue, *ui_tools], run=run, name="triage")
