"""One checkpoint blob against the code loaded now: judge its frames, and move them.

:func:`judge` reads the blob's frame records *without building anything*: the
payload is verified and scanned like any load, then unpickled in the codec's
dry mode (every reconstructor returns an inert token) while the ``frame``
extension's arguments -- plain ints, tuples and strings -- are recorded.  Each
record is judged by :func:`agentrt._frames._migrate.plan_move` against the code
of the same module:qualname in this process.

:func:`migrate` performs the moves: the blob is decoded with the header's code
table resolved to the *new* code objects and the ``frame`` extension replaced by
:class:`~agentrt._frames._migrate.MigratingFrames`; the restored chain is primed
(only synthesized prologues run, no agent code) and checkpointed again, which
writes a blob naming the new code.  That blob is then loaded once more, the
ordinary way, to prove it restores.
"""

from __future__ import annotations

import io
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any  # Any: pickle records and user migrations; JSON reports

import attrs

from agentrt import _codec
from agentrt._codec import (
    DRY,
    FLAG_CLOUDPICKLE,
    FLAG_REFERENCING,
    RECONSTRUCTORS,
    STRICT,
    VERIFIED,
    Bind,
    CodeIdentity,
    _wire,
    check_bounds,
    check_payload,
    code_digest,
    find_module,
    short,
    unpack,
)
from agentrt._codec import DRY_TOKEN as _TOKEN
from agentrt._codec import ReconstructContext as DecodeContext
from agentrt._codec import RestrictedUnpickler as _Loader
from agentrt._codec import apply_extension as _apply_extension
from agentrt._codec import codes_by_qualname as _index
from agentrt._codec import unpickle_payload as _unpickle
from agentrt._context import split_root
from agentrt._frames import (
    FrameMigration,
    MigratingFrames,
    Move,
    MovedFrame,
    Verdict,
    abandon,
    plan_move,
    restored_pending,
)
from agentrt._frames import ParsedFrameRecord as FrameRecord
from agentrt._upgrade._registry import Migration, find_migration
from agentrt.exceptions import CorruptBlob, IncompatibleBlob
from agentrt.keys import Keyring, project_keyring
from agentrt.lowlevel import _is_request

__all__ = ["BlobReport", "FrameReport", "RestartNeed", "judge", "migrate"]


@attrs.frozen
class FrameReport:
    """One line of ``agentrt upgrade``: a suspended frame (or a function value) of a run."""

    function: str  # module:qualname
    verdict: Verdict
    digest: str  # the digest the checkpoint names (the old code's)
    site: str
    reason: str
    new_digest: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "verdict": self.verdict.text,
            "digest": self.digest,
            "site": self.site,
            "reason": self.reason,
        }


@attrs.frozen
class RestartNeed:
    """A frame that does not move as it is, for which an ``@agentrt.migrate(..., restart=True)``
    is registered: ``agentrt upgrade`` looks for an earlier safe point (see ``_restart``)."""

    position: int  # index of its record among the blob's frame records (outermost first)
    record: FrameRecord
    identity: CodeIdentity
    migration: Migration
    frame: FrameReport


@attrs.frozen
class BlobReport:
    verdict: Verdict
    frames: tuple[FrameReport, ...]
    migrations: dict[int, FrameMigration]  # header index -> how its frames move (changed code only)
    identities: tuple[CodeIdentity, ...]
    new_codes: tuple[types.CodeType | None, ...]
    restarts: tuple[RestartNeed, ...] = ()  # outermost first
    records: tuple[FrameRecord | None, ...] = ()  # every frame record, parsed (None: unreadable)
    at: dict[int, FrameReport] = attrs.field(factory=dict)  # record position -> its frame's report


class _Recorder(_Loader):
    """The dry-mode unpickler, keeping the arguments of every ``frame`` extension call."""

    records: list[tuple[Any, ...]]

    def find_class(self, module: str, name: str) -> Any:
        if module == _wire.WIRE_MODULE and name == "ext":
            return self._record
        return super().find_class(module, name)

    def _record(self, name: object, *args: Any) -> Any:
        if name == "frame":
            self.records.append(args)
        return _TOKEN


