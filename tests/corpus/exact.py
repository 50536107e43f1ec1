# ruff: noqa: B023 - the late binding of captured loop variables is what these agents test
"""Shapes that differential testing (issue 17) found resumed inexactly on 3.12/3.13.

Each agent here failed in mode (b) or (c) before its fix, on the interpreters named in
its comment; the registration records what a plain run returns.
"""

from tests.corpus.protocol import ask, fail, serializable
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


# Inlined comprehensions (PEP 709, 3.12+) whose loop variable is a cell: LOAD_FAST_AND_CLEAR
# saves the enclosing cell, MAKE_CELL makes the comprehension's own, STORE_FAST puts the saved
# one back.  Before the fix 3.12 refused the blob (CorruptBlob), 3.13 gave x == 2.
@case(expect=[5, 5, 5, [10, 10, 10]])
async def comp_cell_loop_var(p=0):
    x = await ask(5)
    fs = [lambda z: z * x for x in range(3)]
    return [x, await ask(x), x, [f(5) for f in fs]]


# Run more than once after a restore (3.13 crashed the interpreter).
@case(expect=[[2, 2, 2], [3, 3, 3], [4, 4, 4], 1])
async def comp_cell_repeated_after_restore():
    await ask(0)
    out = []
    for i in range(3):
        fs = [lambda: x + i for x in range(3)]
        out.append([f() for f in fs])
    await ask(1)
    out.append([lambda: x for x in range(2)][1]())
    return out


# Suspended inside the comprehension, with a closure of the function over the same name
# (3.13 leaked the cell object into the loop variable; a suspension here was refused).
@case(expect=([4, 4], "outer", "outer", [True, True]))
async def comp_cell_await_inside(p=0):
    x = "outer"

    def g():
        return x

    flags = []
    fs = [(lambda: x * 2) for x in range(3) if flags.append(await ask(x != 1)) or flags[-1]]
    return [f() for f in fs], x, g(), flags[::2]


# The loop variable captured and the comprehension suspending in its element, dict and set forms.
@case(expect=([12, 12, 12], {0: 1, 1: 1}, {0, 1, 2}))
async def comp_cell_element_await(p=0):
    pairs = [(lambda: x, await ask(10)) for x in range(3)]
    d = {x: (lambda: x) for x in range(2) if await ask(True)}
    s = {(lambda: y)() for y in range(3)}
    return [f() + v for f, v in pairs], {k: f() for k, f in d.items()}, s


# An unbound cell variable read or deleted after a restore raises UnboundLocalError, as in a
# plain run (restored code used to turn cell variables into free variables: NameError).
@case(expect=["UnboundLocalError", "UnboundLocalError", "free:NameError", 3, 4])
async def unbound_cell_after_restore():
    await ask(0)
    seen = []

    def f():
        return x

    try:
        del x
    except NameError as e:  # UnboundLocalError is a NameError: the type must be exact
        seen.append(type(e).__name__)
    try:
        seen.append(x)
    except NameError as e:
        seen.append(type(e).__name__)
    try:
        seen.append(f())
    except NameError as e:
        seen.append(type(e).__name__ if type(e) is UnboundLocalError else "free:" + type(e).__name__)
    x = await ask(3)
    seen.append(f())
    x += 1
    seen.append(f())
    return seen


# A dead local holding a generator suspended inside try/finally (or a with block) is kept in
# the checkpoint, so its cleanup runs when the frame ends, as in a plain run.  Before, the
# restored run dropped it and the cleanup never ran.
def _cleanup_gen(log, tag):
    try:
        yield 1
        yield 2
    finally:
        log.append(("finally", tag))


@serializable
class _LogCtx:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.log.append("exit")


def _with_gen(log):
    with _LogCtx(log):
        yield 1


async def _holds_dead_generators(log):
    g = _cleanup_gen(log, "g")
    next(g)
    w = _with_gen(log)
    next(w)
    plain = iter([1, 2])  # dead and nothing pending: still left out
    next(plain)
    await ask(1)
    await ask(2)
    return "inner done"


@case(expect=("inner done", [("finally", "g"), "exit"], "after"))
async def dead_generator_finally_runs():
    log = []
    result = await _holds_dead_generators(log)
    return result, sorted(log, key=str), await ask("after")


# `await anext(agen, default)`: suspended inside the anext_awaitable (refused with AR111 before).
async def _tens(n):
    for i in range(n):
        x = await ask(i)
        yield x * 10


@serializable
class _Countdown:
    """An async iterator written as a class: its __anext__ is a coroutine that suspends."""

    def __init__(self, n):
        self.n = n

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.n == 0:
            raise StopAsyncIteration
        self.n -= 1
        return await ask(self.n)


@case(expect=([0, 10, "done", "done"], [1, 0, "empty"]))
async def anext_with_default():
    g = _tens(2)
    got = [await anext(g, "done") for _ in range(4)]
    it = _Countdown(2)
    return got, [await anext(it, "empty") for _ in range(3)]


# Found by the fuzzer: one comprehension captures `x` (so `x` is a cell of the function), another
# uses `x` plainly and suspends: on 3.12+ the cell's slot then holds a plain value (get() raised
# "a closure cell slot does not hold a cell").  The async comprehension suspends before binding x.
async def _two(n):
    for i in range(n):
        yield await ask(i)


@case(expect=(3, [2, 2], [0, 1]))
async def comp_cell_name_reused_plainly():
    fs = [(lambda: x * 2) for x in range(2)]
    total = sum([await ask(x) for x in range(3)])
    got = [x async for x in _two(2)]
    return total, [f() for f in fs], got
