"""Async generator steps: the awaitable ``agen.asend(...)`` returns, and the generator it drives.

Kept apart from the package's ``__init__`` so that the restore checks (``_validate``) can
use them without importing the package that imports them.
"""

from __future__ import annotations

import gc
import types
from typing import Any  # Any: probes of CPython's async-generator internals

from agentrt.exceptions import CorruptBlob

__all__ = ["ANEXT_TYPE", "ASEND_TYPE", "_agen_of"]


def _asend_type() -> type:
    async def probe() -> Any:
        yield None

    agen = probe()
    awaitable = agen.asend(None)
    tp = type(awaitable)
    awaitable.close()
    return tp


#: The type of ``agen.asend(value)`` (no public name in ``types``).
ASEND_TYPE = _asend_type()


def _anext_awaitable_type() -> type:
    async def probe() -> Any:
        yield None

    agen = probe()
    awaitable = anext(agen, None)
    tp = type(awaitable)
    awaitable.close()
    return tp


#: What ``anext(aiterator, default)`` returns (no public name either).
ANEXT_TYPE = _anext_awaitable_type()


def _agen_of(asend: Any) -> Any:
    """The async generator an ``asend`` awaitable drives (CorruptBlob when there is not exactly one)."""
    owners = [ref for ref in gc.get_referents(asend) if type(ref) is types.AsyncGeneratorType]
    if len(owners) != 1:
        raise CorruptBlob("an async generator step is not attached to its generator")
    return owners[0]
