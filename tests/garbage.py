"""Collect only what a piece of test code left behind, not the whole test process's heap."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collected() -> Iterator[None]:
    """Collect the garbage of the ``with`` body when it ends, so that what it left unclosed (an
    abandoned chain, a coroutine never awaited) is finalized now, under the test's warning filters,
    not in a later test.

    The objects that existed before are set aside meanwhile (``gc.freeze``): the collection looks at
    the body's objects only, a millisecond where a full one of a long-lived pytest-xdist worker
    (every framework of the suite imported) takes from a few hundred milliseconds to over a second."""
    gc.freeze()
    try:
        yield
        gc.collect()
    finally:
        gc.unfreeze()
