"""Blob keys: which secret signs new blobs and which secrets verify old ones.

A blob is signed (keyed BLAKE2b over its header and payload) so that only a
holder of the key can make a blob this process restores without the unsigned
safety net.  A :class:`Keyring` holds one key for writing and every key
accepted for reading, so a key can rotate: put the new key first, keep the old
ones after it until the runs they signed are finished.

Where keys come from, first match wins:

1. ``AGENTRT_BLOB_KEY``: one or more keys separated by commas (the first one
   writes).  It overrides every key file.
2. A store's key file: a SQLite store creates ``<database>.key`` (mode 0600)
   beside its database when it creates the store.  Shared stores (PostgreSQL)
   call :func:`require_key` and refuse to start without a key.
3. The project key of a process without a store (``Machine.get()`` /
   ``Machine.set()``): the file named by ``AGENTRT_KEY_FILE``, else
   ``$XDG_CONFIG_HOME/agentrt/blob.key`` (``~/.config/agentrt/blob.key``), created
   (0600) the first time a blob is signed.  It is per user, so a fresh process
   in any directory finds it.

A key file holds one key per line, newest (the writing key) first; blank lines
and ``#`` comments are ignored.  ``agentrt keygen`` makes one or rotates it.
Keys longer than 64 bytes are hashed down to BLAKE2b's key size.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from pathlib import Path
from typing import Any  # Any: os.environ's private encoding hooks are untyped

import attrs

__all__ = [
    "KEY_ENV",
    "KEY_FILE_ENV",
    "Keyring",
    "add_key",
    "env_keyring",
    "keyring_for_store",
    "project_key_path",
    "project_keyring",
    "require_key",
    "store_keyring",
]

KEY_ENV = "AGENTRT_BLOB_KEY"
KEY_FILE_ENV = "AGENTRT_KEY_FILE"
_MAX_KEY_BYTES = 64  # BLAKE2b's key limit


@attrs.frozen
class Keyring:
    """The key new blobs are signed with (``write``) and every key old blobs may be signed with."""

    write: bytes
    read: tuple[bytes, ...]
    source: str  # where the keys came from, for error messages

    @classmethod
    def of(cls, keys: list[bytes], source: str) -> Keyring | None:
        keys = [_normalize(key) for key in keys if key]
        if not keys:
            return None
        return cls(keys[0], tuple(dict.fromkeys(keys)), source)


def _normalize(key: bytes) -> bytes:
    return hashlib.blake2b(key).digest() if len(key) > _MAX_KEY_BYTES else key


def _parse_key(text: str) -> bytes:
    text = text.strip()
    try:
        return bytes.fromhex(text) if len(text) % 2 == 0 and len(text) >= 32 else text.encode()
    except ValueError:
        return text.encode("utf-8", "surrogateescape")


def _env_cache_key() -> str | None:
    return os.environ.get(KEY_ENV) or None


def env_keyring() -> Keyring | None:
    """The keys of ``AGENTRT_BLOB_KEY`` (comma-separated, first one writes), or None when unset."""
    text = _env_cache_key()
    if text is None:
        return None
    cached = _ENV_CACHE.get(text)
    if cached is None:
        keys = [part.encode("utf-8", "surrogateescape") for part in text.split(",") if part]
        cached = Keyring.of(keys, f"${KEY_ENV}")
        _ENV_CACHE.clear()
        _ENV_CACHE[text] = cached
    return cached


_ENV_CACHE: dict[str, Keyring | None] = {}
_FILE_CACHE: dict[str, tuple[int, Keyring | None]] = {}


def read_key_file(path: str | os.PathLike[str]) -> Keyring | None:
    """The keys in ``path`` (None if it does not exist or holds none); re-read when the file changes."""
    name = os.fspath(path)
    try:
        stamp = os.stat(name).st_mtime_ns
    except FileNotFoundError:
        return None
    cached = _FILE_CACHE.get(name)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    with open(name, encoding="utf-8") as f:
        lines = [line.split("#", 1)[0].strip() for line in f]
    ring = Keyring.of([_parse_key(line) for line in lines if line], name)
    _FILE_CACHE[name] = (stamp, ring)
    return ring


def add_key(path: str | os.PathLike[str]) -> None:
    """Put a new random key first in ``path`` (created 0600, with its directory); old keys stay to read."""
    _PROJECT_CACHE.clear()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    old = target.read_text(encoding="utf-8") if target.exists() else ""
    fd = os.open(target.with_suffix(target.suffix + ".tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secrets.token_hex(32) + "\n" + old)
    os.chmod(target.with_suffix(target.suffix + ".tmp"), 0o600)
    os.replace(target.with_suffix(target.suffix + ".tmp"), target)


def _create_key_file(path: Path) -> None:
    """Create ``path`` with one fresh key unless it exists.

    Race-free for processes starting together (a test session's workers, a fleet's first start):
    the key is written to a private file first and hard-linked into place, so a reader never sees
    the file created but still empty, and of two creators exactly one key wins.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        return
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(secrets.token_hex(32) + "\n")
        try:
            os.link(draft, path)
        except FileExistsError:
            return  # another process made it first: its key is the key
        except OSError:  # a file system without hard links: claim the name, then write it
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(draft.read_text(encoding="utf-8"))
    finally:
        draft.unlink(missing_ok=True)


