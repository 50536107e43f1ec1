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
import os
import pickle
import sys
import types
from collections.abc import Iterable, Sequence
from typing import Any, Final  # Any: unpickling yields any Python object

import attrs

from agentrt._codec import _reconstruct_plain, _wire
from agentrt._codec._bounds import check_bounds, describe_error, short
from agentrt._codec._code_identity import resolve_code
from agentrt._codec._format import FLAG_CLOUDPICKLE, FLAG_REFERENCING, CodeIdentity, Envelope, unpack
from agentrt._codec._reconstruct import RECONSTRUCTORS, DecodeContext
from agentrt._codec._scan import check_payload
from agentrt.exceptions import CorruptBlob, IncompatibleBlob, InternalInconsistency

if not _reconstruct_plain.REGISTERED or set(RECONSTRUCTORS) != _wire.ALL_NAMES:
    # the wire names and the reconstructors (of _reconstruct and _reconstruct_plain) are one list
    raise ImportError(
        f"agentrt codec: reconstructors and wire names differ: {set(RECONSTRUCTORS) ^ _wire.ALL_NAMES}"
    )

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
    signed: bool = False  # the envelope verified with a key: SIGNED_ONLY reconstructors allowed

    def find_class(self, module: str, name: str) -> Any:
        if module == _wire.WIRE_MODULE and name in _wire.ALL_NAMES:
            if name in _wire.SIGNED_ONLY and not self.signed:
                raise CorruptBlob(
                    f"blob calls the agentrt reconstructor {name!r}, which restores an object through the "
                    "pickle protocol (or reopens a client) and is allowed only in a signed blob, and this "
                    "blob is not signed; nothing was executed. Write it signed (Machine.get() signs by "
                    "default; `agentrt keygen`), or mark the class @agentrt.serializable so unsigned "
                    "blobs can hold it"
                )
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
            f"blob names {short(module, 80)}.{short(name, 80)}, "
            "which is not an agentrt "
            "reconstructor: it was modified or was not written by agentrt; nothing was executed"
        )


def _unpickle(payload: bytes, ctx: DecodeContext | None, mode: str, signed: bool = False) -> Any:
    stream = io.BytesIO(payload)
    loader = _Loader(stream, fix_imports=False)
    loader.ctx = ctx
    loader.mode = mode
    loader.signed = signed
    obj = loader.load()
    if stream.tell() != len(payload):
        raise CorruptBlob(
            f"blob payload has {len(payload) - stream.tell()} bytes after its end: it was modified"
        )
    return obj


@attrs.frozen
class Requirement:
    """What a caller accepts from a blob: whether it must be signed, and what it must be bound to.

    ``kind`` is the use (``checkpoint``, ``value``, ``error``); ``run_id`` and ``seq``, when
    not None, must match the binding exactly, so a genuine blob of another run, another
    sequence number or another use is refused (replay, transplant, kind confusion).
    ``unsigned_hint`` names the caller's opt-in for unsigned blobs in the refusal.
    """

    signed: bool
    kind: str | None  # None: any use (a dump shows whatever it is given)
    run_id: str | None = None
    seq: int | None = None
    unsigned_hint: str = ""
    #: ``AGENTRT_ALLOW_UNSIGNED=1`` opts in too (read only when a blob is unsigned: a signed
    #: restore never looks at the environment)
    env_opt_in: bool = False
    #: the id of the store the blob must be sealed for (None: any store, or none)
    store: str | None = None
    #: whether a signed blob sealed for no store (written before stores had identities) is taken
    #: where ``store`` is required: only by a store that was migrated from such a version
    legacy_ok: bool = False

    def check(self, envelope: Envelope) -> None:
        if not envelope.keyed:
            if self.signed and not (self.env_opt_in and unsigned_allowed(False)):
                raise CorruptBlob(
                    "agentrt blob is not signed, so it is refused: an unsigned blob can resume any "
                    "imported coroutine at any await with locals of its author's choosing. Sign "
                    f"blobs with a key (Machine.get() does by default; `agentrt keygen`), or opt in: "
                    f"{self.unsigned_hint or 'allow_unsigned=True'} (or {UNSIGNED_ENV}=1)"
                )
            return
        bind = envelope.bind
        if self.kind is None:
            return
        if bind is None or bind[0] != self.kind:
            got = "no use" if bind is None else f"use {short(bind[0], 40)}"
            raise CorruptBlob(
                f"agentrt blob was signed for {got}, not for a {self.kind}: a genuine blob was put "
                "where it does not belong (kind confusion)"
            )
        if (self.run_id is not None and bind[1] != self.run_id) or (
            self.seq is not None and bind[2] != self.seq
        ):
            raise CorruptBlob(
                f"agentrt blob is a {self.kind} of run {short(bind[1], 60)} at sequence {short(bind[2])}, "
                f"not of run {short(self.run_id, 60)} at sequence {short(self.seq)}: a genuine blob was "
                "replayed or moved to another run"
            )
        if self.store is not None and envelope.store != self.store:
            self._wrong_store(envelope, bind)

    def _wrong_store(self, envelope: Envelope, bind: tuple[str, str | None, int | None]) -> None:
        what = f"the {self.kind} of run {short(bind[1], 60)} at sequence {short(bind[2])}"
        if envelope.store is None:
            if self.legacy_ok:
                return
            raise CorruptBlob(
                f"agentrt blob {what} is sealed for no store (the format of agentrt before store "
                f"identities), and store {self.store} takes only blobs sealed for it: a blob copied in "
                "from elsewhere is refused even under the same key. To bring a run from another "
                "store, use `agentrt move RUN --from SOURCE --to TARGET`"
            )
        raise CorruptBlob(
            f"agentrt blob {what} was sealed for store {short(envelope.store, 40)}, and this is store "
            f"{self.store}: a genuine blob copied from another store is refused even under the same "
            "key. To move a run between stores, use `agentrt move RUN --from SOURCE --to TARGET`"
        )


