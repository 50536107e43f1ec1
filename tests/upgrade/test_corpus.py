"""The edit corpus of issue 15: an agent suspended at ``task.ui.ask`` under code v1, the module
rewritten to v2, then ``agentrt upgrade --dry-run``, ``agentrt upgrade`` and ``agentrt resume`` --
each as a fresh process runs it (tests/cli/inprocess.py: the agent's modules imported afresh
from the edited files), as a deploy would run them."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path
from typing import Any

import attrs
import pytest

from tests.cli.helpers import cli, cli_env

HEADER = """
import attrs
import agentrt
from agentrt import Task, agent, ui_tools


@attrs.frozen
class In:
    name: str


@attrs.frozen
class Out:
    text: str


def helper(x):
    return x.upper()
"""
FOOTER = """

bot = agent(input=In, output=Out, tools=[*ui_tools], run=run, name="bot")
"""
V1 = """
async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    answer = await task.ui.ask({"q": "color?"})
    return Out(f"{greeting}: {helper(answer)}")
"""


@attrs.frozen
class Case:
    v2: str
    verdict: str
    output: str | None  # the result after the upgrade and the reply; None: the run cannot resume
    same_as_fresh_v2: bool = False  # the resumed run ends exactly as a run of v2 from the start would
    header: str = HEADER


CASES = {
    "comments_and_formatting": Case(
        """
# a comment above the function


async def run(input: In, task: Task) -> Out:
    # greet first
    greeting = ("hello "
                + input.name)   # trailing comment
    answer = await task.ui.ask(
        {"q": "color?"},
    )

    return Out(f"{greeting}: {helper(answer)}")
""",
        "unchanged",
        "hello bob: BLUE",
        same_as_fresh_v2=True,
    ),
    "unrelated_function": Case(
        V1,
        "unchanged",
        "hello bob: BLUE!",
        same_as_fresh_v2=True,
        header=HEADER.replace("return x.upper()", 'return x.upper() + "!"'),
    ),
    "statement_added_after_the_await": Case(
        """
async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    answer = await task.ui.ask({"q": "color?"})
    answer = answer + "?"
    return Out(f"{greeting}: {helper(answer)}")
""",
        "migrates",
        "hello bob: BLUE?",
        same_as_fresh_v2=True,
    ),
    "statement_added_before_the_await": Case(
        """
async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    greeting = greeting.strip()
    answer = await task.ui.ask({"q": "color?"})
    return Out(f"{greeting}: {helper(answer)}")
""",
        "migrates",
        "hello bob: BLUE",  # the frame is already past the new statement: it does not run
        same_as_fresh_v2=True,
    ),
    "local_added_after_the_await": Case(
        """
async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    answer = await task.ui.ask({"q": "color?"})
    size = len(answer)
    return Out(f"{greeting}: {helper(answer)} ({size})")
""",
        "migrates",
        "hello bob: BLUE (4)",
        same_as_fresh_v2=True,
    ),
    "local_added_before_the_await": Case(
        """
async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    times = 2
    answer = await task.ui.ask({"q": "color?"})
    return Out(f"{greeting}: {helper(answer) * times}")
""",
        "needs-migration",
        None,
    ),
    "renamed_local": Case(
        """
async def run(input: In, task: Task) -> Out:
    salutation = "hello " + input.name
    answer = await task.ui.ask({"q": "color?"})
    return Out(f"{salutation}: {helper(answer)}")
""",
        "needs-migration",
        None,
    ),
    "removed_await": Case(
        """
async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    answer = "green"
    return Out(f"{greeting}: {helper(answer)}")
""",
        "blocked",
        None,
    ),
    "loop_added_around_the_await": Case(
        """
async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    for attempt in range(3):
        answer = await task.ui.ask({"q": "color?", "attempt": attempt})
        if answer:
            break
    return Out(f"{greeting}: {helper(answer)}")
""",
        "blocked",
        None,
    ),
    "value_stack_shape_changed": Case(
        """
async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    answer = greeting[:0] + await task.ui.ask({"q": "color?"})
    return Out(f"{greeting}: {helper(answer)}")
