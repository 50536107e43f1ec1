"""Fan out over many repositories at once with ``task.gather`` / ``task.gather_settled``.

    agentrt run examples/repo_fanout.py:repo_report \\
        --input '{"owner": "octo", "repos": ["widgets", "gadgets", "gizmos"]}'

One agent, one job: the same call over N inputs is one ``gather`` (built inline, so nothing
but plain requests is held across the await), not N sub-agents.  ``gather_settled`` keeps
going when some calls fail.
"""

from __future__ import annotations

import attrs

from agentrt import Task, agent, pick

try:
    from examples.github_fixture import github_tools
except ImportError:  # pragma: no cover
    from github_fixture import github_tools  # type: ignore[no-redef]


@attrs.frozen
class Input:
    owner: str
    repos: list[str]


@attrs.frozen
class RepoLine:
    repo: str
    open_issues: int


@attrs.frozen
class Report:
    lines: list[RepoLine]
    total_open_issues: int
    missing_issues: list[str]


async def run(input: Input, task: Task) -> Report:
    repos = await task.gather([task.tools.github_repos_get(owner=input.owner, repo=r) for r in input.repos])
    lines = [RepoLine(r["full_name"], r["open_issues_count"]) for r in repos]

    # Some of these do not exist: collect every outcome instead of failing on the first.
    probes = await task.gather_settled(
        [task.tools.github_issues_get(owner=input.owner, repo=r, issue_number=42) for r in input.repos]
    )
    missing = [
        f"{input.owner}/{r}#42" for r, p in zip(input.repos, probes, strict=True) if p.status == "rejected"
    ]
    for p in probes:
        if p.status == "rejected":
            task.console.warn("issue probe failed", error=str(p.error))
    return Report(lines, sum(line.open_issues for line in lines), missing)


repo_report = agent(
    input=Input,
    output=Report,
    tools=pick(github_tools, ["github_repos_get", "github_issues_get"]),
    run=run,
    name="repo_report",
    description="Counts open issues across repositories and probes each for issue #42.",
)
