"""The fix for fan-out: `task.gather` / `task.gather_settled` with the calls written
inline.  The requests are plain data, so even a list of them held in a local may
cross an await."""

# construct: `task.gather` / `task.gatherSettled` (parallel tool calls)
# source: 000
# status: works natively
# expect: none
# runtime: completes

from typing import Any

from agentrt import Task
from tests.validate.constructs._drive import run, task


async def agent(task: Task, repos: list[str]) -> Any:
    pulls, issues = await task.gather([task.tools.list_pulls(repo="a"), task.tools.list_issues(repo="a")])
    settled = await task.gather_settled([task.tools.get_repo(repo=repo) for repo in repos])
    return pulls, issues, [result.value for result in settled]


def main() -> Any:
    return run(agent, task("list_pulls", "list_issues", "get_repo"), ["a", "b"])


if __name__ == "__main__":
    print(main())
