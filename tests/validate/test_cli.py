"""`agentrt check` end to end: output, exit codes, profiles, JSON and module resolution as
`python -m agentrt check` gives them (tests/cli/inprocess.py); argument handling through
`agentrt.cli.main` itself."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentrt.cli import main
from tests.cli.helpers import cli

ROOT = Path(__file__).resolve().parents[2]
HAZARDS = Path(__file__).parent / "hazards"

LIVE_MATCH = "import re\n\nasync def agent(s, x):\n    m = re.match('a', s)\n    await x\n    return m\n"
PORTABILITY_ONLY = "async def numbers(x):\n    yield await x\n"


def check(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return cli("check", *args, cwd=cwd)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "error": tmp_path / "error_agent.py",
        "portable": tmp_path / "portable_agent.py",
        "clean": tmp_path / "clean_agent.py",
        "broken": tmp_path / "broken_agent.py",
    }
    paths["error"].write_text(LIVE_MATCH)
    paths["portable"].write_text(PORTABILITY_ONLY)
    paths["clean"].write_text("async def agent(x):\n    return await x\n")
    paths["broken"].write_text("async def agent(x:\n    return 1\n")
    return paths


def test_text_output_and_exit_1_on_error(files: dict[str, Path]) -> None:
    result = check(str(files["error"]))
    assert result.returncode == 1, result.stderr
    first, summary = result.stdout.strip().splitlines()
    assert first.startswith(f"{files['error']}:4:5: AR103 error: variable 'm' (re.Match from re.match()) ")
    assert "is live across the await at line 5 in agent()" in first and "fix:" in first
    assert summary == "agentrt check: 1 finding in 1 file: 1 error (profile default)"


def test_clean_file_exits_0(files: dict[str, Path]) -> None:
    result = check(str(files["clean"]))
    assert (result.returncode, result.stdout.strip()) == (
        0,
        "agentrt check: no findings in 1 file (profile default)",
    )


@pytest.mark.parametrize(("profile", "status"), [("default", 0), ("portable", 1)])
def test_profile_decides_about_portability(files: dict[str, Path], profile: str, status: int) -> None:
    result = check(str(files["portable"]), "--profile", profile)
    assert result.returncode == status, result.stdout + result.stderr
    assert "AR107 portability" in result.stdout


def test_json_shape(files: dict[str, Path]) -> None:
    result = check(str(files["error"]), "--json")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert set(document) == {"findings", "summary"}
    [finding] = document["findings"]
    assert finding == {
        "code": "AR103",
        "severity": "error",
        "path": str(files["error"]),
        "line": 4,
        "col": 5,
        "await_line": 5,
        "function": "agent",
        "variable": "m",
        "message": finding["message"],
    }
    assert document["summary"] == {
        "files": 1,
        "findings": 1,
        "errors": 1,
        "portability": 0,
        "counted_as_errors": 1,
        "profile": "default",
        "exit_status": 1,
    }


def test_json_portable_profile(files: dict[str, Path]) -> None:
    result = check(str(files["portable"]), "--json", "--profile", "portable")
    document = json.loads(result.stdout)
    assert result.returncode == 1
    assert [f["code"] for f in document["findings"]] == ["AR107"]
    assert document["findings"][0]["await_line"] is None
    assert document["summary"]["counted_as_errors"] == 1


def test_syntax_error_exits_2(files: dict[str, Path]) -> None:
    result = check(str(files["broken"]))
    assert result.returncode == 2
    assert result.stderr.startswith(f"{files['broken']}:1: syntax error")


def test_missing_path_exits_2(tmp_path: Path) -> None:
    result = check(str(tmp_path / "nope.py"))
    assert result.returncode == 2
    assert "no such file, directory or module" in result.stderr


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["check"], ["check", "x.py", "--profile", "strict"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
    capsys.readouterr()


def test_directory(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    files["broken"].unlink()
    assert main(["check", str(files["error"].parent)]) == 1
    assert "3 files" in capsys.readouterr().out.strip().splitlines()[-1]


def test_directory_with_a_broken_file_exits_2(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(files["error"].parent)]) == 2
    captured = capsys.readouterr()
    assert f"{files['broken']}:1: syntax error" in captured.err
    assert "AR103 error" in captured.out  # the other files are still checked


def test_module_is_resolved_without_importing_it(tmp_path: Path) -> None:
    package = tmp_path / "sideeffects"
    package.mkdir()
    marker = tmp_path / "imported.txt"
    (package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('package ran')\n")
    (package / "agents.py").write_text(f"open({str(marker)!r}, 'w').write('module ran')\n" + LIVE_MATCH)
    result = check("sideeffects.agents", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "AR103 error" in result.stdout
    assert not marker.exists(), "checking a module must not import it"
    assert check("sideeffects.missing", cwd=tmp_path).returncode == 2


def test_package_module_is_its_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "agents_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("raise SystemExit('imported!')\n")
    (package / "one.py").write_text(LIVE_MATCH)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "agents_pkg"]) == 1


def test_hazard_corpus_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(HAZARDS / "ar112_resources.py"), "--json"]) == 1
    codes = {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert codes == {"AR112"}


def test_help_lists_check(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "check" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = capsys.readouterr().out
    assert "--profile" in text and "--json" in text
