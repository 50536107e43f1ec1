"""The lean path for plain data: journal values that are only builtin atoms and containers.

Most tool results are JSON-like data (dicts, lists, strings, numbers).  For those,
the codec's pickler never calls a reducer, so its payload is what the C pickler
writes on its own behind the codec's preamble (``_preset``, which then names
nothing): :func:`dumps_plain` writes the C pickler's output alone, without the
codec's per-blob set-up, in the same envelope (same format, same flags, same
signature and binding), so every agentrt reads these blobs and this path reads
the codec's.

:func:`loads_plain` reads a *signed* blob whose payload names no global at all:
after the envelope's digest is checked against the keys and the binding against
what the caller requires, the C unpickler runs with a ``find_class`` that refuses
every global (a signed payload skips the opcode allowlist, as in the codec).  So it
builds only atoms and containers -- less than the codec's strict mode allows.  Any other blob
(unsigned, with a code table, or calling a reconstructor) answers
:data:`NOT_PLAIN` and the caller uses the full codec.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Sequence
from typing import Any, Final  # Any: an unpickled value is any builtin data

from agentrt._codec._codetable import PROTOCOL
from agentrt._codec._decode import Requirement
from agentrt._codec._format import FLAG_SIGNED, Bind, pack, unpack
from agentrt.exceptions import CorruptBlob

__all__ = ["NOT_PLAIN", "dumps_plain", "dumps_plain_with_copy", "is_plain", "loads_plain"]

#: What :func:`loads_plain` answers for a blob the full codec must read.
NOT_PLAIN: Final = object()

_ATOMS: Final = frozenset({type(None), bool, int, float, str, bytes})
_MAX_DEPTH = 32
_MAX_ITEMS = 4096


def is_plain(value: object) -> bool:
    """Whether ``value`` is builtin atoms in exact dicts, lists and tuples (small and acyclic enough
    to be checked here: at most 32 deep and 4,096 items; anything bigger takes the full codec)."""
    tp = type(value)
    if isinstance(value, dict) and tp is dict and len(value) <= _MAX_ITEMS:  # a flat dict, checked here
        atoms = _ATOMS
        for k, v in value.items():
            if type(k) not in atoms or type(v) not in atoms:
                break
        else:
            return True
    elif tp in _ATOMS:
        return True
    budget = [_MAX_ITEMS]
    return _plain(value, 0, budget)


def _plain(value: object, depth: int, budget: list[int]) -> bool:
    tp = type(value)
    if tp in _ATOMS:
        return True
    if depth >= _MAX_DEPTH:
        return False
    budget[0] -= 1
    if budget[0] < 0:
        return False
    if tp is dict:
        return all(
            _plain(k, depth + 1, budget) and _plain(v, depth + 1, budget)
            for k, v in value.items()  # type: ignore[attr-defined]  # tp is dict: mypy does not narrow on type()
        )
    if tp is list or tp is tuple:
        return all(_plain(item, depth + 1, budget) for item in value)  # type: ignore[attr-defined]  # a list or tuple
    return False


def dumps_plain(value: object, key: bytes, bind: Bind | None) -> bytes | None:
    """The signed blob of plain ``value`` (the codec's own bytes for it), or None if it is not plain."""
    made = dumps_plain_with_copy(value, key, bind)
    return None if made is None else made[0]


def dumps_plain_with_copy(value: object, key: bytes, bind: Bind | None) -> tuple[bytes, object] | None:
    """``(blob, copy)`` for plain ``value``: ``copy`` is what loading the blob gives (its payload
    unpickled), without verifying a signature this process just made; None if not plain."""
    if not key or not is_plain(value):
        return None
    payload = pickle.dumps(value, PROTOCOL)
    return pack((), 0, payload, key, bind), pickle.loads(payload)


class _NamesAGlobal(Exception):
    pass


class _PlainLoader(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise _NamesAGlobal


def loads_plain(blob: bytes, keys: Sequence[bytes], key_source: str, require: Requirement) -> object:
    """The value of a signed plain blob, or :data:`NOT_PLAIN`; raises ``CorruptBlob`` as the codec
    does for a blob that fails its digest or its binding."""
    envelope = unpack(blob, keys, key_source)
    require.check(envelope)
    if not envelope.keyed or envelope.codes or envelope.flags != FLAG_SIGNED:
        return NOT_PLAIN
    payload = envelope.payload
    stream = io.BytesIO(payload)
    try:
        value = _PlainLoader(stream, fix_imports=False).load()
    except _NamesAGlobal:
        return NOT_PLAIN
    except Exception as exc:
        raise CorruptBlob(f"blob payload cannot be decoded ({type(exc).__name__}); it was modified") from exc
    if stream.tell() != len(payload):
        raise CorruptBlob(
            f"blob payload has {len(payload) - stream.tell()} bytes after its end: it was modified"
        )
    return value
