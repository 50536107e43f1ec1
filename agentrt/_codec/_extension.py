"""The seam between the codec and the frame engine.

The codec knows values; it does not know frames.  Objects that carry a suspended
frame (coroutines, generators, async generators, their ``asend`` awaitables) are
handled by an :class:`Extension` registered by ``agentrt._frames``.  The codec calls
``reduce`` while encoding and ``create`` / ``set_state`` while decoding, and runs the
``after_load`` callbacks once the whole object graph exists (the frame engine
uses that to prime restored chains).

Contract (both sides rely on it):

* ``reduce(obj, ctx)`` returns ``(args, state)``.  ``args`` is a tuple of values
  the codec encodes *before* the object exists; ``state`` (any value, or None) is
  encoded *after* the object is memoised, so cycles through ``state`` work.
  ``(STORED_AS, (cls, value))`` instead writes the object as an instance of the
  ``@serializable`` class ``cls`` (no builtin base) whose state is ``value``, which
  decodes as such an instance: the frame engine stores a ``suspend()`` trap that way.
* A list ``state`` may be written with some floats shared (``_reduce._share_floats``): a float
  is shared when its reference count shows a holder besides the list.  An extension whose object
  itself holds every item of its list state (a frame: its slots) says so with a class attribute
  ``state_items_held = True``, so that the object's own reference is not taken for a second one.
* ``create(ctx, *args)`` builds the object at load time.  It must validate its
  arguments and raise ``CorruptBlob`` / ``IncompatibleBlob`` for anything wrong.
* ``set_state(ctx, obj, state)`` fills the object in.
* ``children(obj)`` yields ``(label, value, location)`` for error reporting:
  ``label`` is a variable name or a description of a stack slot, ``location`` the
  frame's source position (``None`` for non-frame objects).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import CodeType
from typing import Any, Protocol  # Any: extensions reduce and rebuild any Python object

import attrs


@attrs.frozen
class Location:
    """Where a frame is suspended, for error messages."""

    function: str
    filename: str
    lineno: int | None


class EncodeContext(Protocol):
    def code_ref(self, code: CodeType, module: str) -> int:
        """Record ``code``'s identity in the blob header; return its index there."""
        ...


class DecodeContext(Protocol):
    def code(self, index: int) -> CodeType:
        """The resolved code object for header entry ``index`` (CorruptBlob if out of range)."""
        ...

    def code_module(self, index: int) -> str:
        """The module name recorded for header entry ``index``."""
        ...

    def after_load(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the whole graph is decoded (in registration order)."""
        ...


class Extension(Protocol):
    @property
    def name(self) -> str:
        """Stable name written into blobs."""
        ...

    @property
    def types(self) -> tuple[type, ...]:
        """Exact types handled."""
        ...

    def reduce(self, obj: Any, ctx: EncodeContext) -> tuple[tuple[Any, ...], Any]: ...

    def create(self, ctx: DecodeContext, *args: Any) -> Any: ...

    def set_state(self, ctx: DecodeContext, obj: Any, state: Any) -> None: ...

    def children(self, obj: Any) -> Iterable[tuple[str, Any, Location | None]]: ...


class _StoredAs(tuple):  # type: ignore[type-arg]  # a sentinel: only its identity matters
    __slots__ = ()

    def __repr__(self) -> str:
        return "STORED_AS"


#: the ``args`` of ``Extension.reduce`` for an object written as a plain instance (see above);
#: a tuple, so that the contract's types stay ``(tuple, state)``
STORED_AS: tuple[Any, ...] = _StoredAs()

_EXTENSIONS: dict[str, Extension] = {}
_BY_TYPE: dict[type, Extension] = {}


def register_extension(extension: Extension) -> None:
    """Make ``extension`` handle its types in every blob encoded or decoded from now on."""
    _EXTENSIONS[extension.name] = extension
    for tp in extension.types:
        _BY_TYPE[tp] = extension


#: the extension that handles exactly ``tp``, or None: the dict's own ``get`` (the encoder asks it
#: for every object it reduces)
extension_for_type: Callable[[type], Extension | None] = _BY_TYPE.get


#: the extension registered under ``name``, or None (the dict's own ``get``: once per frame decoded)
extension_named: Callable[[str], Extension | None] = _EXTENSIONS.get
