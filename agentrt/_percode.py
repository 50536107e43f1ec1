"""Facts about code objects, remembered one way: per code object, held weakly, bounded.

The engine and the codec learn things about a code object once and look them up at every
checkpoint: its suspension sites and liveness, how to read its frames, its digest and where it is
found, the resume code made for it.  Each such fact is a :class:`PerCode`:

- **keyed by the code object's identity**: code objects compare and hash by value (deeply, slow
  for large constant tuples, and two equal codes are still two codes);
- **held weakly**: an entry goes when its code goes (a resume code evicted from its cache, a module
  reloaded), so it never keeps a code alive by itself and a later code that reuses the id never
  finds it.  A fact that holds its own code (an analysis does) keeps it until evicted;
- **bounded**: when a cache is full its oldest entry goes first (a process may meet any number of
  codes: a forged blob names many, and so do many deploys).  ``on_drop`` is told of each entry
  that goes, evicted or with its code.

Lookups are one dictionary get and one weak-reference call; they need no lock (the GIL orders the
dictionary operations; a racing first computation stores the same fact twice, harmlessly).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from types import CodeType
from typing import Generic, TypeVar

__all__ = ["DEFAULT_LIMIT", "PerCode"]

T = TypeVar("T")

#: Entries a cache keeps unless it says otherwise (far more codes than an agent program suspends in).
DEFAULT_LIMIT = 4096


class PerCode(Generic[T]):
    """One fact per code object (see the module docstring)."""

    __slots__ = ("_entries", "limit", "name", "on_drop")

    def __init__(
        self, name: str, limit: int = DEFAULT_LIMIT, on_drop: Callable[[T], None] | None = None
    ) -> None:
        self.name = name
        self.limit = limit
        self.on_drop = on_drop
        #: id(code) -> (weak reference to the code, its fact)
        self._entries: dict[int, tuple[weakref.ref[CodeType], T]] = {}

    def get(self, code: CodeType) -> T | None:
        """The fact remembered for ``code``, or None."""
        entry = self._entries.get(id(code))
        if entry is not None and entry[0]() is code:
            return entry[1]
        return None

    def put(self, code: CodeType, fact: T) -> T:
        """Remember ``fact`` for ``code`` (replacing any) and return it."""
        key, entries = id(code), self._entries

        def forget(ref: weakref.ref[CodeType]) -> None:
            current = entries.get(key)
            if current is not None and current[0] is ref:
                del entries[key]
                if self.on_drop is not None:
                    self.on_drop(current[1])

        if len(entries) >= self.limit and key not in entries:
            self._evict_oldest()
        old = entries.get(key)
        entries[key] = (weakref.ref(code, forget), fact)
        if old is not None and self.on_drop is not None and old[1] is not fact:
            self.on_drop(old[1])
        return fact

    def _evict_oldest(self) -> None:
        try:
            oldest = next(iter(self._entries))
            _, fact = self._entries.pop(oldest)
        except (StopIteration, KeyError, RuntimeError):  # emptied or changed meanwhile: nothing to do
            return
        if self.on_drop is not None:
            self.on_drop(fact)

    def __len__(self) -> int:
        return len(self._entries)

    def facts(self) -> list[tuple[CodeType, T]]:
        """``(code, fact)`` for every live entry (for tests and diagnostics)."""
        out = []
        for ref, fact in list(self._entries.values()):
            code = ref()
            if code is not None:
                out.append((code, fact))
        return out

    def clear(self) -> None:
        for _, fact in list(self._entries.values()):
            if self.on_drop is not None:
                self.on_drop(fact)
        self._entries.clear()

    def __repr__(self) -> str:
        return f"PerCode({self.name!r}, {len(self)}/{self.limit} entries)"
