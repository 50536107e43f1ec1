"""What code a checkpoint needs to be restored, as one canonical text: what a worker compares.

A blob names its code by ``(module, qualname, digest)`` in its header and is written
by one blob format and one Python minor; a process restores it only when it reads that
format, runs that minor, and finds every entry again with the same digest
(:func:`~agentrt._codec._code_identity.resolve_code`).  The runtime writes this text
beside each checkpoint on the run row (``RunRecord.code_required``), so a worker of a
mixed fleet knows from the row alone whether it can restore a run, and its claims pass
over the runs it cannot (``claim_runnable(lacking=...)``)::

    agentrt-blob 2 python 3.12
    app.agents:ask_color 376102e1a4aca430d2cc3529f161ae23
    app.agents:run 6f6318da4ddaf97c666b83d0c90a256a

Entries are sorted and unique, so two checkpoints that need the same code have the same
text however their chains are laid out.
"""

from __future__ import annotations

from agentrt._codec._code_identity import resolve_code
from agentrt._codec._compat import PYTHON_MAJOR, PYTHON_MINOR
from agentrt._codec._format import PREFIX_SIZE_BYTES, READABLE_VERSIONS, CodeIdentity, _parse_codes, _split
from agentrt.exceptions import IncompatibleBlob

__all__ = ["code_requirement", "lacking_code", "parse_requirement"]

_TEXTS: dict[bytes, str] = {}
_MAX_CACHED = 1024  # a process checkpoints a bounded set of chains; never grow without bound


def code_requirement(blob: bytes) -> str:
    """The text naming what restoring ``blob`` needs (cached per code table: a run checkpoints the
    same chain again and again).  ``CorruptBlob`` / ``IncompatibleBlob`` if its header is unreadable."""
    version, major, minor, _flags, _, payload_start = _split(blob)
    raw = bytes(blob[PREFIX_SIZE_BYTES:payload_start])
    # The header ends with the blob's binding (run id and *sequence*: new at every checkpoint), which
    # is not what the blob needs: key the cache on the code table before it.  A '"' inside a JSON
    # string is escaped, so ',"bind":' can only be the key itself.
    cut = raw.rfind(b',"bind":')
    table = raw[:cut] + b"}" if cut >= 0 else raw
    key = bytes((version, major, minor)) + table
    text = _TEXTS.get(key)
    if text is None:
        lines = sorted({f"{c.module}:{c.qualname} {c.digest}" for c in _parse_codes(table)})
        text = "\n".join([f"agentrt-blob {version} python {major}.{minor}", *lines])
        if len(_TEXTS) >= _MAX_CACHED:
            _TEXTS.clear()
        _TEXTS[key] = text
    return text


def parse_requirement(text: str) -> tuple[int, str, tuple[CodeIdentity, ...]] | None:
    """``(format version, "major.minor", code identities)`` of a requirement text; None if it is not one
    (the row is not trusted more than any other input)."""
    head, *rest = text.split("\n")
    parts = head.split(" ")
    if len(parts) != 4 or parts[0] != "agentrt-blob" or parts[2] != "python" or not parts[1].isdigit():
        return None
    codes = []
    for line in rest:
        name, _, digest = line.rpartition(" ")
        module, sep, qualname = name.partition(":")
        if not (sep and module and qualname and digest):
            return None
        codes.append(CodeIdentity(module, qualname, digest))
    return int(parts[1]), parts[3], tuple(codes)


def lacking_code(text: str) -> str:
    """Why this process cannot restore a checkpoint that needs ``text``; "" when it can.

    Judged the way a restore judges it: the same blob format and Python minor, and every
    function found with the same digest in a module *already imported* (the runtime imports
    a run's agent module before it restores the run; nothing else is imported here)."""
    parsed = parse_requirement(text)
    if parsed is None:
        return f"the run row's code requirement is not readable ({text[:80]!r})"
    version, python, codes = parsed
    if version not in READABLE_VERSIONS:  # format 1 is still read: in-flight runs of an older agentrt
        readable = ", ".join(map(str, READABLE_VERSIONS))
        return f"its checkpoint has blob format {version}, and this agentrt reads formats {readable}"
    here = f"{PYTHON_MAJOR}.{PYTHON_MINOR}"
    if python != here:
        return f"its checkpoint was written by Python {python}, and this process runs Python {here}"
    for code in codes:
        try:
            resolve_code(code.module, code.qualname, code.digest)
        except IncompatibleBlob as exc:
            return str(exc)
    return ""
