"""Shapes that differential testing (issue 17) found resumed inexactly on 3.12/3.13.

Each agent here failed in mode (b) or (c) before its fix, on the interpreters named in
its comment; the registration records what a plain run returns.
"""

from tests.corpus.protocol import ask, fail
from tests.corpus.registry import case


# A local that may be unbound at an await and is read twice afterwards: the first read is
# LOAD_FAST_CHECK, the second an unchecked LOAD_FAST (3.12+).  get() refused it.
@case(3, expect=("none", 3), name="maybe_unbound_read_twice_unbound")
@case(9, expect=([1, 1, 9], 9), name="maybe_unbound_read_twice_bound")
async def maybe_unbound_read_twice(p):
    if p > 5:
        y = 1
    q = await ask(p)
    if p > 5:
        return [y, y, q], await ask(q)
    return "none", await ask(q)


# The restore-safety issue's case: assigned only in an except block, read after a later await.
@case(True, expect="caught:'k'|caught:'k'", name="except_assigned_read_later_raised")
@case(False, expect="clean", name="except_assigned_read_later_clean")
async def except_assigned_read_later(raise_it):
    try:
        await ask(1)
        if raise_it:
            raise KeyError("k")
    except KeyError as e:
        saved = f"caught:{e}"
    await ask(2)
    if raise_it:
        return saved + "|" + saved
    return "clean"


# The same shape where the first checked read raises UnboundLocalError after the restore.
@case(expect=("UnboundLocalError", 2))
async def maybe_unbound_checked_read_raises():
    if await ask(False):
        z = 1
    await ask(2)
    try:
        return z + z
    except UnboundLocalError:
        return "UnboundLocalError", await ask(2)


# The thrown-in exception path: a handler reads the maybe-unbound local twice.
@case(expect="handled")
async def maybe_unbound_read_in_handler():
    if await ask(False):
        w = 5
    try:
        await fail("boom")
    except ValueError:
        if await ask(False):
            return w * w
    return "handled"