def project_key_path() -> Path:
    """Where the key of a process without a store lives (see the module docstring)."""
    named = os.environ.get(KEY_FILE_ENV)
    if named:
        return Path(named)
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "agentrt" / "blob.key"


_PROJECT_CACHE: dict[tuple[object, ...], Keyring] = {}
# os.environ keeps the encoded environment in ``_data``: reading it directly spares the key
# encoding and value decoding of ``os.environ.get`` on every Machine.get() / Machine.set()
_ENVIRON_DATA: Any = getattr(os.environ, "_data", None)
_ENCODE_KEY: Any = getattr(os.environ, "encodekey", lambda key: key)
_PROJECT_ENV = tuple(_ENCODE_KEY(name) for name in (KEY_ENV, KEY_FILE_ENV, "XDG_CONFIG_HOME", "HOME"))


def _raw_env(encoded: Any) -> object:
    if isinstance(_ENVIRON_DATA, dict):
        return _ENVIRON_DATA.get(encoded)
    return os.environ.get(encoded if isinstance(encoded, str) else encoded.decode())  # pragma: no cover


# the dict's own get, mapped over the names in C (one Python call less per name and per checkpoint)
_ENV_GET: Any = _ENVIRON_DATA.get if isinstance(_ENVIRON_DATA, dict) else _raw_env


def project_keyring(*, create: bool = False) -> Keyring | None:
    """``AGENTRT_BLOB_KEY``, else the project key file (created first when ``create``).

    The key file is read once per process and environment (``Machine.get()`` runs on
    every checkpoint); a key added by ``agentrt keygen`` is used by processes started after.
    """
    cache_key = tuple(map(_ENV_GET, _PROJECT_ENV))
    ring = _PROJECT_CACHE.get(cache_key)
    if ring is not None:
        return ring
    ring = env_keyring()
    if ring is None:
        path = project_key_path()
        ring = read_key_file(path)
        if ring is None and create:
            _create_key_file(path)
            ring = read_key_file(path)
    if ring is not None:
        if len(_PROJECT_CACHE) > 16:
            _PROJECT_CACHE.clear()
        _PROJECT_CACHE[cache_key] = ring
    return ring


def store_key_path(database: str | os.PathLike[str]) -> Path:
    """The key file of a file-based store: ``<database>.key`` beside it."""
    return Path(os.fspath(database) + ".key")


def store_keyring(database: str | os.PathLike[str], *, create: bool) -> Keyring | None:
    """``AGENTRT_BLOB_KEY``, else the store's key file (created 0600 when ``create`` and missing)."""
    ring = env_keyring()
    if ring is not None:
        return ring
    path = store_key_path(database)
    if create:
        with contextlib.suppress(OSError):  # a read-only location: the store reports its own error
            _create_key_file(path)
    return read_key_file(path)


def keyring_for_store(store: object) -> Keyring:
    """The keys the blobs of ``store`` are signed with: its own (``store.keyring``), else the project's."""
    ring = getattr(store, "keyring", None) or project_keyring(create=True)
    if not isinstance(ring, Keyring):  # pragma: no cover - project_keyring(create=True) makes one
        raise TypeError(f"store {store!r} has a keyring that is not an agentrt.keys.Keyring: {ring!r}")
    return ring


def require_key(location: str, key_file: str | os.PathLike[str] | None = None) -> Keyring:
    """The keyring a shared store must have: ``AGENTRT_BLOB_KEY`` or ``key_file``; else ``StoreError``.

    A store several machines share cannot create a key on first use (each would
    make its own), so it refuses to start until the operator provides one.
    """
    from agentrt.exceptions import StoreError

    ring = env_keyring()
    if ring is None and key_file is not None:
        ring = read_key_file(key_file)
    if ring is None:
        where = f" or put one in {os.fspath(key_file)!r}" if key_file is not None else ""
        raise StoreError(
            f"store {location} is shared, so it needs a blob key and has none: run `agentrt keygen` "
            f"and set {KEY_ENV} to the printed key on every machine that uses the store{where}"
        )
    return ring