def _check_unsigned(payload: bytes, blob_size: int) -> None:
    """What a restore checks before an unsigned payload reaches the C unpickler, even a dry run of
    it: the opcode allowlist and the decode bounds (depth, expanded size, hashing), so a forged row
    cannot crash or stall ``agentrt upgrade`` / ``check --against`` any more than ``Machine.set``."""
    check_payload(payload)
    check_bounds(payload, blob_size)


def frame_records(
    blob: bytes, keys: Sequence[bytes] | None = None
) -> tuple[tuple[CodeIdentity, ...], list[tuple[Any, ...]]]:
    """The code table and the raw ``frame`` records of ``blob`` (outermost frame first).

    A signed blob is verified with ``keys`` (default: the project's keys, as ``Machine.set`` does;
    a store's: see ``agentrt.keys.keyring_for_store``)."""
    envelope = unpack(blob, keys if keys is not None else _project_ring().read)
    if envelope.flags & FLAG_CLOUDPICKLE:
        raise IncompatibleBlob(
            "the checkpoint was written with use_cloudpickle=True, which upgrade does not read"
        )
    if not envelope.keyed:
        _check_unsigned(envelope.payload, len(blob))
    stream = io.BytesIO(envelope.payload)
    loader = _Recorder(stream, fix_imports=False)
    loader.ctx = None
    loader.mode = DRY
    loader.signed = envelope.keyed
    loader.records = []
    try:
        loader.load()
    except (CorruptBlob, IncompatibleBlob):
        raise
    except Exception as exc:
        raise CorruptBlob(f"checkpoint payload cannot be read ({type(exc).__name__}: {exc})") from exc
    return envelope.codes, loader.records


def _new_code(identity: CodeIdentity, allow: frozenset[str]) -> tuple[types.CodeType | None, str]:
    """The code of ``identity``'s module:qualname loaded now (the same digest if it is still there)."""
    try:
        module = find_module(identity.module, allow)
    except IncompatibleBlob as exc:
        return None, str(exc)
    candidates = _index(module, refresh=True).get(identity.qualname, [])
    for candidate in candidates:
        if code_digest(candidate) == identity.digest:
            return candidate, ""
    if not candidates:
        return None, f"{identity.module}:{identity.qualname} no longer exists (renamed, moved or deleted)"
    if len(candidates) > 1:
        return (
            None,
            f"{identity.module}:{identity.qualname} is defined {len(candidates)} times in the new code",
        )
    return candidates[0], ""


#: ``resolver(identity) -> (the new code of its module:qualname, or None and why not)``
Resolver = Callable[[CodeIdentity], tuple[types.CodeType | None, str]]


