"""A persistent cache of the deterministic, costly part of a cold restore: liveness analyses and
synthesized resume code.

The first restore of a function in a process analyses its bytecode (~6 ms) and builds resume code
with ``bytecode`` (~15 ms); every process that resumes runs pays it again, although the result
depends only on the function's code and agentrt's own.  So results are kept next to Python's
own bytecode cache, in ``__pycache__/agentrt/`` beside the agent's source file, as ``marshal``
data -- the format and the trust of ``.pyc`` files: whoever can write there can already change
what the interpreter runs.  A directory that cannot be written is simply not used.

Entries are keyed by a digest of the code object (agentrt's code identity -- bytecode, names,
constants -- plus, for it and every nested code object, the file, qualname, first line and line
table, which the resume code carries for tracebacks), of the interpreter
(``sys.implementation.cache_tag``), of the ``bytecode`` version and of agentrt's analysis and
synthesis source, so an edit on either side never meets a stale entry.  (``marshal.dumps(code)``
would not do as a key: its output depends on reference counts.)  A missing, unreadable or
malformed entry is recomputed and rewritten; nothing here can make a restore fail.
``AGENTRT_CODE_CACHE=0`` turns it off.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import sys
import tempfile
import threading
from types import CodeType
from typing import Any  # Any: cached analyses are marshal data of any shape

import bytecode

from agentrt._codec import code_digest

__all__ = ["begin_deferred", "enabled", "end_deferred", "load", "store"]

_DIR_NAME = "agentrt"
_FORMAT = 1


def _environment_digest() -> bytes:
    """What, besides the code object, decides the cached results."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{_FORMAT}:{sys.implementation.cache_tag}:{sys.version}".encode())
    h.update(str(getattr(bytecode, "__version__", "?")).encode())
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("_liveness.py", "_resume.py", "_layout.py", "_diskcache.py"):
        with open(os.path.join(here, name), "rb") as f:
            h.update(f.read())
    return h.digest()


@functools.cache
def _environment() -> bytes:
    return _environment_digest()  # on first use, not at import: most processes never restore


def enabled() -> bool:
    return os.environ.get("AGENTRT_CODE_CACHE", "1").lower() not in ("0", "off", "no", "false")


def _directory(code: CodeType) -> str | None:
    source = code.co_filename
    if not os.path.isabs(source) or not os.path.isfile(source):
        return None  # <string>, a zip import, a frozen module: no place of its own
    return os.path.join(os.path.dirname(source), "__pycache__", _DIR_NAME)


def _path(code: CodeType, kind: str, extra: object) -> str | None:
    directory = _directory(code)
    if directory is None:
        return None
    h = hashlib.blake2b(_environment(), digest_size=16)
    h.update(code_digest(code).encode())
    _update_locations(h, code)
    h.update(repr((kind, extra)).encode())
    stem = os.path.splitext(os.path.basename(code.co_filename))[0]
    name = "".join(c if c.isalnum() or c == "_" else "-" for c in code.co_name)
    return os.path.join(directory, f"{stem}.{name}.{kind}.{h.hexdigest()}.marshal")


def _update_locations(h: Any, code: CodeType) -> None:
    h.update(repr((code.co_filename, code.co_qualname, code.co_firstlineno)).encode())
    h.update(code.co_linetable)
    for const in code.co_consts:
        if type(const) is CodeType:
            _update_locations(h, const)


def load(code: CodeType, kind: str, extra: object = None) -> Any:
    """The cached value for (``code``, ``kind``, ``extra``), or None."""
    if not enabled():
        return None
    try:
        path = _path(code, kind, extra)
        if path is None:
            return None
        with open(path, "rb") as f:
            return marshal.loads(f.read())
    except Exception:  # absent, unreadable, truncated, from another marshal version: recompute
        return None


_local = threading.local()


def begin_deferred() -> list[tuple[CodeType, str, object, Any]]:
    """Hold this thread's writes until :func:`end_deferred`: a load writes nothing if it is refused."""
    pending: list[tuple[CodeType, str, object, Any]] = []
    _local.pending = pending
    return pending


def end_deferred(pending: list[tuple[CodeType, str, object, Any]], *, write: bool) -> None:
    if getattr(_local, "pending", None) is pending:
        _local.pending = None
    if write:
        for entry in pending:
            store(*entry)
    pending.clear()


def store(code: CodeType, kind: str, extra: object, value: Any) -> None:
    """Keep ``value`` (marshal data) for (``code``, ``kind``, ``extra``); silently skipped if impossible."""
    if not enabled():
        return
    pending = getattr(_local, "pending", None)
    if pending is not None:
        pending.append((code, kind, extra, value))
        return
    try:
        path = _path(code, kind, extra)
        if path is None:
            return
        data = marshal.dumps(value)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)  # atomic: a concurrent reader sees the old entry or the new one
        except BaseException:
            os.unlink(tmp)
            raise
    except Exception:
        return
