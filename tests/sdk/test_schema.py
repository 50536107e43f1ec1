"""Input/output schemas: validated conversion and JSON Schema."""

from __future__ import annotations

import datetime as dt
import enum
from typing import Literal

import attrs
import pytest

import agentrt
from agentrt import SchemaError, Task, agent
from agentrt._sdk.schema import json_schema, structure, to_jsonable


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@attrs.frozen
class Label:
    name: str
    color: Color = Color.RED


@attrs.frozen
class Input:
    repo: str = attrs.field(metadata={"description": "owner/name"})
    issue_number: int
    labels: list[Label] = attrs.field(factory=list)
    since: dt.date | None = None
    mode: Literal["fast", "full"] = "fast"
    weights: dict[str, float] = attrs.field(factory=dict)
    pair: tuple[int, str] | None = None


@attrs.frozen
class Output:
    summary: str


async def run(input: Input, task: Task) -> Output:
    return Output(input.repo)


issue_agent = agent(input=Input, output=Output, run=run, name="issue")


def test_converts_nested_values():
    value = issue_agent.convert_input(
        {
            "repo": "a/b",
            "issue_number": 3,
            "labels": [{"name": "bug", "color": "blue"}],
            "since": "2024-01-31",
            "mode": "full",
            "weights": {"x": 1},
            "pair": [1, "z"],
        }
    )
    assert value == Input(
        "a/b", 3, [Label("bug", Color.BLUE)], dt.date(2024, 1, 31), "full", {"x": 1.0}, (1, "z")
    )
    assert issue_agent.convert_input(value) is value


@pytest.mark.parametrize(
    ("data", "path", "words"),
    [
        ({"issue_number": 1}, "input.repo", "missing required field"),
        ({"repo": 1, "issue_number": 1}, "input.repo", "expected string, got integer 1"),
        ({"repo": "a", "issue_number": "3"}, "input.issue_number", "expected integer"),
        ({"repo": "a", "issue_number": True}, "input.issue_number", "expected integer, got boolean"),
        (
            {"repo": "a", "issue_number": 1, "labels": [{"name": "x"}, {"name": 2}]},
            "input.labels[1].name",
            "string",
        ),
        (
            {"repo": "a", "issue_number": 1, "labels": [{"name": "x", "color": "green"}]},
            "input.labels[0].color",
            "one of",
        ),
        ({"repo": "a", "issue_number": 1, "mode": "slow"}, "input.mode", "one of ['fast', 'full']"),
        ({"repo": "a", "issue_number": 1, "extra": 1}, "input.extra", "unknown field"),
        ({"repo": "a", "issue_number": 1, "since": "yesterday"}, "input.since", "ISO 8601"),
        ({"repo": "a", "issue_number": 1, "pair": [1]}, "input.pair", "2 items"),
        ([1, 2], "input", "expected object (Input)"),
    ],
)
def test_errors_name_the_field(data, path, words):
    with pytest.raises(SchemaError) as info:
        issue_agent.convert_input(data)
    assert info.value.path == path
    assert words in str(info.value)
    assert "issue" in str(info.value)  # names the agent
    assert isinstance(info.value, ValueError) and isinstance(info.value, agentrt.AgentrtError)


def test_input_json_schema_has_an_object_root():
    schema = issue_agent.input_json_schema()
    assert schema["type"] == "object"
    assert schema["required"] == ["repo", "issue_number"]
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert props["repo"] == {"type": "string", "description": "owner/name"}
    assert props["labels"]["items"]["properties"]["color"]["enum"] == ["red", "blue"]
    assert props["since"]["anyOf"] == [{"type": "string", "format": "date"}, {"type": "null"}]
    assert props["mode"]["enum"] == ["fast", "full"] and props["mode"]["default"] == "fast"
    assert props["weights"] == {"type": "object", "additionalProperties": {"type": "number"}, "default": {}}
    assert issue_agent.output_json_schema()["properties"] == {"summary": {"type": "string"}}


def test_non_object_roots_are_rejected():
    with pytest.raises(TypeError, match="object at the root"):
        agent(input=dict, output=Output, run=run)
    with pytest.raises(TypeError, match="async def"):
        agent(input=Input, output=Output, run=lambda i, t: None)  # type: ignore[arg-type]


def test_schema_classes_become_serializable():
    from agentrt._codec._serializable import is_serializable

    assert is_serializable(Input) and is_serializable(Label) and is_serializable(Output)


def test_to_jsonable_round_trips_through_structure():
    value = Input("a/b", 1, [Label("x")], dt.date(2020, 2, 2), pair=(2, "y"))
    data = to_jsonable(value)
    assert data["since"] == "2020-02-02" and data["labels"] == [{"name": "x", "color": "red"}]
    assert structure(data, Input) == value


def test_unions_and_any():
    assert structure(3, int | str) == 3
    assert structure("x", int | str) == "x"
    with pytest.raises(SchemaError, match=r"expected int \| str"):
        structure(1.5, int | str)
    assert json_schema(int | None) == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert structure({"a": [1]}, object) == {"a": [1]}
