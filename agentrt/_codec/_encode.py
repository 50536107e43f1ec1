"""Encoding: the C pickler, with ``reducer_override`` routing every non-builtin object.

Builtin atoms and containers never leave C; identity, sharing and cycles come
from pickle's memo.  Everything else goes through ``_reduce`` (or a registered
frame extension), which only ever emits calls of agentrt reconstructors; in a
signed blob those include ``call``, the pickle protocol of an importable class.  When
the pickler meets something it cannot hold, encoding stops and ``_paths``
re-walks the graph -- slowly, on the error path only -- to say where it is.
"""

from __future__ import annotations

import io
import pickle

from agentrt._codec._codetable import PROTOCOL as PROTOCOL
from agentrt._codec._codetable import CodeTable as CodeTable
from agentrt._codec._format import FLAG_CLOUDPICKLE, FLAG_REFERENCING, Bind, blob_key, pack
from agentrt._codec._paths import explain_failure, explain_refusal
from agentrt._codec._preset import preset_memo, with_preamble
from agentrt._codec._reduce import Refused, reduce_value
from agentrt.exceptions import AgentrtError


class Encoder(CodeTable, pickle.Pickler):
    """The C pickler plus agentrt's reducers (``reduce_value`` is the ``reducer_override`` method)."""

    reducer_override = reduce_value
    signed = False  # set per blob: a signed blob carries what the pickle protocol can (``_pickled``)


def _encoder(buffer: io.BytesIO, use_cloudpickle: bool) -> CodeTable:
    if use_cloudpickle:
        from agentrt._codec._cloud import cloud_encoder

        return cloud_encoder(buffer)
    encoder = Encoder(buffer, PROTOCOL)
    encoder.memo = preset_memo()  # agentrt's commonest reconstructor names: no callback for them
    encoder.reads = set()
    return encoder


def dumps(
    root: object,
    *,
    use_cloudpickle: bool = False,
    key: bytes | None = None,
    bind: Bind | None = None,
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
    if key is None:
        key = blob_key()
    signed = bool(key)
    encoder.signed = signed  # type: ignore[attr-defined]  # CodeTable is always mixed into a Pickler
    refusal: Refused | None = None
    try:
        encoder.dump(root)  # type: ignore[attr-defined]  # CodeTable is always mixed into a Pickler
    except Refused as refused:
        refusal = refused  # raised below, outside this handler: the error keeps no __context__
    except AgentrtError:
        raise
    except Exception as exc:
        raise explain_failure(root, exc, use_cloudpickle=use_cloudpickle, signed=signed) from exc
    if refusal is not None:
        raise explain_refusal(root, refusal, signed=signed)
    flags = encoder.flags
    if use_cloudpickle:
        flags |= FLAG_CLOUDPICKLE
        payload: bytes | memoryview = buffer.getbuffer()
    else:
        payload, referencing = with_preamble(buffer.getbuffer(), encoder.reads)
        if referencing:
            flags |= FLAG_REFERENCING
    return pack(encoder.codes, flags, payload, key, bind, encoder.format_version, encoder.needs)
