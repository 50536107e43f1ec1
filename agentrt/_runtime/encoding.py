"""Journal entries: tool results and errors as small codec blobs, errors as JSON records.

Each blob is signed with the store's key and bound to where it belongs (``BlobSeal``):
a result decodes only as the result of that run, sequence and member, an error only
as that error, and only in the store it was written for (the store's ``store_id``), so a
store writer without the key cannot replay, move or re-label them, nor copy them in from
another store that shares the key.
"""

from __future__ import annotations

import os
import traceback
from typing import TYPE_CHECKING, Any  # Any: journaled values are the agent's own

import attrs

from agentrt import _codec
from agentrt._codec import NOT_PLAIN, Bind, Requirement, dumps_plain, dumps_plain_with_copy, loads_plain
from agentrt.exceptions import ToolError
from agentrt.keys import Keyring, keyring_for_store

if TYPE_CHECKING:
    from agentrt.stores.base import Store

__all__ = [
    "BlobSeal",
    "decode_error",
    "decode_value",
    "encode_error",
    "encode_value",
    "error_record",
    "type_name",
]


def type_name(exc: BaseException) -> str:
    tp = type(exc)
    return tp.__qualname__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__qualname__}"


@attrs.frozen
class BlobSeal:
    """How one journal blob is signed and checked: the keyring and the use it is bound to.

    ``kind`` is ``checkpoint``, ``value#<member>`` or ``error#<member>`` (a run's own failure:
    ``error``); ``run_id`` and ``seq`` complete the binding.  ``None`` seals (tests, tools
    used without a runtime) fall back to the codec's defaults: unbound, ``AGENTRT_BLOB_KEY``.
    """

    ring: Keyring
    kind: str
    run_id: str | None
    seq: int | None
    #: the id of the store the blob belongs to (None: a store without one, or no store)
    store_id: str | None = None
    #: a checkpoint's predecessor's digest (hex), which its signature covers
    chain: str | None = None
    #: the store was migrated from an agentrt without store ids: it takes blobs sealed for no store
    legacy_ok: bool = False

    @property
    def bind(self) -> Bind:
        if self.store_id is None:
            return (self.kind, self.run_id, self.seq)
        return (self.kind, self.run_id, self.seq, self.store_id, self.chain)

    def requirement(self) -> Requirement:
        return Requirement(
            signed=True,
            kind=self.kind,
            run_id=self.run_id,
            seq=self.seq,
            store=self.store_id,
            legacy_ok=self.legacy_ok,
        )


def store_id_of(store: object) -> str | None:
    """The identity of ``store`` its blobs are sealed for (None: a store that has none)."""
    store_id = getattr(store, "store_id", None)
    return store_id if isinstance(store_id, str) else None


def seal_for(
    store: Store, kind: str, run_id: str, seq: int | None, chain: bytes | str | None = None
) -> BlobSeal:
    """The seal of a blob of ``store``: its keyring (``agentrt.keys.keyring_for_store``), its identity
    and the binding; ``chain`` (a checkpoint's) is the digest of the checkpoint before it."""
    if isinstance(chain, bytes):
        chain = chain.hex() if chain else None
    return BlobSeal(
        keyring_for_store(store),
        kind,
        run_id,
        seq,
        store_id_of(store),
        chain,
        getattr(store, "legacy_blobs", False) is True,
    )


def checkpoint_bind(store: Store, run_id: str, seq: int, chain: bytes | str | None) -> Bind:
    """What a checkpoint of ``run_id`` at ``seq`` in ``store`` is bound to (see :func:`seal_for`;
    built directly: the runtime binds one per step)."""
    store_id = store_id_of(store)
    if store_id is None:
        return ("checkpoint", run_id, seq)
    if isinstance(chain, bytes):
        chain = chain.hex() if chain else None
    return ("checkpoint", run_id, seq, store_id, chain)


def encode_result(store: Store, run_id: str, seq: int, idx: int, ok: bool, value: Any) -> bytes:
    """The journal blob of member ``idx``'s result at ``seq``: signed, bound to exactly that place."""
    if ok:
        return encode_value(value, seal_for(store, f"value#{idx}", run_id, seq))
    return encode_error(value, seal_for(store, f"error#{idx}", run_id, seq))


def encode_result_with_copy(
    store: Store, run_id: str, seq: int, idx: int, ok: bool, value: Any
) -> tuple[bytes, tuple[bool, Any] | None]:
    """``encode_result``, plus for plain data the ``(ok, value)`` that decoding the blob gives (a copy
    through its own pickle payload), so the runtime need not verify a blob it has just signed."""
    if ok:
        kind = "value#0" if idx == 0 else f"value#{idx}"  # the binding seal_for would give
        store_id = store_id_of(store)
        bind: Bind = (kind, run_id, seq) if store_id is None else (kind, run_id, seq, store_id, None)
        made = dumps_plain_with_copy(value, keyring_for_store(store).write, bind)
        if made is not None:
            return made[0], (True, made[1])
    return encode_result(store, run_id, seq, idx, ok, value), None


