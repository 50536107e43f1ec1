"""``agentrt dump``: golden text and JSON per Python minor, ``--disasm``, other minors, errors."""

from __future__ import annotations

import difflib
import json
import threading

import pytest

from agentrt import _codec
from agentrt.inspection import dump_blob, dump_chain, render_text, to_json
from agentrt.lowlevel import Machine, suspend
from tests.cli.helpers import cli
from tests.inspect import agents
from tests.inspect.golden_tools import (
    AGENTS,
    BLOBS,
    GOLDEN,
    HERE_MINOR,
    REPO,
    blob_path,
    dump_args,
    golden_dir,
    normalize,
    relative,
    run_cli,
)

REGENERATE = "regenerate with: PYTHONPATH=. python -m tests.inspect.make_golden (on each Python)"


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("AGENTRT_BLOB_KEY", raising=False)


def _compare(got: str, golden_file) -> None:
    if not golden_file.exists():
        pytest.fail(f"no golden file {relative(golden_file)}; {REGENERATE}")
    want = golden_file.read_text()
    if got != want:
        delta = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "now"))
        pytest.fail(f"dump differs from {relative(golden_file)} ({REGENERATE}):\n{delta}")


@pytest.mark.parametrize("name", BLOBS)
def test_golden_text(name):
    code, out, err = run_cli(*dump_args(name))
    assert code == 0, err
    _compare(normalize(out), golden_dir() / f"{name}.txt")


@pytest.mark.parametrize("name", BLOBS)
def test_golden_json(name):
    code, out, err = run_cli(*dump_args(name, "--json"))
    assert code == 0, err
    _compare(normalize(out), golden_dir() / f"{name}.json")
    data = json.loads(out)
    assert set(data) == {
        "schema",
        "source",
        "header",
        "frames",
        "frames_error",
        "pending",
        "pending_summary",
        "value",
    }
    assert data["header"]["python"] == HERE_MINOR


def test_nested_dump_shows_what_the_issue_asks_for():
    """Function, file:line with context, locals with sharing and cycles, stack roles, exception, request."""
    text = run_cli(*dump_args("nested"))[1]
    assert "frame 0 (outermost): coroutine tests.inspect.agents.nested" in text
    assert "frame 1 (innermost): coroutine tests.inspect.agents.lookup" in text
    assert "agents.py:54, suspended at an await" in text
    assert "  -->" in text and 'result = record("got", item, await lookup(item, notes))' in text
    assert "<same object as locals['shared']>" in text and "<cycle: locals['state']>" in text
    assert "exit of the 'with' block at line 50 (bound __exit__)" in text
    assert "iterator of the 'for' loop at line 51" in text and "at index 2, 1 left" in text
    assert "argument 1 of the call record(...) at line 54: 'b'" in text
    assert "exception being handled: KeyError('b')" in text
    assert "pending request: ('lookup', 'b')" in text
    data = json.loads(run_cli(*dump_args("nested", "--json"))[1])
    outer, inner = data["frames"]
    roles = [e["role"] for e in outer["stack"]]
    assert roles[:2] == ["with_exit", "for_iterator"] and roles[-1] == "awaited"
    assert "call_argument" in roles and outer["stack"][1]["iterator"] == {"index": 2, "remaining": 1}
    assert inner["exception"]["type"] == "KeyError" and inner["awaiting"] == "pending request"
    assert data["pending"]["repr"] == "('lookup', 'b')"


def test_disasm_marks_the_suspended_instruction():
    code, out, _ = run_cli(*dump_args("nested", "--disasm"))
    assert code == 0
    marked = [line for line in out.splitlines() if "-->" in line and "YIELD_VALUE" in line]
    assert len(marked) == 2, out  # one per frame of the chain
    data = json.loads(run_cli(*dump_args("nested", "--json", "--disasm"))[1])
    for frame in data["frames"]:
        current = [i for i in frame["disasm"] if i["current"]]
        assert [i["opname"] for i in current] == ["YIELD_VALUE"]
        assert current[0]["offset_bytes"] == frame["site"]["yield_offset_bytes"]


@pytest.mark.parametrize(
    "minor", sorted(p.name for p in GOLDEN.iterdir() if p.is_dir() and p.name != HERE_MINOR)
)
def test_blob_of_another_python_shows_header_and_why(minor):
    code, out, err = run_cli(
        "dump", relative(blob_path("nested", minor)), "--allow-module", AGENTS, "--allow-unsigned"
    )
    assert code == 3 and "only the header was shown" in err, err
    assert f"written by Python {minor}" in out and "tests.inspect.agents:nested" in out
    assert (
        f"frames cannot be shown: blob was written by Python {minor} and this is Python {HERE_MINOR}" in out
    )
    data = json.loads(run_cli("dump", relative(blob_path("nested", minor)), "--json", "--allow-unsigned")[1])
    assert data["frames"] is None and data["header"]["python"] == minor and "IncompatibleBlob" not in out


def test_dump_of_a_live_machine_holding_a_lock():
    async def holds_lock():
        lock = threading.Lock()
        await suspend("waiting")
        return lock.locked()

    m = Machine(holds_lock)
    m.step()
    text = normalize(render_text(dump_chain(m._coro)))
    assert "agentrt dump of live Machine" in text
    assert "lock = <unlocked _thread.lock object at 0xADDR>" in text
    assert "pending request: 'waiting'" in text
    m.discard()


