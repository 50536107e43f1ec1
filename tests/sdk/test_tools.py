"""@tool, pick/omit, Task requests."""

from __future__ import annotations

import attrs
import pytest

from agentrt import Task, agent, omit, pick, tool, ui_tools
from agentrt._sdk.requests import Ask, ChildRun, Gather, Sleep, ToolCall
from agentrt.lowlevel import suspend


@tool
def fetch(owner: str, repo: str, limit: int = 10, idempotency_key: str = "") -> list[dict]:
    """Fetch things from a repository.

    Longer explanation that stays in the description.

    Args:
        owner: The account that owns
            the repository.
        repo (str): The repository name.
        limit: At most this many.

    Returns:
        The things.
    """
    return [{"owner": owner, "repo": repo, "limit": limit, "key": idempotency_key}]


@tool(name="renamed", description="Custom.")
async def afetch(x: float | None = None) -> float:
    return x or 0.0


def test_schema_from_annotations_and_docstring():
    schema = fetch.json_schema()
    assert schema["name"] == "fetch"
    assert (
        schema["description"]
        == "Fetch things from a repository.\n\nLonger explanation that stays in the description."
    )
    params = schema["parameters"]
    assert params["required"] == ["owner", "repo"]
    assert params["properties"]["owner"] == {
        "type": "string",
        "description": "The account that owns the repository.",
    }
    assert params["properties"]["repo"]["description"] == "The repository name."
    assert params["properties"]["limit"] == {
        "type": "integer",
        "description": "At most this many.",
        "default": 10,
    }
    assert "idempotency_key" not in params["properties"]
    assert fetch.takes_idempotency_key and not fetch.is_async


def test_async_tool_and_options():
    assert afetch.name == "renamed" and afetch.description == "Custom." and afetch.is_async
    assert afetch.parameters["properties"]["x"]["anyOf"] == [{"type": "number"}, {"type": "null"}]
    assert fetch(owner="a", repo="b") == [
        {"owner": "a", "repo": "b", "limit": 10, "key": ""}
    ]  # still callable


def test_positional_only_parameters_are_refused():
    def f(a: int, /) -> int:
        return a

    with pytest.raises(TypeError, match="positional-only"):
        tool(f)


def test_pick_and_omit():
    tools = [fetch, afetch, *ui_tools]
    assert pick(tools, ["renamed", "fetch"]) == [afetch, fetch]
    assert [t.name for t in omit(tools, ["ui_ask"])] == ["fetch", "renamed", "ui_notify"]
    with pytest.raises(
        KeyError, match="no tool named 'nope'; the tools are: fetch, renamed, ui_ask, ui_notify"
    ):
        pick(tools, ["nope"])
    with pytest.raises(KeyError, match="omit: no tool named 'x'"):
        omit(tools, ["x"])


@attrs.frozen
class In:
    x: int


@attrs.frozen
class Out:
    y: int


async def child_run(input: In, task: Task) -> Out:
    return Out(input.x)


child = agent(input=In, output=Out, run=child_run, name="child")


async def parent_run(input: In, task: Task) -> Out:
    return Out(1)


parent = agent(input=In, output=Out, run=parent_run, tools=[fetch, child, *ui_tools], name="parent")


def test_task_builds_requests():
    task = parent.make_task("r1")
    assert task.tools.fetch(owner="o", repo="r") == ToolCall("fetch", {"owner": "o", "repo": "r"})
    assert task.tools.child(x=1) == ChildRun("child", {"x": 1})
    assert task.ui.ask("sure?") == Ask("sure?")
    assert isinstance(task.sleep(1), Sleep)
    g = task.gather([task.tools.fetch(owner="o", repo=str(i)) for i in range(2)])
    assert isinstance(g, Gather) and len(g.requests) == 2 and not g.settled
    assert task.gather_settled([]).settled
    assert sorted(dir(task.tools)) == ["child", "fetch"]


def test_task_errors_say_what_to_do():
    task = parent.make_task("r1")
    with pytest.raises(
        AttributeError, match=r"agent 'parent' has no tool 'fetchh'; its tools are: child, fetch"
    ):
        task.tools.fetchh
    with pytest.raises(TypeError, match="keyword arguments only"):
        task.tools.fetch("o", "r")

    async def not_a_request():
        return 1

    with pytest.raises(TypeError, match=r"member 1 is coroutine \(an arbitrary awaitable"):
        task.gather([task.tools.fetch(owner="o", repo="r"), not_a_request()])
    with pytest.raises(TypeError, match=r"member 0 is generator \(an arbitrary awaitable"):
        task.gather([suspend("x")])  # the bare trap: awaitable, but not a request the runtime dispatches
    no_ui = child.make_task("r2")
    with pytest.raises(AttributeError, match="ui_tools"):
        no_ui.ui
    with pytest.raises(ValueError):
        task.sleep(-1)


def test_duplicate_tool_names_are_refused():
    other = tool(name="fetch")(lambda: 1)
    with pytest.raises(ValueError, match="two tools are named 'fetch'"):
        agent(input=In, output=Out, run=child_run, tools=[fetch, other])