UNSIGNED_ENV = "AGENTRT_ALLOW_UNSIGNED"


def unsigned_allowed(explicit: bool) -> bool:
    """The caller's opt-in for unsigned blobs: its own flag, or ``AGENTRT_ALLOW_UNSIGNED=1``."""
    return explicit or (UNSIGNED_ENV in os.environ and os.environ[UNSIGNED_ENV] in ("1", "true", "yes"))


def _describe(exc: BaseException) -> str:
    return describe_error(exc, _MAX_MESSAGE_CHARS)


#: id(a parsed code table) -> (that table, the module objects, the code objects it resolved to).
#: A header is parsed once (``_format``) and its table object reused, so a run restored again and
#: again resolves its code once: the answer stands while each module is the same ``sys.modules``
#: entry (a resolved code is found by module object, qualname and digest, all unchanged then).
_RESOLVED: dict[int, tuple[tuple[CodeIdentity, ...], tuple[object, ...], tuple[types.CodeType, ...]]] = {}
_MAX_RESOLVED = 1024


def _resolve_codes(
    identities: tuple[CodeIdentity, ...], allowed: frozenset[str]
) -> tuple[types.CodeType, ...]:
    """``resolve_code`` for every entry of a code table, remembered per table (see ``_RESOLVED``)."""
    cached = _RESOLVED.get(id(identities))
    if cached is not None and cached[0] is identities:
        modules = sys.modules
        for identity, module in zip(identities, cached[1]):  # noqa: B905 - built together, same length
            if modules.get(identity.module) is not module:
                break
        else:
            return cached[2]
    codes = tuple(resolve_code(code.module, code.qualname, code.digest, allowed) for code in identities)
    if len(_RESOLVED) >= _MAX_RESOLVED:
        _RESOLVED.clear()
    _RESOLVED[id(identities)] = (
        identities,
        tuple(sys.modules.get(code.module) for code in identities),
        codes,
    )
    return codes


def loads(
    blob: bytes,
    *,
    allow_modules: Iterable[str] = (),
    allow_cloudpickle: bool = False,
    keys: Sequence[bytes] | None = None,
    key_source: str = "",
    require: Requirement | None = None,
    session: list[DecodeContext] | None = None,
    describe: bool = False,
) -> object:
    """Rebuild the value held by ``blob``.

    Code and classes are looked up only in modules already imported or named in
    ``allow_modules``.  Raises ``CorruptBlob`` for truncated, modified or
    malformed blobs and ``IncompatibleBlob`` when the blob was written by other
    code, another Python minor or another format version.  A signed blob must
    verify with one of ``keys`` (default: ``AGENTRT_BLOB_KEY``).  ``require`` says
    what the caller accepts (signed only, and which binding); ``session`` receives
    the decode context, so a caller that refuses the result can abandon what it built.
    ``describe=True`` (``agentrt dump``) decodes frames as validated records, never as
    live frames: nothing is synthesized, primed or run (see ``agentrt._frames._records``).
    """
    if isinstance(allow_modules, str):
        raise TypeError(f"allow_modules takes module names, e.g. allow_modules=({allow_modules!r},)")
    allowed = frozenset(allow_modules) if allow_modules else _NO_MODULES
    envelope = unpack(blob, keys, key_source)
    if require is not None:
        require.check(envelope)
    cloud = bool(envelope.flags & FLAG_CLOUDPICKLE)
    if cloud and not allow_cloudpickle:
        raise IncompatibleBlob(
            "blob was written with use_cloudpickle=True; loading it can run arbitrary code, so pass "
            "allow_cloudpickle=True only for blobs you wrote yourself"
        )
    codes = _resolve_codes(envelope.codes, allowed) if envelope.codes else ()
    referencing = bool(envelope.flags & FLAG_REFERENCING)
    ctx = DecodeContext(envelope.codes, codes, allowed, verified=referencing or cloud)
    ctx.signed = envelope.keyed  # extensions relax nothing else for it (see _frames._validate)
    ctx.describe = describe
    if session is not None:
        session.append(ctx)
    try:
        if not cloud and not envelope.keyed:
            # what an unauthenticated payload may show the C unpickler (gh-115952): only the opcodes
            # agentrt writes, building no more than the blob's size allows.  A signed payload was
            # written by a key holder, who may name ``call`` -- any importable callable -- anyway,
            # so neither check would stop anything its author could not do (blob-format §8).
            check_payload(envelope.payload)
            check_bounds(envelope.payload, len(blob))
        if cloud:
            mode = CLOUD
        elif referencing:
            if not envelope.keyed:
                _unpickle(envelope.payload, None, DRY)
            mode = VERIFIED
        else:
            mode = STRICT
        obj = _unpickle(envelope.payload, ctx, mode, envelope.keyed)
        ctx.finish_graph()
        ctx.run_after_load()
    except (CorruptBlob, IncompatibleBlob, InternalInconsistency):
        ctx.refuse()
        raise  # an engine bug (InternalInconsistency) is never blamed on the blob
    except Exception as exc:
        ctx.refuse()
        raise CorruptBlob(
            f"blob payload cannot be decoded ({_describe(exc)}); it was truncated or modified"
        ) from exc
    except BaseException:
        ctx.refuse()
        raise
    if session is None:
        ctx.accept()  # otherwise the caller accepts or refuses once it has checked the result
    return obj
