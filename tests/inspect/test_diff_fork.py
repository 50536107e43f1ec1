"""``agentrt dump ID`` / ``diff`` / ``fork`` end to end: the command as typed, a SQLite store."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.cli.helpers import cli, cli_env

SPEC = "tests.inspect.agents:tally"
ITEMS = ["ab", "cde", "f"]


def agentrt(*args: str, store, expect: int = 0) -> subprocess.CompletedProcess[str]:
    env = cli_env()
    env.pop("AGENTRT_BLOB_KEY", None)
    proc = cli(*args, "--store", str(store), env=env)
    assert proc.returncode == expect, (args, proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def as_json(proc: subprocess.CompletedProcess[str]) -> dict:
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def waiting_run(tmp_path_factory):
    """Run t1 of the tally agent: checkpoints 1-3 wait on the score tool, 4 on a question."""
    store = tmp_path_factory.mktemp("store") / "agentrt.db"
    out = as_json(
        agentrt("run", SPEC, "--input", json.dumps({"items": ITEMS}), "--run-id", "t1", "--json",
                "--log-format", "none", store=store)
    )  # fmt: skip
    assert out["status"] == "waiting" and out["seq"] == 4
    return store


def test_dump_of_a_run_latest_and_by_seq(waiting_run):
    text = agentrt("dump", "t1", store=waiting_run).stdout
    assert "agentrt dump of run t1, checkpoint 4, the latest" in text
    assert "agent: tests.inspect.agents:tally" in text
    assert "pending request: Ask(prompt='total is 6; ok?')" in text
    first = as_json(agentrt("dump", "t1", "--seq", "1", "--json", store=waiting_run))
    assert first["source"] == {
        "kind": "run", "run_id": "t1", "seq": 1, "latest": False, "path": None, "agent": SPEC,
    }  # fmt: skip
    assert first["pending_summary"] == {"kind": "tool", "name": "score", "kwargs": {"item": "ab"}}
    (frame,) = first["frames"]
    stack = {e["role"]: e for e in frame["stack"]}
    assert stack["for_iterator"]["iterator"] == {"index": 1, "remaining": 2}
    assert (
        stack["operand"]["label"].startswith("left operand of +=")
        and stack["operand"]["value"]["repr"] == "0"
    )


def test_diff_between_two_checkpoints(waiting_run):
    diff = as_json(agentrt("diff", "t1", "1", "3", "--json", store=waiting_run))
    (frame,) = diff["frames"]
    assert (diff["before_seq"], diff["after_seq"]) == (1, 3)
    assert frame["status"] == "changed" and frame["moved"] is False
    changed = {c["name"]: (c["before"], c["after"]) for c in frame["locals"]["changed"]}
    assert changed == {"seen": ("[]", "['ab', 'cde']"), "item": ("'ab'", "'f'")}
    stack = {c["name"].split(" ", 1)[1]: (c["before"], c["after"]) for c in frame["stack"]}
    assert stack["left operand of += at line 104"] == ("0", "5")
    assert diff["pending"]["changed"] and "'f'" in diff["pending"]["after"]

    moved = as_json(agentrt("diff", "t1", "3", "4", "--json", store=waiting_run))["frames"][0]
    assert (
        moved["moved"]
        and moved["position_before"]["lineno"] == 104
        and moved["position_after"]["lineno"] == 107
    )
    assert {"name": "total", "value": "6"} in moved["locals"]["added"]
    # `item` (and `task`) still exist at line 107 but are dead there: left out, not removed
    assert moved["locals"]["removed"] == []
    assert {"name": "item", "value": "'f'"} in moved["locals"]["dead"]
    moved_text = agentrt("diff", "t1", "3", "4", store=waiting_run).stdout
    assert "· item: dead here, so not stored (last stored value 'f')" in moved_text
    assert "- item" not in moved_text

    text = agentrt("diff", "t1", "1", "3", store=waiting_run).stdout
    assert "agentrt diff of run t1: checkpoint 1 → checkpoint 3" in text
    assert "~ seen: [] → ['ab', 'cde']" in text
    assert "pending request: ToolCall(name='score', kwargs={'item': 'ab'}) → ToolCall(" in text


def test_fork_continues_from_an_earlier_checkpoint(waiting_run):
    out = agentrt("fork", "t1", "--at", "2", "--run-id", "f1", store=waiting_run).stdout
    assert "forked run t1 at checkpoint 2 into run f1 (running)" in out
    assert "agentrt resume f1" in out
    dumped = agentrt("dump", "f1", store=waiting_run).stdout
    assert "checkpoint 2, the latest" in dumped and "Task(run_id='f1'" in dumped  # rebound to the fork

    waiting = as_json(agentrt("resume", "f1", "--json", "--log-format", "none", store=waiting_run))
    assert waiting["status"] == "waiting" and waiting["prompt"] == "total is 6; ok?"
    done = as_json(
        agentrt("resume", "f1", "--reply", '"yes"', "--json", "--log-format", "none", store=waiting_run)
    )
    assert done["status"] == "completed"
    assert done["output"] == {"total": 6, "seen": ITEMS, "answer": "yes"}

    shown = as_json(agentrt("show", "f1", "--json", store=waiting_run))
    assert [c["seq"] for c in shown["checkpoints"]] == [2, 3, 4]
    kinds = [(e["kind"], e["data"].get("message")) for e in shown["events"]]
    assert ("forked", "forked from run t1 at checkpoint 2") in kinds
    assert ("notify", "scored cde") in kinds  # the fork's own events land in the fork
    original = as_json(agentrt("show", "t1", "--json", store=waiting_run))
    assert original["status"] == "waiting" and original["seq"] == 4  # the source run is untouched


def test_fork_at_a_question_waits_for_a_reply(waiting_run):
    out = as_json(agentrt("fork", "t1", "--at", "4", "--run-id", "f2", "--json", store=waiting_run))
    assert out == {
        "run_id": "f2", "status": "waiting", "seq": 4,
        "pending": {"kind": "ask", "prompt": "total is 6; ok?"},
        "forked_from": {"run_id": "t1", "seq": 4},
    }  # fmt: skip
    done = as_json(
        agentrt("resume", "f2", "--reply", '"no"', "--json", "--log-format", "none", store=waiting_run)
    )
    assert done["output"] == {"total": 6, "seen": ITEMS, "answer": "no"}


def test_fork_and_diff_errors(waiting_run):
    err = agentrt("fork", "t1", "--at", "9", store=waiting_run, expect=2).stderr
    assert (
        err.strip()
        == "agentrt: error: run 't1' has no checkpoint 9; it keeps checkpoints 1..4 (see `agentrt show t1`)"
    )
    err = agentrt("fork", "nope", "--at", "1", store=waiting_run, expect=2).stderr
    assert "no run 'nope'" in err and len(err.strip().splitlines()) == 1
    err = agentrt("fork", "t1", "--at", "1", "--run-id", "t1", store=waiting_run, expect=2).stderr
    assert "already exists" in err
    err = agentrt("diff", "t1", "1", "7", store=waiting_run, expect=2).stderr
    assert "no checkpoint 7" in err
    err = agentrt("dump", "t1", "--seq", "0", store=waiting_run, expect=2).stderr
    assert "no checkpoint 0" in err
