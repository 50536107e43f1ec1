"""try/except/else/finally and except* with awaits in every clause, exceptions thrown
into the agent by the driver, bare re-raise, return through an awaiting finally,
chaining, and uncaught exceptions."""

import sys

from tests.corpus.protocol import add, ask, fail
from tests.corpus.registry import case


class CorpusError(Exception):
    pass


@case("x", expect=[("try", "x"), ("else", "x"), ("finally", "x")])
async def exc_try_else_finally(x):
    log = []
    try:
        log.append(await ask(("try", x)))
    except KeyError:
        log.append("never")
    else:
        log.append(await ask(("else", x)))
    finally:
        log.append(await ask(("finally", x)))
    return log


@case(7, expect=["before", ("in-except", 7), "still", ("KeyError", (7,), True), None])
async def exc_await_in_except(x):
    log = []
    try:
        log.append(await ask("before"))
        raise KeyError(x)
    except KeyError as e:
        log.append(await ask(("in-except", e.args[0])))
        log.append(await ask("still"))
        current = sys.exc_info()[1]  # the exception being handled survives
        log.append((type(current).__name__, current.args, current is e))
    log.append(sys.exc_info()[0])  # and is gone after the handler
    return log


@case(["a", "b"], expect=[("caught", "bad a"), ("caught", "bad b"), ("ok", 3)])
async def exc_throw_caught(names):
    out = []
    for n in names:
        try:
            await fail("bad " + n)  # the driver throws ValueError here
            out.append("not reached")
        except ValueError as e:
            out.append(("caught", await ask(e.args[0])))
    out.append(("ok", await add(1, 2)))
    return out


async def _reraiser(msg, log):
    try:
        await fail(msg)
    except ValueError:
        log.append(await ask("cleanup"))
        raise  # bare raise after an await in except


@case("boom", expect=(["cleanup", "after"], ("boom",)))
async def exc_bare_reraise(msg):
    log = []
    try:
        await _reraiser(msg, log)
    except ValueError as e:
        log.append(await ask("after"))
        return log, e.args
    return "not reached"


async def _ret_finally(x, log):
    try:
        log.append(await ask(x))
        return ("returned", await add(x, 1))  # return value pending while finally awaits
    finally:
        log.append(await ask("finally"))
        log.append(await ask("finally-2"))


@case(5, expect=(("returned", 6), [5, "finally", "finally-2"]))
async def exc_return_in_finally(x):
    log = []
    r = await _ret_finally(x, log)
    return r, log


@case(
    "root",
    expect=(
        "RuntimeError",
        ("wrapped", "root"),
        "ValueError",
        ("root",),
        True,
        True,
        "after",
        "KeyError",
        ("ctx",),
        None,
    ),
)
async def exc_chaining(msg):
    try:
        try:
            await fail(msg)
        except ValueError as e:
            await ask("wrapping")
            raise RuntimeError("wrapped", msg) from e
    except RuntimeError as err:
        after = await ask("after")
        explicit = (
            type(err).__name__,
            err.args,
            type(err.__cause__).__name__,
            err.__cause__.args,
            err.__suppress_context__,
            err.__context__ is err.__cause__,
            after,
        )
    try:
        try:
            raise KeyError("ctx")
        except KeyError:
            await ask("implicit")
            raise TypeError("during handling")
    except TypeError as t:
        await ask("got implicit")
        implicit = (type(t.__context__).__name__, t.__context__.args, t.__cause__)
    return explicit + implicit


@case(expect=["in try", ("value", [(1,)]), ("key", [(2,)]), ("rest", ["TypeError"])])
async def exc_group_star():
    log = []
    try:
        try:
            log.append(await ask("in try"))
            raise ExceptionGroup("grp", [ValueError(1), KeyError(2), TypeError(3)])
        except* ValueError as eg:
            log.append(await ask(("value", [e.args for e in eg.exceptions])))
        except* KeyError as eg:
            log.append(await ask(("key", [e.args for e in eg.exceptions])))
    except ExceptionGroup as rest:
        log.append(await ask(("rest", [type(e).__name__ for e in rest.exceptions])))
    return log


@case(expect=[("caught", [("thrown-in",)]), ("finally", 0), "no error", "else", ("finally", 1)])
async def exc_group_star_thrown():
    log = []
    for attempt in range(2):
        try:
            if attempt == 0:
                await fail("thrown-in")  # a naked ValueError, matched by except*
            else:
                log.append(await ask("no error"))
        except* ValueError as eg:
            log.append(await ask(("caught", [e.args for e in eg.exceptions])))
        else:
            log.append(await ask("else"))
        finally:
            log.append(await ask(("finally", attempt)))
    return log


async def _propagate(log):
    try:
        log.append(await ask(1))
        raise KeyError("k")
    finally:
        log.append(await ask("finally while raising"))  # KeyError pending on the stack


@case(expect=[1, "finally while raising", ("caught", ("k",)), "end"])
async def exc_finally_while_propagating():
    log = []
    try:
        await _propagate(log)
    except KeyError as e:
        log.append(("caught", e.args))
    log.append(await ask("end"))
    return log


@case(expect=[("outer", "inner"), ("inner",), "inner-finally", ("outer",)])
async def exc_nested_handlers():
    log = []
    try:
        await fail("outer")
    except ValueError as outer:
        try:
            await fail("inner")
        except ValueError as inner:
            log.append(await ask((outer.args[0], inner.args[0])))
            log.append(sys.exc_info()[1].args)
        finally:
            log.append(await ask("inner-finally"))
        log.append(sys.exc_info()[1].args)  # the outer one is current again
    return log


@case(3, raises=("CorpusError", ("gave up", 6)))
async def exc_uncaught(n):
    total = 0
    for i in range(n):
        total += await add(i, 1)
    raise CorpusError("gave up", total)


@case(raises=("ValueError", ("nobody catches this",)))
async def exc_uncaught_thrown():
    await ask(1)
    await ask(2)
    await fail("nobody catches this")
    return "not reached"
