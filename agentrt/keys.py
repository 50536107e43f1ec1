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

A key is only worth signing with if nobody else knows it, so every key is
checked before use (:func:`key_problem`, :func:`key_file_problem`) and
refused with :class:`~agentrt.exceptions.BlobKeyRejected` when it is short
(under 32 bytes: a hex key counts its decoded bytes, so 64 hex digits), a
pattern (a repeated character), or lives in a key file that is a symlink,
belongs to another user, or is open to group or others (mode 0600 or stricter).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import secrets
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any  # Any: os.environ's private encoding hooks are untyped

import attrs

if TYPE_CHECKING:
    from agentrt.exceptions import BlobKeyRejected

__all__ = [
    "KEY_ENV",
    "KEY_FILE_ENV",
    "MIN_KEY_BYTES",
    "Keyring",
    "add_key",
    "env_keyring",
    "key_file_problem",
    "key_problem",
    "keyring_for_store",
    "project_key_path",
    "project_keyring",
    "require_key",
    "store_keyring",
]

KEY_ENV = "AGENTRT_BLOB_KEY"
KEY_FILE_ENV = "AGENTRT_KEY_FILE"
_MAX_KEY_BYTES = 64  # BLAKE2b's key limit
MIN_KEY_BYTES = 32  # spec §7.3: key material of at least 32 bytes
# A rough floor on what the key's own byte counts say it holds: 32 random bytes measure ~150 bits
# this way, a repeated character 0 and "ab" * 16 32; it catches patterns, not weak passphrases.
_MIN_KEY_BITS = 128
_KEY_FIX = "make one with `agentrt keygen --print` (64 hex digits = 32 random bytes)"


def _key_material(text: str) -> bytes:
    """The bytes a key's strength is measured on: a hex key's decoded bytes, else its UTF-8 bytes."""
    stripped = text.strip()
    if stripped and len(stripped) % 2 == 0:
        with contextlib.suppress(ValueError):
            return bytes.fromhex(stripped)
    return text.encode("utf-8", "surrogateescape")


def key_problem(text: str) -> str | None:
    """Why ``text`` is no key to sign with (too short, or a pattern), or None when it will do."""
    material = _key_material(text)
    if len(material) < MIN_KEY_BYTES:
        return f"{len(material)} byte(s) long; a key needs at least {MIN_KEY_BYTES} bytes of key material"
    counts = [material.count(byte) for byte in set(material)]
    bits = max(0.0, -sum(n * math.log2(n / len(material)) for n in counts))
    if bits < _MIN_KEY_BITS:
        return (
            f"a pattern, not a secret ({len(set(material))} distinct byte value(s) in {len(material)}; "
            f"about {bits:.0f} bits by their counts, {_MIN_KEY_BITS} needed)"
        )
    return None


def key_file_problem(info: os.stat_result, path: str) -> str | None:
    """Why the key file ``path`` (its ``lstat``/``fstat``) may hold a key someone else chose or can read."""
    if stat.S_ISLNK(info.st_mode):
        return (
            "is a symlink, and a key file must be the file itself (a planted link names a key "
            f"someone else knows): remove the link and run `agentrt keygen --file {path}`"
        )
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file: remove it and run `agentrt keygen`"
    uid = getattr(os, "geteuid", None)
    if uid is not None and info.st_uid != uid():
        return (
            f"belongs to uid {info.st_uid}, not to this user (uid {uid()}): remove it and run "
            f"`agentrt keygen --file {path}`, or run as its owner"
        )
    if os.name == "posix" and stat.S_IMODE(info.st_mode) & 0o077:
        return (
            f"is readable or writable by group or others (mode {stat.S_IMODE(info.st_mode):04o}): "
            f"run `chmod 600 {path}` (and make a new key with `agentrt keygen --file {path}` "
            "if others may have read it)"
        )
    return None


def _reject(message: str) -> BlobKeyRejected:
    from agentrt.exceptions import BlobKeyRejected

    return BlobKeyRejected(message)


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
        parts = text.split(",")
        for number, part in enumerate(parts, 1):
            problem = key_problem(part) if part else None
            if problem is not None:
                which = f"key {number} of {len(parts)} in ${KEY_ENV}" if len(parts) > 1 else f"${KEY_ENV}"
                raise _reject(f"{which} is {problem}: {_KEY_FIX} and set {KEY_ENV} to it")
        keys = [part.encode("utf-8", "surrogateescape") for part in parts if part]
        cached = Keyring.of(keys, f"${KEY_ENV}")
        _ENV_CACHE.clear()
        _ENV_CACHE[text] = cached
    return cached


_ENV_CACHE: dict[str, Keyring | None] = {}
_FILE_CACHE: dict[str, tuple[tuple[int, ...], Keyring | None]] = {}


def _stamp(info: os.stat_result) -> tuple[int, ...]:
    """What must stay the same for a checked, cached key file to still be the one checked."""
    return (info.st_mtime_ns, info.st_ino, info.st_dev, info.st_mode, info.st_uid, info.st_size)


def read_key_file(path: str | os.PathLike[str]) -> Keyring | None:
    """The keys in ``path`` (None if it does not exist or holds none); re-read when the file changes.

    Raises :class:`~agentrt.exceptions.BlobKeyRejected` for a file someone else could have planted
    or read (:func:`key_file_problem`) and for a key in it that is no secret (:func:`key_problem`).
    """
    name = os.fspath(path)
    try:
        info = os.lstat(name)
    except FileNotFoundError:
        return None
    cached = _FILE_CACHE.get(name)
    if cached is not None and cached[0] == _stamp(info):
        return cached[1]
    problem = key_file_problem(info, name)
    if problem is not None:
        raise _reject(f"blob key file {name} {problem}")
    # O_NOFOLLOW and fstat: the file read is the file checked, not a link swapped in between
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    with os.fdopen(fd, encoding="utf-8") as f:
        info = os.fstat(f.fileno())
        problem = key_file_problem(info, name)
        if problem is not None:
            raise _reject(f"blob key file {name} {problem}")
        lines = [line.split("#", 1)[0].strip() for line in f]
    for number, line in enumerate(lines, 1):
        problem = key_problem(line) if line else None
        if problem is not None:
            raise _reject(
                f"blob key file {name}, line {number}: the key is {problem}; {_KEY_FIX} "
                f"(`agentrt keygen --file {name}` puts a new one first) and delete the weak line"
            )
    ring = Keyring.of([_parse_key(line) for line in lines if line], name)
    _FILE_CACHE[name] = (_stamp(info), ring)
    return ring


def add_key(path: str | os.PathLike[str]) -> None:
    """Put a new random key first in ``path`` (created 0600, with its directory); old keys stay to read."""
    _PROJECT_CACHE.clear()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # the old keys stay readable keys, so they must be this user's own: a planted file is refused
    old = target.read_text(encoding="utf-8") if read_key_file(target) is not None else ""
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
            f"store {location} is shared, so it needs a blob key and has none: run `agentrt keygen --print` "
            f"and set {KEY_ENV} to the printed key on every machine that uses the store{where}"
        )
    return ring
