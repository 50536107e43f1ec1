"""Blobs kept packed in store rows (agentrt.stores._sql.packing, issue 26): what a store hands back is
the blob it was given, a damaged packed row is reported as a damaged blob, and a store written
before packing (plain rows, the schema version before it) is migrated and its runs resume."""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path

import pytest

from agentrt._codec import _format
from agentrt.exceptions import CorruptBlob
from agentrt.stores import open_store
from agentrt.stores import postgres as postgres_store
from agentrt.stores import sqlite as sqlite_store
from agentrt.stores._sql import packing
from agentrt.stores._sql.packing import MARK, pack, unpack
from tests.security import replay_agents as A
from tests.security.test_replay_rollback import KINDS, Raw, _reply_and_settle, _wait_at_question


@pytest.fixture(params=KINDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'agentrt.db'}"
    return str(request.getfixturevalue("pg_url"))


def test_the_dictionaries_are_frozen() -> None:
    """A packed row names its dictionary by a version byte: changing DICTIONARY_V1 or _V2 would make
    every packed row of every store unreadable. A new dictionary is a new version beside them."""
    digest = hashlib.sha256(packing.DICTIONARY_V1).hexdigest()
    assert digest == "25ae7df7034241e79c0ac5ee42d393f3183cd70e41855ed41f6048ba7ba0ff91"
    digest = hashlib.sha256(packing.DICTIONARY_V2).hexdigest()
    assert digest == "3b3d10844c995ac4848df8afb60b0d357a5aaf8ca467db04cde45997fb8cf425"


def test_rows_packed_against_the_first_dictionary_stay_readable() -> None:
    blob = b'ARTB\x02\x03\r\x0e{"codes":[["m","f","0"]]}' * 20
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, packing.DICTIONARY_V1)
    assert unpack(MARK + b"\x01" + deflate.compress(blob) + deflate.flush()) == blob
    assert pack(blob)[:5] == MARK + b"\x02"  # what is written now


@pytest.mark.parametrize(
    "blob",
    [
        b"",
        b"blob1",
        b"ARTB" + b"\x00" * 200,
        MARK,
        MARK + b"\x01" + b"not deflate",
        MARK + b"\x00" + b"x" * 300,
        os.urandom(500),
        b'ARTB\x02\x03\r\x0e{"codes":[["m","f","0"]]}' * 20,
    ],
)
def test_any_bytes_come_back_as_they_went_in(blob: bytes) -> None:
    assert unpack(pack(blob)) == blob
    assert unpack(memoryview(pack(blob))) == blob  # a driver's memoryview


def test_a_blob_is_packed_only_when_that_is_smaller() -> None:
    short = b"ARTB" + b"a" * 20
    assert pack(short) == short
    noise = b"ARTB" + os.urandom(2000)
    assert pack(noise) == noise
    header = b'ARTB\x02\x03\r\x0e\xed\x00\x00\x00{"codes":[["app.agents","triage","' + b"0" * 32 + b'"]]}'
    packed = pack(header * 10)
    assert packed[:5] == MARK + b"\x02" and len(packed) < len(header) * 2


def test_a_damaged_packed_row_is_handed_back_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    blob = b'ARTB\x02\x03\r\x0e{"codes":[["m","f","0"]]}' * 20
    truncated = pack(blob)[:-4]
    assert unpack(truncated) == truncated
    with pytest.raises(CorruptBlob):
        _format.read_header(unpack(truncated))  # reported as any damaged blob is
    monkeypatch.setattr(packing, "MAX_BLOB_BYTES", 1000)
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    bomb = MARK + b"\x01" + deflate.compress(b"\x00" * 5000) + deflate.flush()
    assert unpack(bomb) == bomb  # inflating stops at the limit


def test_rows_are_packed_and_a_store_from_before_packing_keeps_resuming(location: str) -> None:
    run_id = "packed-run"
    _wait_at_question(location, run_id, A.Order(7, "before"))
    raw = Raw(location)
    ((stored,),) = raw("SELECT blob FROM {checkpoints} WHERE run_id = ?", (run_id,))
    assert bytes(stored)[:5] == MARK + b"\x02"  # packed
    store = open_store(location)
    try:
        _seq, blob = store.latest_checkpoint(run_id)
        assert blob[:4] == b"ARTB" and blob == unpack(stored)
        assert [c.size_bytes for c in store.list_checkpoints(run_id)][-1] == len(blob)
    finally:
        store.close()
    # what an agentrt from before packing left: plain rows, the schema version before packing (two
    # before this one: the second dictionary came next)
    for table, key in (("checkpoints", "seq"), ("results", "idx")):
        for run, k, value in raw(f"SELECT run_id, {key}, blob FROM {{{table}}}"):
            raw(f"UPDATE {{{table}}} SET blob = ? WHERE run_id = ? AND {key} = ?", (unpack(value), run, k))
    raw("DELETE FROM {meta} WHERE key = 'blob_packing'")
    if raw.pg:
        raw(
            "UPDATE {meta} SET value = ? WHERE key = 'schema_version'",
            (str(postgres_store.SCHEMA_VERSION - 2),),
        )
    else:
        raw(f"PRAGMA user_version = {sqlite_store.SCHEMA_VERSION - 2}")

    rec, error = _reply_and_settle(location, run_id, "yes")

    assert error is None and rec.status == "completed", (rec, error)
    assert rec.output == {"charged": 7, "label": "before"}
    assert raw("SELECT value FROM {meta} WHERE key = 'blob_packing'") == [("2",)]
