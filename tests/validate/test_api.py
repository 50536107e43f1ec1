"""The Python API: check_source / check_path, Finding, Profile, ignore comments."""

from __future__ import annotations

import textwrap
from pathlib import Path

import attrs
import pytest

from agentrt.validate import ERROR, PORTABILITY, Finding, Profile, check_path, check_source

LIVE_MATCH = textwrap.dedent(
    """\
    import re

    async def agent(s, x):
        m = re.match("a", s)
        await x
        return m
    """
)


def test_check_source_reports_a_live_match() -> None:
    [finding] = check_source(LIVE_MATCH, "agent.py")
    assert finding == Finding(
        path="agent.py",
        line=4,
        col=5,
        code="AR103",
        severity=ERROR,
        await_line=5,
        function="agent",
        variable="m",
        message=finding.message,
    )


def test_dead_value_is_never_reported() -> None:
    source = "import re\nasync def agent(s, x):\n    m = re.match('a', s)\n    print(m)\n    await x\n"
    assert check_source(source) == []


def test_nothing_is_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    source = f"open({str(marker)!r}, 'w').write('ran')\n" + LIVE_MATCH
    assert [f.code for f in check_source(source, str(tmp_path / "agent.py"))] == ["AR103"]
    assert not marker.exists()


def test_syntax_error_propagates() -> None:
    with pytest.raises(SyntaxError):
        check_source("async def broken(:\n    pass\n", "broken.py")


def test_finding_is_frozen_and_serializes() -> None:
    [finding] = check_source(LIVE_MATCH, "agent.py")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        finding.line = 1  # type: ignore[misc]
    data = finding.to_json()
    assert list(data) == [
        "code",
        "severity",
        "path",
        "line",
        "col",
        "await_line",
        "function",
        "variable",
        "message",
    ]


def test_profiles() -> None:
    error = Finding("p", 1, 1, "AR103", ERROR, 2, "f", "m", "...")
    portable = attrs.evolve(error, code="AR107", severity=PORTABILITY)
    assert Profile.default.counts_as_error(error) and not Profile.default.counts_as_error(portable)
    assert Profile.portable.counts_as_error(error) and Profile.portable.counts_as_error(portable)
    assert Profile.named("portable") is Profile.portable
    # a reopenable client: a signed blob re-creates it, an unsigned one refuses it
    client = attrs.evolve(error, code="AR112", severity=PORTABILITY)
    assert not Profile.default.keeps(client) and Profile.default.keeps(attrs.evolve(client, severity=ERROR))
    assert Profile.portable.keeps(client) and Profile.portable.counts_as_error(client)
    quiet = Profile.default.with_disabled("AR103")
    assert not quiet.counts_as_error(error) and not quiet.keeps(error)
    assert Profile.default.disabled == frozenset()  # the copy left the original alone
    with pytest.raises(ValueError, match="unknown profile"):
        Profile.named("strict")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        Profile.default.name = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("comment", "reported"),
    [
        ("# agentrt: ignore[AR103]", False),
        ("# agentrt: ignore", False),
        ("# agentrt: ignore[AR105,AR103]", False),
        ("# agentrt:ignore[ar103]", False),
        ("# agentrt: ignore[AR105]", True),
        ("# unrelated comment", True),
    ],
)
def test_ignore_comment_on_the_binding_line(comment: str, reported: bool) -> None:
    source = LIVE_MATCH.replace('m = re.match("a", s)', f'm = re.match("a", s)  {comment}')
    assert bool(check_source(source)) is reported


def test_ignore_comment_on_the_await_line() -> None:
    source = LIVE_MATCH.replace("await x", "await x  # agentrt: ignore[AR103]")
    assert check_source(source) == []


def test_ignore_in_a_string_is_not_a_comment() -> None:
    source = LIVE_MATCH.replace('m = re.match("a", s)', 'm = re.match("# agentrt: ignore", s)')
    assert [f.code for f in check_source(source)] == ["AR103"]


def test_check_path_walks_a_directory(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(LIVE_MATCH)
    (tmp_path / "pkg" / "b.py").write_text("async def fine():\n    return 1\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.py").write_text(LIVE_MATCH)
    findings = check_path(tmp_path)
    assert [(Path(f.path).name, f.code) for f in findings] == [("a.py", "AR103")]
    with pytest.raises(FileNotFoundError):
        check_path(tmp_path / "missing")


def test_class_resolved_in_a_sibling_module(tmp_path: Path) -> None:
    package = tmp_path / "proj"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(
        "from agentrt import serializable\n\n"
        "class Plain:\n    pass\n\n"
        "@serializable\nclass Marked:\n    pass\n"
    )
    (package / "agent.py").write_text(
        "from proj.models import Marked, Plain\nfrom .models import Plain as Again\n\n"
        "async def agent(x):\n"
        "    a = Plain()\n    b = Marked()\n    c = Again()\n"
        "    await x\n    return a, b, c\n"
    )
    findings = check_path(package / "agent.py")
    assert [(f.line, f.code, f.variable) for f in findings] == [(5, "AR105", "a"), (7, "AR105", "c")]


def test_agent_factory_marks_its_input_and_output_records() -> None:
    source = textwrap.dedent(
        """\
        import attrs
        from agentrt import agent

        @attrs.frozen
        class Item:
            name: str

        @attrs.frozen
        class Input:
            items: list[Item]

        @attrs.frozen
        class Output:
            n: int

        @attrs.frozen
        class Other:
            n: int

        async def run(input, task):
            item = Item("x")
            other = Other(1)
            await task.sleep(1)
            return Output(len([item, other]))

        summarize = agent(input=Input, output=Output, run=run)
        """
    )
    assert [(f.code, f.variable) for f in check_source(source)] == [("AR105", "other")]
