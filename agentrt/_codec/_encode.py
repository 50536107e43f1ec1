"""Encoding: the C pickler, with ``reducer_override`` routing every non-builtin object.

Builtin atoms and containers never leave C; identity, sharing and cycles come
from pickle's memo.  Everything else goes through ``_reduce`` (or a registered
frame extension), which only ever emits calls of agentrt reconstructors.  When
the pickler meets something it cannot hold, encoding stops and ``_paths``
re-walks the graph -- slowly, on the error path only -- to say where it is.
"""

from __future__ import annotations

import io
import pickle
import types

from agentrt._codec._code_identity import code_digest, findable
from agentrt._codec._format import FLAG_CLOUDPICKLE, blob_key, pack
from agentrt._codec._paths import explain_failure, explain_refusal
from agentrt._codec._reduce import Refused, Unresolvable, reduce_value
from agentrt.exceptions import AgentrtError

PROTOCOL = 5


class CodeTable:
    """The ``EncodeContext`` half of an encoder: the blob's code table and header flags.

    The table is created on first use, so encoding plain data pays nothing for it.
    """

    flags: int = 0
    codes: list[tuple[str, str, str]] | tuple[()] = ()
    _code_index: dict[int, int] | None = None
    _code_keep: list[types.CodeType]

    def code_ref(self, code: types.CodeType, module: str) -> int:
        """Record ``code``'s identity in the header (once per blob) and return its index."""
        if self._code_index is None:
            self._code_index, self.codes, self._code_keep = {}, [], []
        index = self._code_index.get(id(code))
        if index is None:
            index = len(self.codes)
            self.codes.append(_identity(code, module))  # type: ignore[union-attr]
            self._code_index[id(code)] = index
            self._code_keep.append(code)  # ids stay unique while the blob is written
        return index


_IDENTITIES: dict[tuple[int, str], tuple[types.CodeType, tuple[str, str, str]]] = {}


def _identity(code: types.CodeType, module: str) -> tuple[str, str, str]:
    """The header entry for ``code``, after checking ``resolve_code`` will find it again.

    ``findable`` caches its positive answers per module object; the digest is cached
    here, so a chain checkpointed again and again pays two dict lookups per frame.
    """
    reason = findable(code, module)
    if reason is not None:
        raise Unresolvable(reason)
    known = _IDENTITIES.get((id(code), module))
    if known is not None and known[0] is code:
        return known[1]
    identity = (module, code.co_qualname, code_digest(code))
    _IDENTITIES[(id(code), module)] = (code, identity)
    return identity


class Encoder(CodeTable, pickle.Pickler):
    """The C pickler plus agentrt's reducers (``reduce_value`` is the ``reducer_override`` method)."""

    reducer_override = reduce_value


def _encoder(buffer: io.BytesIO, use_cloudpickle: bool) -> CodeTable:
    if use_cloudpickle:
        from agentrt._codec._cloud import cloud_encoder

        return cloud_encoder(buffer)
    return Encoder(buffer, PROTOCOL)


def dumps(
    root: object,
    *,
    use_cloudpickle: bool = False,
    key: bytes | None = None,
    bind: tuple[str, str | None, int | None] | None = None,
) -> bytes:
    """Encode ``root`` and everything it reaches into a self-describing blob.

    Raises ``CannotCrossAwait`` naming the first value that cannot be held and
    the path to it.  ``use_cloudpickle=True`` writes a cloudpickle payload
    instead (frames still go through the extensions); such blobs only load with
    ``allow_cloudpickle=True``.  The blob is signed with ``key`` (default: the first
    key of ``AGENTRT_BLOB_KEY``; b"" writes an unsigned blob) and records ``bind``, the
    use it was written for (kind, run id, sequence), under the signature.
    """
    buffer = io.BytesIO()
    encoder = _encoder(buffer, use_cloudpickle)
    refusal: Refused | None = None
    try:
        encoder.dump(root)  # type: ignore[attr-defined]
    except Refused as refused:
        refusal = refused  # raised below, outside this handler: the error keeps no __context__
    except AgentrtError:
        raise
    except Exception as exc:
        raise explain_failure(root, exc, use_cloudpickle=use_cloudpickle) from exc
    if refusal is not None:
        raise explain_refusal(root, refusal)
    flags = encoder.flags | (FLAG_CLOUDPICKLE if use_cloudpickle else 0)
    return pack(encoder.codes, flags, buffer.getbuffer(), blob_key() if key is None else key, bind)
