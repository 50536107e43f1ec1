"""Decoding: verify the envelope, resolve code, then run the C unpickler under a leash.

The C ``Unpickler`` is fast, and its ``find_class`` is the only door to globals:
here it opens onto agentrt's reconstructors and nothing else.  An unkeyed
payload is first checked against the opcodes agentrt writes (``_scan``).  One
gap remains: REDUCE calls *whatever object is on the stack*, and referencing
reconstructors put functions and classes there.  Blobs that use them carry the
"referencing" header flag; unless the digest is keyed (``AGENTRT_BLOB_KEY``:
nobody without the key can forge a blob), such a blob is first unpickled in a
*dry run* where every reconstructor returns the same inert token.  The token
cannot be called, built, appended to or given items, so the dry run fails --
``CorruptBlob`` -- exactly when the pickle would use a reconstructed object as
anything but data.  Only then does the real run build objects.  Blobs without
the flag may not call referencing reconstructors at all.
"""

from __future__ import annotations

import io
import pickle
import types
from collections.abc import Iterable
from typing import Any, Final

from agentrt._codec import _wire
from agentrt._codec._code_identity import resolve_code
from agentrt._codec._format import FLAG_CLOUDPICKLE, FLAG_REFERENCING, unpack
from agentrt._codec._reconstruct import RECONSTRUCTORS, DecodeContext
from agentrt._codec._scan import check_payload
from agentrt.exceptions import CorruptBlob, IncompatibleBlob, InternalInconsistency

STRICT: Final = "strict"  # safe reconstructors only
VERIFIED: Final = "verified"  # all reconstructors (authenticated, or passed the dry run)
DRY: Final = "dry"  # every reconstructor returns the inert token
CLOUD: Final = "cloudpickle"  # trusted cloudpickle payload: ordinary globals allowed too

_MAX_MESSAGE_CHARS = 200
_NO_MODULES: frozenset[str] = frozenset()


class _Token:
    """What every reconstructor returns during the dry run: an object pickle can only store."""

    __slots__ = ()


_TOKEN = _Token()


def _dry(*args: object) -> _Token:
    return _TOKEN


class _Loader(pickle.Unpickler):
    """The C unpickler with ``find_class`` restricted to this load's reconstructors."""

    ctx: DecodeContext | None
    mode: str

    def find_class(self, module: str, name: str) -> Any:
        if module == _wire.WIRE_MODULE and name in _wire.ALL_NAMES:
            if self.mode == DRY:
                return _dry
            if name in _wire.REFERENCING and self.mode == STRICT:
                raise CorruptBlob(
                    f"blob calls the agentrt reconstructor {name!r} but its header does not declare "
                    "referencing reconstructors: it was modified"
                )
            return types.MethodType(RECONSTRUCTORS[name], self.ctx)
        if self.mode == CLOUD:
            return super().find_class(module, name)
        raise CorruptBlob(
            f"blob names {module!r:.{_MAX_MESSAGE_CHARS}}.{name!r:.{_MAX_MESSAGE_CHARS}}, "
            "which is not an agentrt "
            "reconstructor: it was modified or was not written by agentrt; nothing was executed"
        )


def _unpickle(payload: bytes, ctx: DecodeContext | None, mode: str) -> Any:
    stream = io.BytesIO(payload)
    loader = _Loader(stream, fix_imports=False)
    loader.ctx = ctx
    loader.mode = mode
    obj = loader.load()
    if stream.tell() != len(payload):
        raise CorruptBlob(
            f"blob payload has {len(payload) - stream.tell()} bytes after its end: it was modified"
        )
    return obj


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= _MAX_MESSAGE_CHARS else text[:_MAX_MESSAGE_CHARS] + "..."


def loads(blob: bytes, *, allow_modules: Iterable[str] = (), allow_cloudpickle: bool = False) -> object:
    """Rebuild the value held by ``blob``.

    Code and classes are looked up only in modules already imported or named in
    ``allow_modules``.  Raises ``CorruptBlob`` for truncated, modified or
    malformed blobs and ``IncompatibleBlob`` when the blob was written by other
    code, another Python minor or another format version.
    """
    if isinstance(allow_modules, str):
        raise TypeError(f"allow_modules takes module names, e.g. allow_modules=({allow_modules!r},)")
    allowed = frozenset(allow_modules) if allow_modules else _NO_MODULES
    envelope = unpack(blob)
    cloud = bool(envelope.flags & FLAG_CLOUDPICKLE)
    if cloud and not allow_cloudpickle:
        raise IncompatibleBlob(
            "blob was written with use_cloudpickle=True; loading it can run arbitrary code, so pass "
            "allow_cloudpickle=True only for blobs you wrote yourself"
        )
    codes = [resolve_code(code.module, code.qualname, code.digest, allowed) for code in envelope.codes]
    referencing = bool(envelope.flags & FLAG_REFERENCING)
    ctx = DecodeContext(envelope.codes, codes, allowed, verified=referencing or cloud)
    try:
        if not envelope.keyed and not cloud:
            check_payload(envelope.payload)
        if cloud:
            mode = CLOUD
        elif referencing:
            if not envelope.keyed:
                _unpickle(envelope.payload, None, DRY)
            mode = VERIFIED
        else:
            mode = STRICT
        obj = _unpickle(envelope.payload, ctx, mode)
        ctx.finish_graph()
    except (CorruptBlob, IncompatibleBlob, InternalInconsistency):
        raise  # an engine bug (InternalInconsistency) is never blamed on the blob
    except Exception as exc:
        raise CorruptBlob(
            f"blob payload cannot be decoded ({_describe(exc)}); it was truncated or modified"
        ) from exc
    ctx.run_after_load()
    return obj
