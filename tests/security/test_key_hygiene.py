"""Issue 25 item 5: a blob key is refused when it is short, a pattern, or in a key file someone else
could have planted or read (a symlink, another user's, open to group or others)."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

import pytest

from agentrt import keys
from agentrt.cli import main as cli_main
from agentrt.exceptions import BlobKeyRejected, StoreError
from agentrt.stores import SqliteStore
from agentrt.stores.base import require_blob_key


@pytest.fixture(autouse=True)
def _no_env_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTRT_KEY_FILE", str(tmp_path / "project.key"))
    monkeypatch.delenv("AGENTRT_BLOB_KEY", raising=False)
    monkeypatch.delenv("AGENTRT_BLOB_KEY_FILE", raising=False)


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("a", "1 byte"),
        (" ", "1 byte"),
        ("0123456789abcdef" * 2, "16 byte"),  # 32 hex digits decode to 16 bytes
        ("a" * 64, "pattern"),
        ("ab" * 40, "pattern"),
        ("0" * 64, "pattern"),  # hex: 32 zero bytes
    ],
)
def test_weak_env_keys_are_refused_naming_the_variable_and_the_fix(
    monkeypatch: pytest.MonkeyPatch, key: str, why: str
) -> None:
    monkeypatch.setenv("AGENTRT_BLOB_KEY", key)
    with pytest.raises(BlobKeyRejected, match=rf"\$AGENTRT_BLOB_KEY is .*{why}.*agentrt keygen --print"):
        keys.env_keyring()
    with pytest.raises(StoreError, match="AGENTRT_BLOB_KEY"):  # the PostgreSQL requirement: same check
        require_blob_key("postgresql://db/agentrt")


def test_a_weak_key_among_rotated_ones_is_named_by_position(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTRT_BLOB_KEY", f"{secrets.token_hex(32)},a")
    with pytest.raises(BlobKeyRejected, match=r"key 2 of 2 in \$AGENTRT_BLOB_KEY is 1 byte"):
        keys.env_keyring()


def test_keygen_keys_and_long_passphrases_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    for _ in range(200):
        assert keys.key_problem(secrets.token_hex(32)) is None
    assert keys.key_problem("correct horse battery staple, forever and ever") is None
    monkeypatch.setenv("AGENTRT_BLOB_KEY", secrets.token_hex(32))
    assert keys.env_keyring() is not None


def _key_file(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text + "\n", encoding="utf-8")
    os.chmod(path, mode)
    return path


def test_a_planted_symlink_key_file_is_refused_before_the_store_uses_it(tmp_path: Path) -> None:
    known = _key_file(tmp_path / "known.key", secrets.token_hex(32), 0o644)
    db = tmp_path / "runs.db"
    (tmp_path / "runs.db.key").symlink_to(known)
    with pytest.raises(BlobKeyRejected, match=r"runs\.db\.key is a symlink.*remove the link"):
        SqliteStore(db)
    with pytest.raises(BlobKeyRejected, match="symlink"):
        keys.require_key("postgresql://db/agentrt", tmp_path / "runs.db.key")


def test_a_dangling_planted_symlink_is_refused_not_followed(tmp_path: Path) -> None:
    (tmp_path / "runs.db.key").symlink_to(tmp_path / "nowhere.key")
    with pytest.raises(BlobKeyRejected, match="symlink"):
        SqliteStore(tmp_path / "runs.db")
    assert not (tmp_path / "nowhere.key").exists()


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602])
def test_a_key_file_open_to_group_or_others_is_refused_with_chmod_600(tmp_path: Path, mode: int) -> None:
    path = _key_file(tmp_path / "blob.key", secrets.token_hex(32), mode)
    with pytest.raises(BlobKeyRejected, match=rf"group or others \(mode 0{mode:o}\).*chmod 600 {path}"):
        keys.read_key_file(path)
    os.chmod(path, 0o600)
    assert keys.read_key_file(path) is not None
    os.chmod(path, 0o400)
    assert keys.read_key_file(path) is not None


def test_a_key_file_of_another_user_is_refused(tmp_path: Path) -> None:
    path = _key_file(tmp_path / "blob.key", secrets.token_hex(32))
    info = os.lstat(path)
    foreign = os.stat_result((info.st_mode, *info[1:4], info.st_uid + 1, *info[5:]))
    problem = keys.key_file_problem(foreign, str(path))
    assert problem is not None and "not to this user" in problem and "agentrt keygen --file" in problem


def test_a_weak_key_in_a_key_file_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    path = _key_file(tmp_path / "blob.key", f"# rotated\n{secrets.token_hex(32)}\n\n{'x' * 40}")
    with pytest.raises(BlobKeyRejected, match=rf"{path}, line 4: the key is a pattern"):
        keys.read_key_file(path)


def test_keygen_refuses_to_rotate_a_planted_file_so_its_key_never_becomes_a_read_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = _key_file(tmp_path / "known.key", secrets.token_hex(32), 0o644)
    link = tmp_path / "blob.key"
    link.symlink_to(known)
    assert cli_main(["keygen", "--file", str(link)]) != 0
    assert "symlink" in capsys.readouterr().err
    assert link.is_symlink()


def test_keygen_output_is_a_key_the_check_accepts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["keygen", "--print"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert keys.key_problem(printed) is None
    path = tmp_path / "made.key"
    assert cli_main(["keygen", "--file", str(path)]) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and keys.read_key_file(path) is not None


@pytest.mark.parametrize("key", ["a", " ", "x" * 64])
def test_the_postgres_store_refuses_a_weak_key(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    from agentrt.stores import open_store

    monkeypatch.setenv("AGENTRT_BLOB_KEY", key)
    with pytest.raises(BlobKeyRejected, match=r"\$AGENTRT_BLOB_KEY is .*agentrt keygen --print"):
        open_store(pg_url)


def test_the_postgres_store_refuses_a_key_file_open_to_others(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from agentrt.stores import open_store

    monkeypatch.delenv("AGENTRT_BLOB_KEY")
    path = _key_file(tmp_path / "shared.key", secrets.token_hex(32), 0o644)
    monkeypatch.setenv("AGENTRT_BLOB_KEY_FILE", str(path))
    with pytest.raises(BlobKeyRejected, match=rf"chmod 600 {path}"):
        open_store(pg_url)
    os.chmod(path, 0o600)
    open_store(pg_url).close()