""",
        "blocked",
        None,
    ),
}


def _write(path: Path, header: str, body: str) -> None:
    path.write_text(textwrap.dedent(header) + body + FOOTER)


def _json(*args: str, cwd: Path, env: dict[str, str]) -> tuple[int, dict[str, Any], str]:
    proc = cli(*args, "--json", cwd=cwd, env=env)
    return proc.returncode, (json.loads(proc.stdout) if proc.stdout.strip() else {}), proc.stderr


def _suspend_v1(tmp_path: Path, name: str) -> tuple[Path, str, dict[str, str], str]:
    """v1 written and a run suspended at its ask; returns (module file, store, env, spec)."""
    module = tmp_path / f"{name}.py"
    _write(module, HEADER, V1)
    env = cli_env(PYTHONDONTWRITEBYTECODE="1")
    store = str(tmp_path / "s.db")
    spec = f"{name}:bot"
    code, obj, err = _json("run", spec, "--input", '{"name": "bob"}', "--store", store, "--run-id", "r1",
                           cwd=tmp_path, env=env)  # fmt: skip
    assert code == 0 and obj["status"] == "waiting", err
    return module, store, env, spec


def _checkpoint(store: str) -> tuple[int, bytes]:
    with sqlite3.connect(store) as conn:
        row = conn.execute("SELECT seq, blob FROM checkpoints WHERE run_id='r1' ORDER BY seq DESC").fetchone()
    conn.close()
    return row[0], bytes(row[1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_edit_corpus(tmp_path, name):
    case = CASES[name]
    module, store, env, spec = _suspend_v1(tmp_path, f"upg_{name}")
    before = _checkpoint(store)
    _write(module, case.header, case.v2)

    code, checked, err = _json("check", "--against", store, cwd=tmp_path, env=env)  # imports nothing
    assert [run["verdict"] for run in checked["runs"]] == [case.verdict], (checked, err)

    code, report, err = _json("upgrade", "--dry-run", "--store", store, cwd=tmp_path, env=env)
    assert [run["run_id"] for run in report["runs"]] == ["r1"], err
    run = report["runs"][0]
    assert run["verdict"] == case.verdict, run
    assert code == (0 if case.verdict in ("unchanged", "migrates") else 1)
    frame = next(f for f in run["frames"] if f["function"].endswith(":run"))
    assert frame["verdict"] == case.verdict and frame["reason"], frame
    assert frame["site"].startswith("await #1") and "task.ui.ask" in frame["site"], frame
    assert _checkpoint(store) == before  # a dry run changes nothing

    code, applied, err = _json("upgrade", "--store", store, cwd=tmp_path, env=env)
    assert applied["runs"][0]["verdict"] == case.verdict, err
    if case.verdict == "migrates":
        assert applied["runs"][0]["applied"] is True
        seq, blob = _checkpoint(store)
        assert seq == before[0] and blob != before[1]  # the same suspension, moved to the new code
        code, shown, _ = _json("show", "r1", "--store", store, cwd=tmp_path, env=env)
        assert shown["status"] == "waiting"
        upgrade_events = [e for e in shown["events"] if e["kind"] == "upgrade"]
        assert upgrade_events and upgrade_events[0]["data"]["frames"][0]["verdict"] == "migrates"
        dumped = cli("dump", "r1", "--store", store, cwd=tmp_path, env=env)
        assert dumped.returncode == 0 and "task.ui.ask" in dumped.stdout, dumped.stderr
    else:
        assert _checkpoint(store) == before

    code, obj, err = _json("resume", "r1", "--reply", '"blue"', "--store", store, cwd=tmp_path, env=env)
    if case.output is None:
        assert code == 3 and "changed since the checkpoint" in err, (code, obj, err)
        return
    assert code == 0 and obj["status"] == "completed", err
    assert obj["output"] == {"text": case.output}
    if case.same_as_fresh_v2:
        _json(
            "run",
            spec,
            "--input",
            '{"name": "bob"}',
            "--store",
            store,
            "--run-id",
            "fresh",
            cwd=tmp_path,
            env=env,
        )
        code, fresh, err = _json(
            "resume", "fresh", "--reply", '"blue"', "--store", store, cwd=tmp_path, env=env
        )
        assert fresh["output"] == obj["output"], err


MIGRATION = """

@agentrt.migrate(run, from_digest={digest!r}, site={site})
def rename_greeting(old_locals):
    return {body}
