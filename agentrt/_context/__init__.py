"""A run's context variables: stepped in a ``contextvars.Context`` of its own, carried by its checkpoint.

Each :class:`~agentrt.lowlevel.Machine` owns a :class:`RunContext`: a copy of the context
it was made in (its *base*), and the context every step of the agent runs in
(``context.run(coro.send, value)``), so two runs never see each other's variables, as two
asyncio tasks do not.

**Set inside a run** means: the variable's value in the run's context is not the very object
it had in the base (``is not``; a variable the base did not have counts too), or the
variable was restored from a checkpoint.  Those, and only those, are part of a checkpoint:
what the host had set before it made or restored the Machine is the host's, and the host
of the next process sets its own.  A variable reset before the await (``var.reset(token)``)
is not carried; one set to the very object the base held is indistinguishable from
untouched and is not carried either.

A checkpoint with such variables has a :class:`Carried` root (the ``context`` codec
extension) instead of the bare coroutine: the coroutine, then one entry per variable,
``(scheme, names, value)`` sorted by scheme and names -- ``"var"`` with the
``module:qualname`` names of an ordinary variable (:mod:`._names`), or a library's own
scheme (:mod:`._adapters`: structlog, OpenTelemetry, decimal).  Values go through the codec
exactly like locals.  Such a blob is format 3 (an older agentrt refuses it by its version);
a checkpoint without context variables is format 2, byte for byte as before, and every
older blob restores with an empty context.
"""

from __future__ import annotations

import contextvars
import types
from collections.abc import Collection, Iterator
from typing import Any  # Any: a context variable holds any value

from agentrt._codec import CONTEXT_FORMAT_VERSION, DecodeContext, EncodeContext, Location, register_extension
from agentrt._context._adapters import adapter_for, adapter_named, private_copies
from agentrt._context._names import MAX_NAMES, describe, find_global, global_names
from agentrt.exceptions import CannotCrossAwait, CorruptBlob

__all__ = ["Carried", "Restored", "RunContext", "carry", "install", "labelled", "split_root"]

_MISSING: Any = object()
_GLOBAL = "var"  # the scheme of a variable named by module:qualname
_MAX_ENTRIES = 4096

Restored = tuple[tuple[contextvars.ContextVar[Any], Any], ...]


def _set_all(pairs: Restored) -> None:
    for var, value in pairs:
        var.set(value)


class RunContext:
    """The context a Machine steps its agent in, and the base it started from."""

    __slots__ = ("base", "carried", "context")

    def __init__(self, restored: Restored = ()) -> None:
        self.base = contextvars.copy_context()
        self.context = self.base.copy()
        own = private_copies(self.base)
        if restored or own:
            self.context.run(_set_all, (*own, *restored))
        #: variables restored from a checkpoint: set inside the run, in an earlier process
        self.carried = frozenset(var for var, _ in restored)

    def set_inside(self) -> list[tuple[contextvars.ContextVar[Any], Any]]:
        """The variables set inside the run (see the module docstring), with their values."""
        base, carried = self.base, self.carried
        return [
            (var, value)
            for var, value in self.context.items()
            if var in carried or base.get(var, _MISSING) is not value
        ]


class Carried:
    """A checkpoint's root when the run set context variables: the chain, and the variables.

    ``entries`` is the wire form, ``(scheme, names, value)`` per variable; after a restore,
    ``restored`` holds the variables found again in this process with the values to set.
    """

    __slots__ = ("coro", "entries", "restored")

    def __init__(self, coro: Any, entries: tuple[tuple[str, tuple[str, ...], Any], ...] = ()) -> None:
        self.coro = coro
        self.entries = entries
        self.restored: Restored = ()


def split_root(root: Any) -> tuple[Any, Carried | None]:
    """(the suspended chain, its carried context or None) of a decoded checkpoint."""
    if type(root) is Carried:
        return root.coro, root
    return root, None


def carry(coro: Any, run: RunContext) -> Any:
    """What a checkpoint encodes: ``coro`` itself, or a :class:`Carried` with the variables set inside
    the run.  ``CannotCrossAwait`` for a variable no restore could find again."""
    changed = run.set_inside()
    if not changed:
        return coro
    entries: list[tuple[str, tuple[str, ...], Any]] = []
    for var, value in changed:
        named = adapter_for(var)
        if named is None:
            names = global_names(var)
            if not names:
                raise _refused(coro, f"<context variable {describe(var)}>", FIX_UNNAMED)
            entries.append((_GLOBAL, names, value))
            continue
        adapter, names = named
        try:
            if not adapter.worth_carrying(value):
                continue
            saved = adapter.save(value)
        except Exception as exc:
            label = _label(adapter.scheme, names)
            raise _refused(coro, label, f"Reading it failed with {type(exc).__name__}: {exc}.") from exc
        entries.append((adapter.scheme, names, saved))
    if not entries:
        return coro
    entries.sort(key=lambda entry: (entry[0], entry[1]))
    return Carried(coro, tuple(entries))


FIX_UNNAMED = (
    "A checkpoint names a context variable by the module global that holds it, and no imported module "
    "holds this one. Define it at module level in an importable module "
    '(REQUEST_ID = ContextVar("request_id")), or reset it (var.reset(token)) before the await.'
)


