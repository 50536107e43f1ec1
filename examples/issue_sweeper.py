"""A self-managed state agent: explicit state, and two functions that say what to do next.

    agentrt run examples/issue_sweeper.py:issue_sweeper \\
        --executors examples/executors.py:offline \\
        --input '{"repo": "octo/widgets", "issue_numbers": [42, 7]}'
    agentrt resume RUN_ID --reply '{"approve": true}' --executors examples/executors.py:offline

``start(input, state)`` and ``on_tool_results(results, state)`` return ``call_tools([...])``
(several calls run together), ``ask(prompt)`` (the run waits for ``agentrt resume RUN_ID --reply JSON``) or
``output(value)``.  The state is a plain attrs class: between steps the run keeps it as JSON,
checked against the class when saved and when read back, also after a crash.

The sweep fetches every issue at once, hands each bug to the LLM agent
``examples/issue_researcher.py`` (sub-agents are tools too: one durable child run each, all
at once), asks a person whether to post the reports as comments, and posts them if so.
"""

from __future__ import annotations

from typing import Any

import attrs

from agentrt import ToolCall, agent, ask, call_tools, output, ui_tools

try:  # run as examples.issue_sweeper or from a file path
    from examples.github_fixture import github_issues_add_comment, github_issues_get
    from examples.issue_researcher import Report, issue_researcher
except ImportError:  # pragma: no cover - the examples directory itself is on sys.path
    from github_fixture import github_issues_add_comment, github_issues_get  # type: ignore[no-redef]
    from issue_researcher import Report, issue_researcher  # type: ignore[no-redef]


@attrs.frozen
class Input:
    repo: str = attrs.field(metadata={"description": "The GitHub repository in 'owner/name' format"})
    issue_numbers: list[int]


@attrs.frozen
class Sweep:
    bugs: list[int]
    reports: list[Report]
    commented: list[int]


@attrs.define
class State:
    """Where the sweep is: ``stage`` names what the last batch of calls was."""

    stage: str = "fetch"
    repo: str = ""
    bugs: list[int] = attrs.field(factory=list)
    reports: list[Report] = attrs.field(factory=list)
    commented: list[int] = attrs.field(factory=list)


def _where(repo: str) -> dict[str, str]:
    owner, name = repo.split("/", 1)
    return {"owner": owner, "repo": name}


def start(input: Input, state: State) -> Any:
    """Fetch every issue at once."""
    state.repo = input.repo
    where = _where(input.repo)
    return call_tools(
        [ToolCall("github_issues_get", {**where, "issue_number": n}) for n in input.issue_numbers]
    )


def on_tool_results(results: list[Any], state: State) -> Any:
    if state.stage == "fetch":
        state.bugs = [
            r.value["number"]
            for r in results
            if r.ok and any(label["name"] == "bug" for label in r.value["labels"])
        ]
        if not state.bugs:
            return output(Sweep([], [], []))
        state.stage = "research"
        return call_tools(
            [ToolCall("issue_researcher", {"repo": state.repo, "issue_number": n}) for n in state.bugs]
        )
    if state.stage == "research":
        state.reports = [r.value for r in results if r.ok]
        state.stage = "confirm"
        numbers = ", ".join(f"#{r.issue_number}" for r in state.reports)
        return ask({"question": f"Post the research reports as comments on {numbers}?", "reports": numbers})
    if state.stage == "confirm":
        [reply] = results
        approved = isinstance(reply.value, dict) and reply.value.get("approve") is True
        if not approved:
            return output(Sweep(state.bugs, state.reports, []))
        state.stage = "comment"
        where = _where(state.repo)
        return call_tools(
            [
                ToolCall(
                    "github_issues_add_comment",
                    {**where, "issue_number": r.issue_number, "body": _comment(r)},
                )
                for r in state.reports
            ]
        )
    state.commented = [r.arguments["issue_number"] for r in results if r.ok]
    return output(Sweep(state.bugs, state.reports, state.commented))


def _comment(report: Report) -> str:
    text = f"**Research summary:** {report.summary}"
    if report.workaround:
        text += f"\n\n**Workaround:** {report.workaround}"
    return text


issue_sweeper = agent(
    input=Input,
    output=Sweep,
    tools=[github_issues_get, github_issues_add_comment, issue_researcher, *ui_tools],
    state=State,
    start=start,
    on_tool_results=on_tool_results,
    name="issue_sweeper",
)
