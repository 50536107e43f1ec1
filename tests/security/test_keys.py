"""Blob keys: signed by default, key files, rotation, binding to run / sequence / use, opt-in for unsigned."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentrt import Runtime, keys
from agentrt._codec import _format, dumps
from agentrt.cli import main as cli_main
from agentrt.exceptions import CorruptBlob
from agentrt.inspection import dump_blob
from agentrt.lowlevel import Machine
from agentrt.stores import SqliteStore
from agentrt.stores.base import StoreError
from tests.codec.blobtools import split
from tests.runtime import agents as A
from tests.security import agents

REPO = Path(__file__).resolve().parents[2]
OLD_KEY = "old-key-762c08fc17a1cc5f00d248f8b50f2f2f4d17ff2934ac31e64deacb3f5bb3f2ec"
NEW_KEY = "new-key-479a61d5370a0351ad498a8f324e0f9ad50bfafbe4c044ea49cbe3981e8cb573"
ENV_KEY = "from-the-environment-c9164f064a6892b9f1443cf8d0b96f3d0e8e"  # <= 64 bytes: used as is


@pytest.fixture(autouse=True)
def project_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "project.key"
    monkeypatch.setenv("AGENTRT_KEY_FILE", str(path))
    monkeypatch.delenv("AGENTRT_BLOB_KEY", raising=False)
    monkeypatch.delenv("AGENTRT_ALLOW_UNSIGNED", raising=False)
    return path


def _suspended() -> Machine:
    m = Machine(agents.plain, "unused")
    m.step()
    return m


def _bind(blob: bytes) -> object:
    head, _ = split(blob)
    return json.loads(head[_format.PREFIX_SIZE_BYTES :]).get("bind")


def test_get_signs_with_a_project_key_created_0600_and_a_fresh_process_restores_it(
    project_key: Path, tmp_path: Path
) -> None:
    m = _suspended()
    blob = m.get()
    assert blob[7] & _format.FLAG_SIGNED and _bind(blob) == ["checkpoint", None, None]
    assert stat.S_IMODE(project_key.stat().st_mode) == 0o600
    (tmp_path / "cp.blob").write_bytes(blob)
    script = (
        "import sys; from agentrt.lowlevel import Machine; import tests.security.agents; "
        "m = Machine.set(open(sys.argv[1], 'rb').read()); print(m.pending); print(m.step('back').value)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "cp.blob")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["hello", "back"]


def test_unsigned_blobs_are_refused_unless_the_caller_opts_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    m = _suspended()
    unsigned = dumps(m._coro, key=b"")
    with pytest.raises(CorruptBlob, match=r"not signed.*allow_unsigned=True.*AGENTRT_ALLOW_UNSIGNED=1"):
        Machine.set(unsigned)
    assert Machine.set(unsigned, allow_unsigned=True).pending == "hello"
    path = tmp_path / "u.blob"
    path.write_bytes(unsigned)
    assert cli_main(["dump", str(path)]) == 3  # the blob cannot be used: EXIT_HOST
    with pytest.raises(CorruptBlob, match="--allow-unsigned"):
        dump_blob(unsigned)
    assert dump_blob(unsigned, allow_unsigned=True).frames
    monkeypatch.setenv("AGENTRT_ALLOW_UNSIGNED", "1")
    assert Machine.set(unsigned).pending == "hello"
    assert dump_blob(unsigned).frames


def test_env_key_overrides_and_rotation_keeps_old_blobs_readable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTRT_BLOB_KEY", OLD_KEY)
    old = _suspended().get()
    monkeypatch.setenv("AGENTRT_BLOB_KEY", NEW_KEY)
    with pytest.raises(CorruptBlob, match="not among this process's keys"):
        Machine.set(old)
    monkeypatch.setenv("AGENTRT_BLOB_KEY", f"{NEW_KEY},{OLD_KEY}")
    assert Machine.set(old).pending == "hello"
    new = _suspended().get()
    monkeypatch.setenv("AGENTRT_BLOB_KEY", NEW_KEY)
    assert Machine.set(new).pending == "hello"  # written with the first key


def test_keygen_creates_and_rotates_a_0600_key_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dir" / "blob.key"
    assert cli_main(["keygen", "--file", str(path)]) == 0
    first = keys.read_key_file(path)
    assert first is not None and len(first.read) == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert cli_main(["keygen", "--file", str(path)]) == 0
    second = keys.read_key_file(path)
    assert second is not None and second.read[1] == first.write and second.write != first.write
    assert cli_main(["keygen", "--print"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()[-1]) == 64


def test_shared_stores_refuse_to_start_without_a_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"agentrt keygen.*AGENTRT_BLOB_KEY"):
        keys.require_key("postgresql://db/agentrt")
    with pytest.raises(StoreError, match="agentrt keygen"):
        keys.require_key("postgresql://db/agentrt", tmp_path / "missing.key")
    keys.add_key(tmp_path / "shared.key")
    assert keys.require_key("postgresql://db/agentrt", tmp_path / "shared.key").write
    monkeypatch.setenv("AGENTRT_BLOB_KEY", ENV_KEY)
    assert keys.require_key("postgresql://db/agentrt").write == ENV_KEY.encode()


def test_sqlite_store_key_file_signs_and_binds_its_checkpoints(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    store = SqliteStore(db)
    key_file = tmp_path / "runs.db.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600

    async def main() -> tuple[str, str]:
        async with Runtime(store) as rt:
            a = await rt.start(A.asker, {"n": 1})
            b = await rt.start(A.asker, {"n": 2})
            await rt.settle(a, timeout=10)
            await rt.settle(b, timeout=10)
            seq_a, blob_a = store.latest_checkpoint(a)
            _, blob_b = store.latest_checkpoint(b)
            assert _bind(blob_a) == ["checkpoint", a, seq_a] and blob_a[7] & _format.FLAG_SIGNED
            rt._restore_checkpoint(a, seq_a, blob_a).discard()  # the genuine checkpoint
            with pytest.raises(CorruptBlob, match="replayed or moved"):
                rt._restore_checkpoint(a, seq_a, blob_b)  # run B's checkpoint in run A's row
            with pytest.raises(CorruptBlob, match="replayed or moved"):
                rt._restore_checkpoint(a, seq_a + 1, blob_a)  # an old checkpoint as a newer one
            with pytest.raises(CorruptBlob, match="not signed"):
                unsigned = dumps(rt._restore_checkpoint(a, seq_a, blob_a)._coro, key=b"")
                rt._restore_checkpoint(a, seq_a, unsigned)
            return a, b

    try:
        a, _ = asyncio.run(main())
        with sqlite3.connect(db) as conn:  # a store writer without the key forges a row
            conn.execute("UPDATE checkpoints SET blob = ? WHERE run_id = ?", (dumps([1], key=b""), a))
        conn.close()

        async def resume() -> BaseException | None:
            reopened = SqliteStore(db)
            try:
                async with Runtime(reopened) as rt:
                    await rt.reply(a, "yes")
                    for _ in range(200):
                        if rt.driver_error(a) is not None:
                            break
                        await asyncio.sleep(0.05)
                    return rt.driver_error(a)
            finally:
                reopened.close()

        error = asyncio.run(resume())
        assert isinstance(error, CorruptBlob) and "not signed" in str(error)
    finally:
        store.close()


_CREATE_AND_PRINT = """
import os, sys, time
from agentrt import keys
deadline = float(sys.argv[1])
while time.time() < deadline:  # start together
    pass
print(keys.project_keyring(create=True).write.hex())
"""


def test_processes_creating_the_project_key_at_once_all_get_the_one_key(tmp_path):
    """Created by several processes at the same moment (a test session's workers, a fleet's first
    start), the key file is never read half-written and every process signs with the same key."""
    import time

    env = dict(os.environ, AGENTRT_KEY_FILE=str(tmp_path / "cfg" / "blob.key"))
    env.pop("AGENTRT_BLOB_KEY", None)
    start = str(time.time() + 1.5)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CREATE_AND_PRINT, start],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    results = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    assert len({out.strip() for out, _ in results}) == 1, results
    key_file = tmp_path / "cfg" / "blob.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert sorted(p.name for p in key_file.parent.iterdir()) == ["blob.key"]  # no draft left behind