def judge(
    blob: bytes,
    allow_modules: Iterable[str] = (),
    *,
    resolver: Resolver | None = None,
    migrations: bool = True,
    keys: Sequence[bytes] | None = None,
    restart_at: tuple[int, Migration] | None = None,
) -> BlobReport:
    """Every frame of ``blob`` judged against the new code: by default the code loaded in this process
    (modules in the code table may be imported: they are the application's own); ``resolver`` finds
    it elsewhere (``agentrt check --against`` compiles the files instead).  ``migrations``: consult the
    ``@agentrt.migrate`` registry.  ``restart_at``: ``(position, migration)`` -- the frame record at
    that position is moved by that migration (a restart's safe point: its locals there are mapped)."""
    identities, raw_records = frame_records(blob, keys)
    if resolver is None:
        allow = frozenset(allow_modules) | {identity.module for identity in identities}
        resolved = [_new_code(identity, allow) for identity in identities]
    else:
        resolved = [resolver(identity) for identity in identities]
    frames: list[FrameReport] = []
    moves: dict[int, dict[tuple[int, tuple[int, ...]], Move]] = {}
    users: dict[int, Any] = {}
    framed: set[int] = set()
    restarts: list[RestartNeed] = []
    at: dict[int, FrameReport] = {}
    parsed = [FrameRecord.parse(args) for args in raw_records]
    for position, record in enumerate(parsed):
        if record is None or not 0 <= record.code_index < len(identities):
            continue
        index = record.code_index
        framed.add(index)
        identity = identities[index]
        name = f"{identity.module}:{identity.qualname}"
        new_code, why_not = resolved[index]
        site_ref = record.info.site if record.info is not None else None
        if new_code is None:
            label = site_ref.label() if site_ref is not None else ""
            frames.append(FrameReport(name, Verdict.BLOCKED, identity.digest, label, why_not))
            at[position] = frames[-1]
            continue
        new_digest = code_digest(new_code)
        migration = (
            find_migration(identity.module, identity.qualname, identity.digest, site_ref)
            if migrations and new_digest != identity.digest
            else None
        )
        if restart_at is not None and restart_at[0] == position:
            migration = restart_at[1]
        elif migration is not None and migration.restart:
            move = plan_move(record, identity.digest, new_code, new_digest, False)
            if move.verdict > Verdict.MIGRATES:  # the frame does not move as it is: restart it
                report = FrameReport(
                    name,
                    move.verdict,
                    identity.digest,
                    move.site,
                    f"{move.reason}; a restart migration is registered: it restarts at an earlier safe point",
                    new_digest,
                )
                frames.append(report)
                at[position] = report
                restarts.append(RestartNeed(position, record, identity, migration, report))
                continue
            migration = None  # it moves without the restart
        move = plan_move(record, identity.digest, new_code, new_digest, migration is not None)
        frames.append(FrameReport(name, move.verdict, identity.digest, move.site, move.reason, new_digest))
        at[position] = frames[-1]
        if new_digest != identity.digest:
            moves.setdefault(index, {})[(record.status, record.bound)] = move
            if migration is not None:
                users[index] = migration.fn
    for index, identity in enumerate(identities):
        if index in framed:
            continue
        frames.extend(_function_value(identity, resolved[index]))
    moved = {
        index: FrameMigration(
            resolved[index][0],  # type: ignore[arg-type]  # moves holds only codes that resolved (None continues above)
            per_frame,
            users.get(index),
            f"{identities[index].module}:{identities[index].qualname}",
        )
        for index, per_frame in moves.items()
    }
    verdict = max((frame.verdict for frame in frames), default=Verdict.UNCHANGED)
    return BlobReport(
        verdict,
        tuple(frames),
        moved,
        identities,
        tuple(code for code, _ in resolved),
        tuple(restarts),
        tuple(parsed),
        at,
    )


def _function_value(identity: CodeIdentity, resolved: tuple[types.CodeType | None, str]) -> list[FrameReport]:
    """A code entry no frame uses: a function object held by the run (a closure, a callback)."""
    new_code, why_not = resolved
    name = f"{identity.module}:{identity.qualname}"
    if new_code is None:
        return [
            FrameReport(
                name, Verdict.BLOCKED, identity.digest, "", f"a function value the run holds: {why_not}"
            )
        ]
    new_digest = code_digest(new_code)
    if new_digest == identity.digest:
        return []
    return [
        FrameReport(
            name,
            Verdict.MIGRATES,
            identity.digest,
            "",
            f"a function value the run holds; it will run its new code ({short(new_digest)})",
            new_digest,
        )
    ]


