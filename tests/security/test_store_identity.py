"""Issue 25 item 6: the store identity itself -- printed by ``agentrt show``, given to a store made by
an older agentrt on migration (whose runs keep resuming), and honest to an older agentrt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrt._codec import _format
from agentrt.cli import main as cli_main
from agentrt.exceptions import IncompatibleBlob
from agentrt.keys import keyring_for_store
from agentrt.stores import open_store
from agentrt.stores._sql.packing import unpack
from tests.security import replay_agents as A
from tests.security.test_replay_rollback import (
    KINDS,
    Raw,
    _reply_and_settle,
    _wait_at_question,
)


@pytest.fixture(params=KINDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'agentrt.db'}"
    return str(request.getfixturevalue("pg_url"))


def test_show_prints_the_store_id(location: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = open_store(location)
    try:
        store_id = store.store_id
    finally:
        store.close()
    assert len(store_id) == 32 and int(store_id, 16) >= 0
    assert cli_main(["show", "--store", location, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["store_id"] == store_id
    again = open_store(location)  # the identity is the store's, not the handle's
    try:
        assert again.store_id == store_id
    finally:
        again.close()


def _downgrade(location: str) -> None:
    """Make ``location`` what an agentrt from before store identities left: blobs sealed for no store
    (same key), no head column, no store id, the schema version before them."""
    raw = Raw(location)
    store = open_store(location)
    try:
        ring = keyring_for_store(store)
    finally:
        store.close()

    def legacy(blob: bytes, kind: str, run_id: str, seq: int | None) -> bytes:
        return _format.reseal(unpack(blob), ring.read, "test", ring.write, (kind, run_id, seq))

    for run_id, seq, blob in raw("SELECT run_id, seq, blob FROM {checkpoints}"):
        raw("UPDATE {checkpoints} SET blob = ? WHERE run_id = ? AND seq = ?",
            (legacy(blob, "checkpoint", run_id, seq), run_id, seq))  # fmt: skip
    for run_id, seq, idx, ok, blob in raw("SELECT run_id, seq, idx, ok, blob FROM {results}"):
        kind = f"value#{idx}" if ok else f"error#{idx}"
        raw("UPDATE {results} SET blob = ? WHERE run_id = ? AND seq = ? AND idx = ?",
            (legacy(blob, kind, run_id, seq), run_id, seq, idx))  # fmt: skip
    raw("ALTER TABLE {runs} DROP COLUMN head")
    raw("DELETE FROM {meta} WHERE key IN ('store_id', 'legacy_blobs')")
    if raw.pg:
        raw("UPDATE {meta} SET value = '6' WHERE key = 'schema_version'")
    else:
        raw("PRAGMA user_version = 10")


def test_a_store_from_before_identities_is_migrated_and_its_runs_keep_resuming(location: str) -> None:
    run_id = "old-run"
    _wait_at_question(location, run_id, A.Order(3, "old"))
    _downgrade(location)
    ((blob,),) = Raw(location)("SELECT blob FROM {checkpoints} WHERE run_id = ?", (run_id,))
    assert not bytes(blob)[7] & _format.FLAG_STORE  # what the older agentrt wrote

    store = open_store(location)  # migrates: an identity, a signed head per run, the legacy note
    try:
        assert store.store_id and store.legacy_blobs is True
        rec = store.get_run(run_id)
        assert rec is not None and rec.head is not None
    finally:
        store.close()

    rec, error = _reply_and_settle(location, run_id, "yes")

    assert error is None and rec.status == "completed", (rec, error)
    assert rec.output == {"charged": 3, "label": "old"}
    assert (run_id, 3) in A.CHARGES


def test_a_new_store_refuses_a_blob_sealed_for_no_store(location: str, tmp_path: Path) -> None:
    """The legacy note is the migrated store's, signed: a store created new takes only its own blobs."""
    run_id = "new-run"
    _wait_at_question(location, run_id, A.Order(4))
    store = open_store(location)
    try:
        assert store.legacy_blobs is False
        ring = keyring_for_store(store)
    finally:
        store.close()
    raw = Raw(location)
    ((seq, blob),) = raw("SELECT seq, blob FROM {checkpoints} WHERE run_id = ?", (run_id,))
    legacy = _format.reseal(unpack(blob), ring.read, "test", ring.write, ("checkpoint", run_id, seq))
    raw("UPDATE {checkpoints} SET blob = ? WHERE run_id = ? AND seq = ?", (legacy, run_id, seq))
    raw("INSERT INTO {meta} (key, value) VALUES ('legacy_blobs', 'forged')")  # an unsigned note: ignored

    rec, error = _reply_and_settle(location, run_id, "yes")

    assert rec.status == "blocked" and error is not None and "sealed for no store" in str(error)


def test_an_older_agentrt_calls_a_store_sealed_blob_incompatible_not_corrupt() -> None:
    """An agentrt from before store identities knows flag bits 0-2 only: it verifies the digest (the
    same algorithm and key), then refuses the blob as written by a newer agentrt."""
    key = bytes(range(32))
    blob = _format.pack((), 0, b"\x80\x05N.", key, ("checkpoint", "r", 1, "ab" * 16, "cd" * 32))
    assert blob[7] & _format.FLAG_STORE
    header_len = int.from_bytes(blob[8:12], "little")
    header = json.loads(blob[12 : 12 + header_len])
    assert header["bind"] == ["checkpoint", "r", 1]  # an old parser reads the binding it knows
    before_identities = _format.Reader(
        flags=_format.FLAG_CLOUDPICKLE | _format.FLAG_REFERENCING | _format.FLAG_SIGNED
    )
    with pytest.raises(IncompatibleBlob, match="written by a newer agentrt"):
        _format.unpack(blob, [key], reader=before_identities)


def test_reseal_keeps_the_payload_and_takes_the_new_binding() -> None:
    old, new = bytes(range(32)), bytes(range(1, 33))
    blob = _format.pack((("m", "f", "d1"),), 0, b"\x80\x05N.", old, ("checkpoint", "r", 2, "aa" * 16, None))
    moved = _format.reseal(blob, [old], "source", new, ("checkpoint", "r", 2, "bb" * 16, "ee" * 32))
    envelope: Any = _format.unpack(moved, [new])
    assert envelope.store == "bb" * 16 and envelope.chain == "ee" * 32
    assert envelope.payload == b"\x80\x05N." and envelope.codes[0].qualname == "f"
    with pytest.raises(Exception, match="digest mismatch"):
        _format.unpack(moved, [old])