def test_dump_blob_api_and_json_are_consistent():
    m = Machine(agents.held, 3)
    m.step()
    m.step(1)
    dump = dump_blob(m.get())
    m.discard()
    data = to_json(dump)
    assert [f["function"] for f in data["frames"]] == ["held", "ticks", "numbers"]
    assert [f["in_chain"] for f in data["frames"]] == [True, True, False]
    assert data["frames"][2]["held_by"] == "frame 0 locals['gen']"
    assert data["frames"][0]["stack"][1]["value"]["repr"] == "<next step of async generator ticks → frame 1>"


# --------------------------------------------------------------------------- errors


def _one_line_error(code: int, out: str, err: str, *, expect: int = 2) -> str:
    """One line on stderr, no traceback, and the status of the one table: 2 for an unknown run or
    file or a wrong argument, 3 for store trouble (a corrupt blob)."""
    assert code == expect, (code, out, err)
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentrt: error: "), err
    return lines[0]


def test_error_unknown_run_id(tmp_path):
    from agentrt.stores import SqliteStore

    SqliteStore(tmp_path / "s.db").close()  # dump reads a store, it never creates one
    line = _one_line_error(*run_cli("dump", "no-such-run", "--store", str(tmp_path / "s.db")))
    assert "no run 'no-such-run'" in line and "agentrt runs" in line


def test_error_missing_file():
    line = _one_line_error(*run_cli("dump", "missing/nested.blob"))
    assert "cannot read blob file 'missing/nested.blob'" in line


def test_error_a_directory(tmp_path):
    line = _one_line_error(*run_cli("dump", str(tmp_path)))
    assert "cannot read blob file" in line and "Is a directory" in line


def test_error_unreadable_file(tmp_path):
    path = tmp_path / "locked.blob"
    path.write_bytes(blob_path("nested").read_bytes())
    path.chmod(0)
    try:
        with open(path, "rb"):
            pytest.skip("running as a user that can read any file")
    except PermissionError:
        pass
    try:
        line = _one_line_error(*run_cli("dump", str(path)))
    finally:
        path.chmod(0o644)
    assert "cannot read blob file" in line and "Permission denied" in line


def test_error_corrupt_blob(tmp_path):
    blob = bytearray(blob_path("nested").read_bytes())
    blob[-5] ^= 0xFF
    path = tmp_path / "corrupt.blob"
    path.write_bytes(bytes(blob))
    line = _one_line_error(*run_cli("dump", str(path), "--allow-module", AGENTS), expect=3)
    assert "CorruptBlob" in line and "digest mismatch" in line
    (tmp_path / "text.blob").write_text("hello, this is a text file and not a blob at all, as you can see")
    line = _one_line_error(*run_cli("dump", str(tmp_path / "text.blob")), expect=3)
    assert "CorruptBlob" in line and "not an agentrt blob" in line


def test_error_seq_with_a_file():
    line = _one_line_error(*run_cli(*dump_args("nested", "--seq", "2")))
    assert "--seq" in line


def test_errors_through_the_real_command(tmp_path):
    """As a user runs it: one line on stderr, exit status 3, no traceback; a module not imported is named."""
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    corrupt = tmp_path / "c.blob"
    corrupt.write_bytes(blob_path("nested").read_bytes()[:-3])
    # in a process of its own, as a user runs it: there the blob's module is not imported
    proc = cli("dump", str(corrupt), env=env, cwd=tmp_path, subprocess=True)
    _one_line_error(proc.returncode, proc.stdout, proc.stderr, expect=3)
    proc = cli("dump", str(blob_path("nested")), "--allow-unsigned", env=env, cwd=tmp_path, subprocess=True)
    # the header and the hint on stdout; the failure in the status and one line on stderr
    assert proc.returncode == 3 and proc.stderr.count("\n") == 1, proc.stderr
    assert "module 'tests.inspect.agents' is not imported" in proc.stdout
    assert "--allow-module tests.inspect.agents" in proc.stdout


def test_value_blob_renders_shared_and_cyclic_values():
    shared = [1, 2]
    graph = {"a": shared, "b": shared}
    graph["me"] = graph
    dump = dump_blob(_codec.dumps(graph), allow_unsigned=True)
    assert dump.value is not None
    assert dump.value.repr == "{'a': [1, 2], 'b': <same object as value['a']>, 'me': <cycle: value>}"


def test_empty_tuples_are_not_reported_as_shared_references():
    """``()`` is one object in CPython: two empty tuples are not "the same object" to a reader."""
    from agentrt.inspection._values import ValueRenderer

    renderer = ValueRenderer(lambda obj, where: "frame", lambda obj: False)
    first = renderer.view({"a": (), "b": frozenset()}, "frame 0", "locals['x']")
    second = renderer.view(((), frozenset(), [1]), "frame 0", "locals['y']")
    assert first.repr == "{'a': (), 'b': frozenset()}"
    assert second.repr == "((), frozenset(), [1])"