def migrate(
    blob: bytes,
    report: BlobReport,
    *,
    ring: Keyring | None = None,
    bind: Bind | None = None,
    moved: list[MovedFrame] | None = None,
) -> bytes:
    """The blob with every changed frame moved to the new code (``report.verdict`` must be migrates).

    The blob is verified with ``ring`` (a store's keys; default: the project's, as ``Machine.set``
    does) and the new one signed with its writing key and bound to ``bind`` (default: a checkpoint
    of no run, as ``Machine.get()`` writes; a store's run: its run id and sequence).  ``moved``
    receives what each move did (sites, locals mapped, supplied and dropped), outermost first."""
    if report.verdict > Verdict.MIGRATES:
        raise IncompatibleBlob(f"the checkpoint does not migrate: it is {report.verdict.text}")
    ring = ring if ring is not None else _project_ring()
    bind = bind if bind is not None else ("checkpoint", None, None)
    envelope = unpack(blob, ring.read)
    codes = [code for code in report.new_codes if code is not None]
    if len(codes) != len(report.new_codes):
        raise IncompatibleBlob("the checkpoint names code that no longer exists")
    allow = frozenset(identity.module for identity in report.identities)
    referencing = bool(envelope.flags & FLAG_REFERENCING)
    ctx = DecodeContext(envelope.codes, codes, allow, verified=referencing)
    ctx.signed = envelope.keyed
    if not envelope.keyed:
        _check_unsigned(envelope.payload, len(blob))
        if referencing:
            _unpickle(envelope.payload, None, DRY)
    frames = MigratingFrames(report.migrations)
    stream = io.BytesIO(envelope.payload)
    loader = _Migrating(stream, fix_imports=False)
    loader.ctx = ctx
    loader.mode = VERIFIED if referencing else STRICT
    loader.signed = envelope.keyed
    loader.frames = frames
    # As Machine.set: a refused move abandons every frame it built (no finally / __exit__ runs, no
    # resume code reaches the disk cache); a kept one releases its resume code to the cache.
    try:
        root = loader.load()  # the chain, or the chain with the run's context variables (kept as they are)
        coro = split_root(root)[0]
        ctx.finish_graph()
        ctx.run_after_load()
    except (CorruptBlob, IncompatibleBlob):
        ctx.refuse()
        raise
    except Exception as exc:
        ctx.refuse()
        raise IncompatibleBlob(
            f"moving the checkpoint to the new code failed: {type(exc).__name__}: {exc}"
        ) from exc
    except BaseException:
        ctx.refuse()
        raise
    if moved is not None:
        moved.extend(frames.moved)
    try:
        if not _is_request(restored_pending(coro)):
            raise CorruptBlob("the moved chain did not re-suspend on an agentrt suspend()")
        new_blob = _codec.dumps(root, key=ring.write, bind=bind)
    except BaseException:
        ctx.refuse()
        raise
    else:
        ctx.accept()
    finally:
        abandon(coro)
    _prove(new_blob, ring)
    return new_blob


class _Migrating(_Loader):
    """The ordinary loader, with ``frame`` extension calls going to :class:`MigratingFrames`."""

    frames: MigratingFrames

    def find_class(self, module: str, name: str) -> Any:
        if module == _wire.WIRE_MODULE and name == "ext" and self.mode != DRY:
            return self._ext
        return super().find_class(module, name)

    def _ext(self, name: object, *args: Any) -> Any:
        ctx = self.ctx
        assert ctx is not None
        if name != "frame":
            return RECONSTRUCTORS["ext"](ctx, name, *args)
        if not ctx.verified:
            raise CorruptBlob("frame objects need a verified blob, and this one did not declare it")
        obj = self.frames.create(ctx, *args)
        ctx.expect_state(obj, _apply_extension, self.frames)
        return obj


def _project_ring() -> Keyring:
    ring = project_keyring(create=True)
    if ring is None:  # pragma: no cover - project_keyring(create=True) makes one
        raise IncompatibleBlob("no blob key: run `agentrt keygen`")
    return ring


def _prove(blob: bytes, ring: Keyring) -> None:
    """Load the migrated blob the way a resume will, then let it go without running anything."""
    coro = split_root(_codec.loads(blob, keys=ring.read))[0]
    try:
        if not _is_request(restored_pending(coro)):
            raise CorruptBlob("the migrated checkpoint does not restore to a suspended agent")
    finally:
        abandon(coro)