def _refused(coro: Any, label: str, fix: str) -> CannotCrossAwait:
    where = _where(coro)
    return CannotCrossAwait(
        code="AR111",
        variable=label,
        path=label,
        function=where.function,
        filename=where.filename,
        lineno=where.lineno,
        type_name="contextvars.ContextVar",
        fix=fix,
    )


def _where(coro: Any) -> Location:
    """The innermost ``async def`` frame of the chain, where the run is suspended (for messages)."""
    current = coro
    while type(getattr(current, "cr_await", None)) is types.CoroutineType and current.cr_await.cr_frame:
        current = current.cr_await
    frame = getattr(current, "cr_frame", None)
    if frame is None:
        return Location("<agent>", "<unknown>", None)
    return Location(frame.f_code.co_qualname, frame.f_code.co_filename, frame.f_lineno)


def _label(scheme: str, names: tuple[str, ...]) -> str:
    """How messages and dumps name an entry: ``<context variable app.ctx:REQUEST_ID>``."""
    if scheme == _GLOBAL:
        return f"<context variable {names[0]}>"
    if scheme == "structlog":
        return f"<structlog context variable {names[0]!r}>"
    return f"<{scheme} context>"


def labelled(carried: Carried) -> list[tuple[str, Any]]:
    """(label, value) of each entry, for dumps."""
    return [(_label(scheme, names)[1:-1], value) for scheme, names, value in carried.entries]


# --- the codec extension ------------------------------------------------------------------------


def _check_entries(state: Any) -> tuple[tuple[str, tuple[str, ...], Any], ...]:
    if type(state) is not tuple or not 0 < len(state) <= _MAX_ENTRIES:
        raise CorruptBlob("malformed context: entries")
    previous: tuple[str, tuple[str, ...]] | None = None
    for entry in state:
        if type(entry) is not tuple or len(entry) != 3:
            raise CorruptBlob("malformed context: an entry")
        scheme, names = entry[0], entry[1]
        if type(scheme) is not str or (scheme != _GLOBAL and adapter_named(scheme) is None):
            raise CorruptBlob("malformed context: unknown kind of context variable")
        if type(names) is not tuple or len(names) > MAX_NAMES or not all(type(n) is str for n in names):
            raise CorruptBlob("malformed context: variable names")
        if scheme == _GLOBAL and not (names and all(":" in n for n in names)):
            raise CorruptBlob("malformed context: a variable name is not module:qualname")
        key = (scheme, names)
        if previous is not None and not previous < key:
            raise CorruptBlob("malformed context: entries out of order or repeated")
        previous = key
    return state


def _resolve(entries: tuple[tuple[str, tuple[str, ...], Any], ...], allow: Collection[str]) -> Restored:
    """The variables of ``entries`` found again in this process, with the values to set."""
    found: dict[contextvars.ContextVar[Any], Any] = {}
    for scheme, names, value in entries:
        adapter = adapter_named(scheme)
        if adapter is None:
            var = find_global(names, allow)
        else:
            found_var = adapter.find(names, allow)
            if found_var is None:
                continue  # the library is not loaded here: nothing in this process could read it
            var, value = found_var, adapter.restore(value)
        if var in found:
            raise CorruptBlob(f"malformed context: two entries set {_label(scheme, names)[1:-1]}")
        found[var] = value
    return tuple(found.items())


class ContextExtension:
    """Codec extension for :class:`Carried`: ``ext("context", chain)`` with the entries as its state."""

    name = "context"
    types = (Carried,)

    def reduce(self, obj: Carried, ctx: EncodeContext) -> tuple[tuple[Any, ...], Any]:
        # an encoder's code table (agentrt._codec._codetable) writes the blob as this format at least;
        # the codec's probing contexts (error paths) have no format to raise
        need_format = getattr(ctx, "need_format", None)
        if need_format is not None:
            need_format(CONTEXT_FORMAT_VERSION)
        return (obj.coro,), obj.entries

    def create(self, ctx: DecodeContext, *args: Any) -> Carried:
        if len(args) != 1:
            raise CorruptBlob("malformed context: fields")
        if not getattr(ctx, "describe", False) and type(args[0]) is not types.CoroutineType:
            raise CorruptBlob("malformed context: it does not hold a suspended agent coroutine")
        return Carried(args[0])

    def set_state(self, ctx: DecodeContext, obj: Carried, state: Any) -> None:
        obj.entries = _check_entries(state)
        if not getattr(ctx, "describe", False):  # a dump shows the entries; it finds and sets nothing
            obj.restored = _resolve(obj.entries, getattr(ctx, "allow_modules", ()))

    def children(self, obj: Carried) -> Iterator[tuple[str, Any, Location | None]]:
        yield "", obj.coro, None
        if obj.entries:
            where = _where(obj.coro)
            for scheme, names, value in obj.entries:
                yield _label(scheme, names), value, where


_installed = False


def install() -> None:
    """Register the ``context`` extension with the codec (idempotent)."""
    global _installed
    if not _installed:
        register_extension(ContextExtension())
        _installed = True