def decode_result(store: Store, run_id: str, seq: int, idx: int, ok: bool, blob: bytes) -> tuple[bool, Any]:
    """``(ok, value)`` of a journal blob, refused unless signed for that run, sequence and member."""
    if ok:
        return True, decode_value(blob, seal_for(store, f"value#{idx}", run_id, seq))
    return False, decode_error(blob, seal_for(store, f"error#{idx}", run_id, seq))


def _dump(value: Any, seal: BlobSeal | None) -> bytes:
    if seal is None:
        return _codec.dumps(value)
    # plain data (most tool results): the same blob, without the codec's per-blob set-up
    blob = dumps_plain(value, seal.ring.write, seal.bind)
    if blob is not None:
        return blob
    return _codec.dumps(value, key=seal.ring.write, bind=seal.bind)


def _load(blob: bytes, seal: BlobSeal | None) -> Any:
    if seal is None:
        return _codec.loads(blob)
    requirement = seal.requirement()
    # a signed blob of plain data: C unpickling with no global allowed; anything else, the codec
    value = loads_plain(blob, seal.ring.read, seal.ring.source, requirement)
    if value is not NOT_PLAIN:
        return value
    return _codec.loads(blob, keys=seal.ring.read, key_source=seal.ring.source, require=requirement)


def encode_value(value: Any, seal: BlobSeal | None = None) -> bytes:
    """A tool's result as a blob; raises the codec's error (``CannotCrossAwait``...) if it cannot be held."""
    return _dump(value, seal)


def decode_value(blob: bytes, seal: BlobSeal | None = None) -> Any:
    return _load(blob, seal)


def _fallback(exc: BaseException) -> ToolError:
    if isinstance(exc, ToolError):
        return exc
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return ToolError(type_name(exc), str(exc), text)


def encode_error(exc: BaseException, seal: BlobSeal | None = None) -> bytes:
    """An exception as a blob that always decodes: the original if it can be rebuilt, else a ToolError."""
    fallback = _fallback(exc)
    inner: bytes | None
    try:
        inner = _dump(exc, seal)
    except Exception:
        inner = _dumps_without_chain(seal, exc)
    return _dump({"error": fallback, "original": inner}, seal)


def _dumps_without_chain(seal: BlobSeal | None, exc: BaseException) -> bytes | None:
    """Encode ``exc`` without its ``__cause__`` / ``__context__`` (which may hold what cannot be encoded)."""
    saved = exc.__cause__, exc.__context__, exc.__suppress_context__
    try:
        exc.__cause__ = None
        exc.__context__ = None
        return _dump(exc, seal)
    except Exception:
        return None
    finally:
        exc.__cause__, exc.__context__ = saved[0], saved[1]
        exc.__suppress_context__ = saved[2]


def decode_error(blob: bytes, seal: BlobSeal | None = None) -> BaseException:
    entry = _load(blob, seal)
    if type(entry) is not dict or not isinstance(entry.get("error"), BaseException):
        from agentrt.exceptions import CorruptBlob

        raise CorruptBlob(f"a journaled error holds a {type(entry).__name__}, not an error record")
    if type(entry.get("original")) is bytes:
        try:
            exc = _load(entry["original"], seal)
            if isinstance(exc, BaseException):
                return exc
        except Exception:
            pass
    error: BaseException = entry["error"]  # checked above
    return error


def error_record(exc: BaseException) -> dict[str, Any]:
    """The JSON error of a failed run: type, message, code, traceback (and AR codes' location)."""
    if isinstance(exc, ToolError):
        record: dict[str, Any] = {"type": exc.type_name, "message": exc.message}
    else:
        record = {"type": type_name(exc), "message": str(exc)}
    code = getattr(exc, "code", None)
    if isinstance(code, str):
        record["code"] = code
    for attr in ("function", "filename", "lineno", "cause"):
        value = getattr(exc, attr, None)
        if isinstance(value, (str, int)):
            record[attr] = value
    fields = getattr(exc, "record_fields", None)
    if callable(fields):  # e.g. a model provider's error.message / type / code
        record.update(fields())
    if getattr(exc, "hide_internal_frames", False):
        tb = _user_traceback(exc)
    else:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if isinstance(exc, ToolError) and exc.traceback_text:
        tb = exc.traceback_text + tb
    record["traceback"] = tb
    return record


#: The agentrt package directory (with a trailing separator): frames from here are the runtime's.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_traceback(exc: BaseException) -> str:
    """The traceback of an error that reports something outside the agent's code (a provider's
    answer): only the agent's frames, not the runtime's that delivered the error to it."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not os.path.abspath(f.filename).startswith(_PACKAGE)
    ]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    return "".join(lines + traceback.format_exception_only(type(exc), exc))
