"""Append-only JSON Lines files that survive a torn write (the bus log, its fan-out record).

A writer appends one whole line (``json`` + ``\\n``) and fsyncs; a process killed mid-write can
still leave a partial last line.  Without care that one line wedges the file: every later reader
and every later append (which reads the last ``seq`` first) raises ``JSONDecodeError``.  So:

- :func:`repair_tail` runs under the writer's lock, before an append.  A last line without its
  newline is either a complete record (the kill came just before the ``\\n``: the newline is added,
  nothing is lost) or a torn one (it is moved, byte for byte, to the side file ``<name>.torn``
  and the file is truncated at the end of its last complete line).
- :func:`read_records` never raises on a bad line: it skips it with one logged warning naming
  the file and the line (a reader without the lock may also meet a line a live writer is still
  writing).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any  # Any: JSON records

__all__ = ["append_lines", "quarantine_path", "read_records", "repair_tail"]

logger = logging.getLogger("agentrt.teams")


def quarantine_path(path: Path) -> Path:
    """Where :func:`repair_tail` keeps the torn bytes of ``path``: ``<name>.torn`` beside it."""
    return path.with_name(path.name + ".torn")


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        return None
    return value if isinstance(value, dict) else None


def repair_tail(path: Path, complete: Callable[[dict[str, Any]], bool] = lambda _: True) -> str | None:
    """Make ``path`` end with a whole line; call it holding the writer's lock.

    ``complete(record)`` says whether a parsed last line (one missing only its newline) is a
    whole record worth keeping.  Returns what was done (for the log), or ``None`` when the file
    was already whole.
    """
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        size_bytes = os.fstat(fd).st_size
        if size_bytes == 0:
            return None
        os.lseek(fd, size_bytes - 1, os.SEEK_SET)
        if os.read(fd, 1) == b"\n":
            return None
        # find the start of the last line: the byte after the last newline (or 0)
        start_bytes = 0
        chunk_bytes = 65536
        end_bytes = size_bytes
        while end_bytes > 0:
            begin = max(0, end_bytes - chunk_bytes)
            os.lseek(fd, begin, os.SEEK_SET)
            block = os.read(fd, end_bytes - begin)
            nl = block.rfind(b"\n")
            if nl >= 0:
                start_bytes = begin + nl + 1
                break
            end_bytes = begin
        os.lseek(fd, start_bytes, os.SEEK_SET)
        tail = os.read(fd, size_bytes - start_bytes)
        record = _parse(tail)
        if record is not None and complete(record):
            os.lseek(fd, size_bytes, os.SEEK_SET)
            os.write(fd, b"\n")
            os.fsync(fd)
            done = f"{path}: its last line lacked only its newline; the newline was added"
        else:
            side = quarantine_path(path)
            with open(side, "ab") as f:
                f.write(tail + b"\n")
                f.flush()
                os.fsync(f.fileno())
            os.ftruncate(fd, start_bytes)
            os.fsync(fd)
            done = (
                f"{path}: a torn last line ({len(tail)} bytes at byte {start_bytes}, a writer killed "
                f"mid-write) was moved to {side.name} and the file truncated to its last whole line"
            )
    finally:
        os.close(fd)
    logger.warning("agentrt: %s", done)
    return done


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of ``path`` in order; a line that is not a JSON object is skipped with a warning."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        record = _parse(line)
        if record is None:
            logger.warning(
                "agentrt: %s line %d is not a whole JSON record (%d bytes; a torn or in-progress "
                "write); skipped. The next publish repairs a torn last line.",
                path,
                number,
                len(line),
            )
            continue
        out.append(record)
    return out


def append_lines(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Append one line per record in a single write, and fsync (call it holding the writer's lock)."""
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
    if not text:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
