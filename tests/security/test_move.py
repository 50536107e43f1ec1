"""``agentrt move RUN --from S1 --to S2`` (issue 25 item 6): the deliberate move between stores.

A run moved with both keys goes on in the target, once, with its own locals; a move without the
source's key is refused and writes nothing; a run copied row by row (without the move) is refused.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest

from agentrt.cli import main as cli_main
from agentrt.stores import open_store
from tests.runtime import agents as R
from tests.security import replay_agents as A
from tests.security.test_replay_rollback import (
    _ENDS,
    Raw,
    _drive,
    _reply_and_settle,
    _settled,
    _wait_at_question,
)


def _status(location: str, run_id: str) -> tuple[str, dict | None]:
    store = open_store(location)
    try:
        rec = store.get_run(run_id)
        assert rec is not None
        return rec.status, rec.error
    finally:
        store.close()


def test_a_moved_run_goes_on_in_the_target_and_is_cancelled_as_moved_in_the_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each SQLite store has its own key file (no AGENTRT_BLOB_KEY): the move needs and uses both."""
    assert "AGENTRT_BLOB_KEY" not in os.environ
    s1, s2, s3 = (f"sqlite:///{tmp_path / name}.db" for name in ("one", "two", "three"))
    run_id = "moving-1"
    _wait_at_question(s1, run_id, A.Order(9, "from one"))
    open_store(s2).close()  # an existing target (a new one would be made too)

    assert cli_main(["move", run_id, "--from", s1, "--to", s2, "--json"]) == 0
    moved = json.loads(capsys.readouterr().out)
    store2 = open_store(s2)
    try:
        assert moved["runs"] == [run_id] and moved["store_id"] == store2.store_id
    finally:
        store2.close()
    status, error = _status(s1, run_id)
    assert status == "cancelled" and error is not None and error["type"] == "RunMoved"
    assert s2.removeprefix("sqlite:///") in error["message"]

    # a round trip further: from two to three, where it finishes with its own locals, charged once
    assert cli_main(["move", run_id, "--from", s2, "--to", s3]) == 0
    assert "moved run moving-1" in capsys.readouterr().out
    rec, driver_error = _reply_and_settle(s3, run_id, "yes")
    assert driver_error is None and rec.status == "completed", (rec, driver_error)
    assert rec.output == {"charged": 9, "label": "from one"}
    assert [c for c in A.CHARGES if c[0] == run_id] == [(run_id, 9)]
    # the source keeps no run that could be driven: a resume there is refused as finished
    assert _status(s2, run_id)[0] == "cancelled"


def test_a_run_and_its_sub_runs_move_together(tmp_path: Path) -> None:
    s1, s2 = (f"sqlite:///{tmp_path / name}.db" for name in ("one", "two"))
    run_id = "parent-1"

    async def start(rt, store):  # type: ignore[no-untyped-def]
        await rt.start(R.ask_parent, R.N(3), run_id=run_id)
        return await _settled(rt, run_id, ("waiting", *_ENDS))

    assert _drive(s1, start).status == "waiting"
    assert cli_main(["move", run_id, "--from", s1, "--to", s2]) == 0
    store = open_store(s2)
    try:
        children = store.children(run_id)
        assert len(children) == 1 and children[0].status == "waiting"
    finally:
        store.close()
    rec, error = _reply_and_settle(s2, run_id, "yes")  # the reply goes to the sub-run that asks
    assert error is None and rec.status == "completed", (rec, error)


def test_a_move_without_the_source_key_is_refused_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s1, s2 = (f"sqlite:///{tmp_path / name}.db" for name in ("one", "two"))
    run_id = "moving-2"
    _wait_at_question(s1, run_id, A.Order(2))
    key_file = tmp_path / "one.db.key"
    key_file.write_text(secrets.token_hex(32) + "\n")  # this process no longer holds the source's key
    os.chmod(key_file, 0o600)

    assert cli_main(["move", run_id, "--from", s1, "--to", s2]) == 3
    err = capsys.readouterr().err
    assert "does not verify with the source's keys" in err and "nothing was written" in err
    target = open_store(s2)
    try:
        assert target.get_run(run_id) is None
    finally:
        target.close()
    assert _status(s1, run_id)[0] == "waiting"


def test_a_run_copied_row_by_row_without_move_is_refused(tmp_path: Path) -> None:
    s1, s2 = (f"sqlite:///{tmp_path / name}.db" for name in ("one", "two"))
    run_id = "copied-1"
    _wait_at_question(s1, run_id, A.Order(6, "copied"))
    open_store(s2).close()
    src, dst = Raw(s1), Raw(s2)
    for table in ("runs", "checkpoints", "results"):
        for row in src(f"SELECT * FROM {{{table}}} WHERE run_id = ?", (run_id,)):
            marks = ", ".join("?" * len(row))
            dst(f"INSERT INTO {{{table}}} VALUES ({marks})", tuple(row))

    rec, error = _reply_and_settle(s2, run_id, "yes")

    assert rec.status == "blocked" and error is not None
    assert not [c for c in A.CHARGES if c[0] == run_id]


@pytest.mark.postgres
def test_a_run_moves_from_sqlite_to_postgresql(tmp_path: Path, pg_url: str) -> None:
    s1 = f"sqlite:///{tmp_path / 'one.db'}"  # AGENTRT_BLOB_KEY (set by pg_url) signs both: one key
    run_id = "to-pg"
    _wait_at_question(s1, run_id, A.Order(8, "to postgres"))
    assert cli_main(["move", run_id, "--from", s1, "--to", pg_url]) == 0
    rec, error = _reply_and_settle(pg_url, run_id, "yes")
    assert (
        error is None and rec.status == "completed" and rec.output == {"charged": 8, "label": "to postgres"}
    )
    assert _status(s1, run_id)[0] == "cancelled"
