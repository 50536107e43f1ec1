"""Issue 25 item 7: ids from a gate decision or a model's tool call are plain names, every team file
write stays inside its directory, and YAML is loaded with alias and size limits."""

from __future__ import annotations

import copy
import os
import time
from pathlib import Path

import pytest

from agentrt.teams import ContractError, GateBlocked, _yaml, apply_decision
from agentrt.teams.names import check_name, confined, is_plain_name
from agentrt.teams.receipts import receipt_path
from agentrt.teams.registry import Registry
from agentrt.teams.tools import run_dir, teams_write_bundles
from tests.teams.test_gate import decide, proposal

ESCAPE = "x/../../../../../ESCAPED"


@pytest.mark.parametrize("bad", [ESCAPE, "..", ".", "../x", "a/b", "a\\b", "", ".hidden", "-rf", "a" * 101,
                                 "x\x00y", "é/"])  # fmt: skip
def test_plain_names_refuse_separators_dots_and_options(bad: str) -> None:
    assert not is_plain_name(bad)
    with pytest.raises(ContractError, match="not a plain name"):
        check_name(bad, "somewhere", "task_id")


def test_plain_names_accept_ordinary_ids() -> None:
    for good in ("L1", "backend-dev", "task_3.v2", "A"):
        assert check_name(good, "w", "k") == good


@pytest.mark.parametrize("key", ["task_id", "specialist"])
def test_the_gate_refuses_a_restructure_with_a_path_in_a_lane(key: str) -> None:
    p = proposal()
    lanes = copy.deepcopy(p["lanes"])
    lanes[0][key] = ESCAPE
    with pytest.raises(GateBlocked, match=r"not a plain name|not a role of the team"):
        apply_decision(p, decide(p, "restructure", lanes=lanes))


def test_the_gate_refuses_a_path_as_a_new_specialist() -> None:
    p = proposal()
    with pytest.raises(GateBlocked, match="not a plain name"):
        apply_decision(p, decide(p, "add", specialist="../../evil", reason="because"))
    with pytest.raises(GateBlocked, match="not a plain name"):
        apply_decision(p, decide(p, "substitute", old="r0", new="../evil", reason="because"))


def test_write_bundles_refuses_a_stem_or_run_that_leaves_the_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with pytest.raises(ContractError, match="not a plain name"):
        teams_write_bundles(str(project), "run1", {f"dev-{ESCAPE}": "text"})
    with pytest.raises(ContractError, match="not a plain name"):
        teams_write_bundles(str(project), "../../run", {"dev-L1": "text"})
    assert not list(tmp_path.rglob("ESCAPED*")) and not (tmp_path / "run").exists()
    [written] = teams_write_bundles(str(project), "run1", {"dev-L1": "text"})
    assert Path(written).is_relative_to(project.resolve())


def test_every_path_builder_refuses_an_escaping_name(tmp_path: Path) -> None:
    with pytest.raises(ContractError):
        receipt_path(tmp_path, "run1", "dev", ESCAPE)
    with pytest.raises(ContractError):
        run_dir(tmp_path, "..")
    with pytest.raises(ContractError):
        Registry(tmp_path).path("../../agents")


def test_a_symlinked_directory_cannot_carry_a_write_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(ContractError, match="outside"):
        confined(root, "link", "file.md")
    assert confined(root, "plain", "file.md") == root.resolve() / "plain" / "file.md"


def test_a_billion_laughs_spec_is_refused_quickly() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{', '.join('*' + prev for _ in range(9))}]")
    start = time.monotonic()
    with pytest.raises(ContractError, match=f"expands to more than {_yaml.MAX_EXPANDED_NODES} values"):
        _yaml.load("\n".join(lines), "spec.md")
    many = "base: &b 1\nitems: [" + ", ".join(["*b"] * (_yaml.MAX_ALIASES + 1)) + "]\n"
    with pytest.raises(ContractError, match=f"more than {_yaml.MAX_ALIASES} aliases"):
        _yaml.load(many, "spec.md")
    with pytest.raises(ContractError, match="recursive alias"):
        _yaml.load("a: &a [1, *a]\n", "spec.md")
    assert time.monotonic() - start < 2


def test_yaml_size_limit_and_ordinary_aliases(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="over the limit"):
        _yaml.load("a: " + "x" * (_yaml.MAX_YAML_CHARS + 1), "spec.md")
    assert _yaml.load("base: &b {x: 1}\nother: *b\n", "spec.md") == {"base": {"x": 1}, "other": {"x": 1}}
    with pytest.raises(ContractError, match="not valid YAML"):
        _yaml.load("!!python/object/apply:os.system ['true']", "spec.md")
    assert os.environ  # nothing ran
