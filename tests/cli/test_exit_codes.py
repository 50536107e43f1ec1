"""One exit-status table for every command (README, "Exit status"), through the real command:
0 ok or waiting, 1 the run failed, 2 usage or an unknown thing, 3 store trouble; one line on
stderr for every error, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrt._cli.common import EXIT_FAILED, EXIT_HOST, EXIT_OK, EXIT_USAGE
from tests.cli.helpers import cli
from tests.cli.test_commands import ASK_AGENT

SPEC = "tests.cli.crash_agents:counter"


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, str]:
    """A store with a completed run 'done' (two checkpoints), and a file that is not a store."""
    root = tmp_path_factory.mktemp("exit")
    good = str(root / "good.db")
    done = cli(
        "run", SPEC, "--input", '{"steps": 2}', "--store", good, "--run-id", "done", "--log-format", "none"
    )
    assert done.returncode == EXIT_OK, done.stderr
    broken = root / "broken.db"
    broken.write_bytes(b"this is not a SQLite database, it is only text " * 100)
    (root / "approval.py").write_text(ASK_AGENT)
    (root / "text.blob").write_text("hello, this is a text file and not a blob at all")
    return {"good": good, "broken": str(broken), "root": str(root)}


def status_of(*args: str) -> tuple[int, str]:
    proc = cli(*args, "--log-format", "none") if args[0] in ("run", "resume") else cli(*args)
    assert "Traceback" not in proc.stderr, proc.stderr
    if proc.returncode not in (EXIT_OK, EXIT_FAILED):
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("agentrt: error: "), proc.stderr
    return proc.returncode, proc.stderr


def test_ok_and_waiting_are_0_and_a_failed_run_is_1(stores):
    good = stores["good"]
    assert status_of("run", SPEC, "--input", '{"steps": 1}', "--store", good)[0] == EXIT_OK
    approval = f"{Path(stores['root']) / 'approval.py'}:approval"
    assert status_of("run", approval, "--input", '{"amount": 3}', "--store", good)[0] == EXIT_OK  # waits
    raiser = ("run", "tests.cli.crash_agents:raiser", "--input", json.dumps({"kind": "typed"}))
    assert status_of(*raiser, "--store", good)[0] == EXIT_FAILED
    for args in (("show", "done"), ("dump", "done"), ("diff", "done", "1", "2"), ("runs",)):
        assert status_of(*args, "--store", good)[0] == EXIT_OK, args


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("show", "nope"), "no run 'nope'"),
        (("resume", "nope"), "no run 'nope'"),
        (("dump", "nope"), "no run 'nope'"),
        (("diff", "nope", "1", "2"), "no run 'nope'"),
        (("fork", "nope", "--at", "1"), "no run 'nope'"),
        (("dump", "done", "--seq", "99"), "no checkpoint 99"),
        (("diff", "done", "1", "99"), "no checkpoint 99"),
        (("fork", "done", "--at", "99"), "no checkpoint 99"),
        (("fork", "done", "--at", "1", "--run-id", "done"), "already exists"),
        (("run", SPEC, "--input", "{steps: 1}"), "not valid JSON"),
        (("run", "tests.cli.crash_agents:nope"), "nope"),
        (("resume", "done", "--reply", '"yes"'), "nothing to reply to"),
    ],
)
def test_usage_and_unknown_things_are_2(stores, args, words):
    code, err = status_of(*args, "--store", stores["good"])
    assert code == EXIT_USAGE and words in err, err


def test_a_blob_file_that_is_not_there_is_2_and_one_that_is_corrupt_is_3(stores):
    code, err = status_of("dump", str(Path(stores["root"]) / "missing.blob"))
    assert code == EXIT_USAGE and "cannot read blob file" in err
    code, err = status_of("dump", str(Path(stores["root"]) / "text.blob"))
    assert code == EXIT_HOST and "CorruptBlob" in err


@pytest.mark.parametrize(
    "args",
    [
        ("runs",),
        ("show", "done"),
        ("dump", "done"),
        ("diff", "done", "1", "2"),
        ("fork", "done", "--at", "1"),
        ("resume", "done"),
        ("run", SPEC, "--input", '{"steps": 1}'),
    ],
)
def test_store_trouble_is_3_for_every_command(stores, args):
    code, err = status_of(*args, "--store", stores["broken"])
    assert code == EXIT_HOST and "is not a valid agentrt store" in err, err