"""


@pytest.mark.parametrize(
    ("name", "body", "output"),
    [
        ("renamed_local", '{"salutation": old_locals["greeting"]}', "hello bob: BLUE"),
        ("local_added_before_the_await", '{"times": 3}', "hello bob: BLUEBLUEBLUE"),
    ],
)
def test_user_migration_moves_what_needs_one(tmp_path, name, body, output):
    case = CASES[name]
    module, store, env, _ = _suspend_v1(tmp_path, f"upg_m_{name}")
    _write(module, case.header, case.v2)
    _, report, _ = _json("upgrade", "--dry-run", "--store", store, cwd=tmp_path, env=env)
    frame = report["runs"][0]["frames"][0]
    assert frame["verdict"] == "needs-migration" and "@agentrt.migrate(run" in frame["reason"]

    _write(module, case.header, case.v2 + MIGRATION.format(digest=frame["digest"][:12], site=1, body=body))
    code, report, err = _json("upgrade", "--dry-run", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and report["runs"][0]["verdict"] == "migrates", (report, err)
    assert "registered migration" in report["runs"][0]["frames"][0]["reason"]
    code, applied, err = _json("upgrade", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and applied["runs"][0]["applied"], err
    code, obj, err = _json("resume", "r1", "--reply", '"blue"', "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and obj["output"] == {"text": output}, err


def test_a_migration_that_misses_a_live_local_is_refused(tmp_path):
    case = CASES["renamed_local"]
    module, store, env, _ = _suspend_v1(tmp_path, "upg_bad_migration")
    before = _checkpoint(store)
    digest = _digest_of_run(tmp_path, module, case, store, env)
    _write(module, case.header, case.v2 + MIGRATION.format(digest=digest, site=1, body="{}"))
    code, report, err = _json("upgrade", "--store", store, cwd=tmp_path, env=env)
    run = report["runs"][0]
    assert code == 1 and run["verdict"] == "blocked" and not run["applied"], err
    assert "must return salutation" in run["reason"]
    assert _checkpoint(store) == before


def test_a_migration_for_another_site_or_digest_does_not_apply(tmp_path):
    case = CASES["renamed_local"]
    module, store, env, _ = _suspend_v1(tmp_path, "upg_other_site")
    digest = _digest_of_run(tmp_path, module, case, store, env)
    body = '{"salutation": "x"}'
    _write(module, case.header, case.v2 + MIGRATION.format(digest=digest, site=2, body=body)
           + MIGRATION.format(digest="0123456789ab", site=1, body=body))  # fmt: skip
    _, report, _ = _json("upgrade", "--dry-run", "--store", store, cwd=tmp_path, env=env)
    assert report["runs"][0]["verdict"] == "needs-migration"


def _digest_of_run(tmp_path: Path, module: Path, case: Case, store: str, env: dict[str, str]) -> str:
    _write(module, case.header, case.v2)
    _, report, _ = _json("upgrade", "--dry-run", "--store", store, cwd=tmp_path, env=env)
    return str(report["runs"][0]["frames"][0]["digest"])


NESTED_V1 = """
async def ask_color(task, prompt):
    question = {"q": prompt}
    answer = await task.ui.ask(question)
    return answer.strip()


async def unused_helper(task):
    return await task.ui.ask({"q": "never"})


async def run(input: In, task: Task) -> Out:
    greeting = "hello " + input.name
    color = await ask_color(task, "color?")
    return Out(f"{greeting}: {helper(color)}")
"""


@pytest.mark.parametrize(
    ("edit", "verdicts", "output"),
    [
        # a coroutine the run is not suspended in: never looked at
        (('return await task.ui.ask({"q": "never"})', "return 42"), {}, "hello bob: BLUE"),
        # the helper it is suspended in, below the agent's own frame
        (
            ("return answer.strip()", "return answer.strip() + '+'"),
            {"ask_color": "migrates"},
            "hello bob: BLUE+",
        ),
        # the agent's frame, above the helper
        (('{helper(color)}")', '{helper(color)}!")'), {"run": "migrates"}, "hello bob: BLUE!"),
        # the helper's local renamed: only that frame needs a migration
        (("question", "request"), {"ask_color": "needs-migration"}, None),
    ],
    ids=["unrelated_coroutine", "helper_on_the_chain", "agent_frame_above", "helper_local_renamed"],
)
def test_nested_chain_judged_per_frame(tmp_path, edit, verdicts, output):
    name = f"upg_nested_{abs(hash(edit)) % 10**6}"
    module = tmp_path / f"{name}.py"
    _write(module, HEADER, NESTED_V1)
    env = cli_env(PYTHONDONTWRITEBYTECODE="1")
    store = str(tmp_path / "s.db")
    code, obj, err = _json("run", f"{name}:bot", "--input", '{"name": "bob"}', "--store", store,
                           "--run-id", "r1", cwd=tmp_path, env=env)  # fmt: skip
    assert code == 0 and obj["status"] == "waiting", err
    _write(module, HEADER, NESTED_V1.replace(*edit))
    code, report, err = _json("upgrade", "--store", store, cwd=tmp_path, env=env)
    run = report["runs"][0]
    changed = {
        f["function"].rsplit(":", 1)[1]: f["verdict"] for f in run["frames"] if f["verdict"] != "unchanged"
    }
    assert changed == verdicts, run
    code, obj, err = _json("resume", "r1", "--reply", '" blue "', "--store", store, cwd=tmp_path, env=env)
    if output is None:
        assert code == 3 and "ask_color" in err, err
    else:
        assert code == 0 and obj["output"] == {"text": output}, err


def test_check_against_reads_the_new_code_without_running_it(tmp_path):
    case = CASES["local_added_after_the_await"]
    module, store, env, _ = _suspend_v1(tmp_path, "upg_check_only")
    marker = tmp_path / "imported.marker"
    _write(module, case.header + f"\nopen({str(marker)!r}, 'w').close()\n", case.v2)
    code, checked, err = _json("check", "--against", store, cwd=tmp_path, env=env)
    assert code == 0 and checked["runs"][0]["verdict"] == "migrates", err
    assert not marker.exists()
    text = cli("check", "--against", store, cwd=tmp_path, env=env)
    assert "run r1 at checkpoint 1: migrates" in text.stdout
    assert cli("check", cwd=tmp_path, env=env).returncode == 2  # neither a target nor --against
