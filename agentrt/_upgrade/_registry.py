"""``@agentrt.migrate``: user migrations of suspended frames, registered at import time.

A migration is looked up by the *new* function (module and qualname of its
code), the digest of the *old* code (as ``agentrt upgrade --dry-run`` prints it;
any prefix of at least 8 hex digits) and, optionally, the old site (its number
``#N`` as printed, the site's label, or the source text of its await).

``restart=True`` registers a migration for a frame whose await cannot be moved (it was
removed, say): ``agentrt upgrade`` then restarts that frame at its last completed step,
an earlier checkpoint, and the function maps *that* frame's locals (see
:mod:`agentrt._upgrade._restart`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import CodeType
from typing import Any  # Any: user migrations map JSON-like frame locals

import attrs

from agentrt._frames import SiteRef, normalized

__all__ = ["Migration", "find_migration", "migrate"]

MigrationFn = Callable[[dict[str, Any]], dict[str, Any]]
_MIN_DIGEST_CHARS = 8


@attrs.frozen
class Migration:
    module: str
    qualname: str
    from_digest: str
    site: int | str | None
    fn: MigrationFn
    restart: bool = False

    def matches_site(self, ref: SiteRef | None) -> bool:
        if self.site is None:
            return True
        if ref is None:
            return False
        if isinstance(self.site, int):
            return self.site == ref.ordinal + 1
        return self.site == ref.label() or (
            bool(ref.source) and normalized(self.site) == normalized(ref.source)
        )


_MIGRATIONS: list[Migration] = []


def _code_of(function: Any) -> tuple[str, CodeType]:
    target = function
    run = getattr(function, "run", None)
    if not inspect.isfunction(target) and inspect.isfunction(run):
        target = run  # an agentrt Agent: its run coroutine function
    target = inspect.unwrap(target) if inspect.isfunction(target) else target
    code = getattr(target, "__code__", None)
    if not isinstance(code, CodeType):
        raise TypeError(
            f"@agentrt.migrate needs the new version of the function (an async def, generator or agent), "
            f"got {function!r}"
        )
    return target.__module__, code


def migrate(
    function: Any, *, from_digest: str, site: int | str | None = None, restart: bool = False
) -> Callable[[MigrationFn], MigrationFn]:
    """Register ``def m(old_locals: dict) -> dict`` as the migration of ``function``'s frames that were
    checkpointed with code ``from_digest`` (at ``site``).

    ``m`` receives the old frame's locals by name and returns the new frame's live
    locals by name (locals it does not return are carried over by name when the old
    frame has them).  ``agentrt upgrade --dry-run`` prints ``from_digest`` and ``site``
    for every frame that needs one.  The function stays callable, so it can be tested
    like any code.

    ``restart=True``: when the frame suspended at ``site`` does not move as it is (its await
    was removed, the value stack changed, a live local is missing), ``agentrt upgrade``
    restarts it at its last completed step -- the newest earlier checkpoint at which this
    frame waited at an await the new code has, whose answer is journaled -- and ``m``
    receives the locals of the frame *at that checkpoint*.  The run goes on from there with
    that answer; what ran after it is run again by the new code.  The rules (which
    checkpoints qualify, and what becomes of the requests issued since) are in docs/upgrade.md.
    """
    if not isinstance(from_digest, str) or len(from_digest) < _MIN_DIGEST_CHARS:
        raise ValueError(
            f"@agentrt.migrate(from_digest=...) takes the old code's digest as printed by "
            f"'agentrt upgrade --dry-run' (at least {_MIN_DIGEST_CHARS} hex digits), got {from_digest!r}"
        )
    if site is not None and not isinstance(site, (int, str)):
        raise TypeError(f"@agentrt.migrate(site=...) takes the site number or its text, got {site!r}")
    if not isinstance(restart, bool):
        raise TypeError(f"@agentrt.migrate(restart=...) takes True or False, got {restart!r}")
    module, code = _code_of(function)

    def register(fn: MigrationFn) -> MigrationFn:
        if not callable(fn):
            raise TypeError(f"@agentrt.migrate decorates a function, got {fn!r}")
        _MIGRATIONS.append(Migration(module, code.co_qualname, from_digest.lower(), site, fn, restart))
        return fn

    return register


def find_migration(module: str, qualname: str, old_digest: str, ref: SiteRef | None) -> Migration | None:
    """The newest registered migration for this frame, if any."""
    for migration in reversed(_MIGRATIONS):
        if (
            migration.module == module
            and migration.qualname == qualname
            and old_digest.startswith(migration.from_digest)
            and migration.matches_site(ref)
        ):
            return migration
    return None
