"""``@agentrt.serializable``: the opt-in for instances of a class to cross an await.

Marking is explicit because restoring an instance runs the class's own
restoration (``__setstate__``, or attrs/dataclass state) on data from a blob;
only classes whose authors agreed to that are restored.  The mark is a class
attribute as well as a registry entry, so it survives decorators that rebuild
the class (``attrs.define(slots=True)`` and ``dataclass(slots=True)`` copy the
class namespace) and is inherited by subclasses.
"""

from __future__ import annotations

import weakref
from typing import TypeVar

from agentrt._codec._refs import class_dict

T = TypeVar("T", bound=type)

MARK = "__agentrt_serializable__"
_registry: weakref.WeakSet[type] = weakref.WeakSet()
_known: dict[type, bool] = {}


def serializable(cls: T) -> T:
    """Mark ``cls`` so its instances (and their bound methods) can be checkpointed.

    Works for attrs classes (slotted and frozen too), dataclasses (frozen, slots),
    slotted classes and any class with ``__getstate__`` / ``__setstate__``.
    Put it above ``@attrs.define`` / ``@dataclass``.  Returns ``cls`` itself.
    """
    if not isinstance(cls, type):
        raise TypeError(f"@agentrt.serializable decorates classes, got {cls!r}")
    if "<locals>" in cls.__qualname__:
        raise TypeError(
            f"@agentrt.serializable: class {cls.__qualname__} is defined inside a function; blobs name "
            "classes by module:qualname, so define it at module level"
        )
    setattr(cls, MARK, True)
    _registry.add(cls)
    _known.clear()
    return cls


def is_serializable(cls: type) -> bool:
    """Whether ``cls`` or one of its bases was marked with :func:`serializable`."""
    known = _known.get(cls)
    if known is None:
        known = any(class_dict(base).get(MARK) is True for base in cls.__mro__)
        _known[cls] = known
    return known


def registered() -> frozenset[type]:
    """The classes marked so far (for tools such as ``agentrt check``)."""
    return frozenset(_registry)
