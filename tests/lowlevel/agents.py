"""Agents used by the Machine tests; a real module so fresh processes can import them."""

import re
import threading
import traceback
import types

from agentrt.lowlevel import suspend


async def api_example(x):
    y = await suspend(("ask", x))
    return y + 1


async def counter(n):
    total = 0
    for i in range(n):
        total += await suspend(i)
    return total


async def catches(tag):
    try:
        await suspend(("risky", tag))
    except KeyError as error:
        recovered = await suspend(("recover", error.args[0]))
        return ("recovered", recovered)
    return ("no error", tag)


async def raises_after(n):
    for i in range(n):
        await suspend(i)
    raise LookupError("gone", n)


async def reraises():
    try:
        raise ValueError("original")
    except ValueError:
        await suspend("inside except")
        raise


async def traceback_line():
    await suspend("before")
    raise RuntimeError("boom")  # the traceback must point at this line


def format_last_frame(error):
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return frame.filename, frame.lineno, frame.line


async def foreign_await():
    import asyncio

    await asyncio.sleep(0)


async def lock_live():
    lock = threading.Lock()
    await suspend("holding")
    with lock:
        return "done"


async def match_live():
    m = re.match("a(b)", "ab")
    await suspend("match")
    return m.group(1)


async def match_dead():
    m = re.match("a(b)", "ab")
    captured = m.group(1)
    await suspend("match")
    return captured


class Opaque:
    def __init__(self):
        self.session = threading.Lock()


async def nested_unserializable():
    state = {"client": [1, Opaque()]}
    await suspend("nested")
    return state


async def add_later(a, b):
    extra = await suspend(("extra", a))
    return a + b + extra


def countdown(n):
    while n:
        yield n
        n -= 1


async def objects_in_every_state():
    pending = add_later(1, 2)  # created, not awaited yet
    unstarted = countdown(3)  # generator never advanced
    finished = countdown(1)
    list(finished)  # exhausted generator
    await suspend("holding all three")
    values = list(unstarted) + list(finished)
    total = await pending
    return values, total


async def ticker(n):
    for i in range(n):
        got = await suspend(("tick", i))
        yield i * got


async def consumes_async_generator():
    out = []
    async for value in ticker(3):
        out.append(value)
    return out


async def captures_its_box(box):
    def peek():
        return box

    await suspend("holding")
    return len(peek())


async def keeps_parameter(x):
    y = await suspend("x stays live")
    return x + y


class _LockPairs:
    """Iterates pairs that hold a lock: the for-loop's iterator is what cannot cross the await."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter([(self.lock, 1), (self.lock, 2)])


def _pair(*args):  # type: ignore[no-untyped-def]
    return args


async def lock_in_for_iterator():
    total = 0
    for item in iter(_LockPairs()):
        total += await suspend(item[1])
    return total


async def lock_as_pending_call_argument():
    lock = threading.Lock()
    return _pair(lock, await suspend("x"))


async def trap_made_early():
    later = suspend(("later", 1))  # a trap made, not awaited yet, when the first checkpoint is taken
    first = await suspend(("now", 0))
    second = await later
    return first, second


@types.coroutine
def _yields_a_pair():
    return (yield ("ask", 1))  # a 2-tuple, but not an agentrt request


async def awaits_a_foreign_pair():
    return await _yields_a_pair()


async def cancellable(n):
    done = []
    for i in range(n):
        try:
            done.append(await suspend(("work", i)))
        except KeyboardInterrupt:
            done.append("cancelled")
            return done, await suspend(("cleanup", i))
    return done, None


async def catches_anything():
    try:
        answer = await suspend("x")
    except BaseException as error:
        return ("raised", type(error).__name__, repr(error.__cause__))
    return ("answered", answer)
