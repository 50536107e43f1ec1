"""Generators and async generators in progress across an await."""

from tests.corpus import other_module
from tests.corpus.protocol import add, ask
from tests.corpus.registry import case


def accumulator():
    total = 0
    while True:
        x = yield total
        if x is None:
            return total
        total += x


@case(expect=[0, 5, 12, ("stop", 12)])
async def gen_held_across_await():
    g = accumulator()
    out = [next(g)]
    out.append(g.send(await ask(5)))  # g.send is on the stack under the await
    out.append(g.send(await ask(7)))
    try:
        g.send(None)
    except StopIteration as s:
        out.append(("stop", await ask(s.value)))
    return out


def inner_gen(n):
    got = []
    for i in range(n):
        got.append((yield i))
    return got


def delegating(n):
    result = yield from inner_gen(n)
    yield ("inner returned", result)


@case(expect=(0, 1, ("inner returned", ["s1", "s2"])))
async def gen_yield_from():
    g = delegating(2)  # two suspended generator frames
    a = next(g)
    b = g.send(await ask("s1"))
    c = g.send(await ask("s2"))
    return a, b, c


@case(expect=(0, 1, [4, 9, 16]))
async def gen_genexpr_held():
    g = (i * i for i in range(5))
    a = next(g)
    await ask("between")
    b = next(g)
    await ask("again")
    return a, b, list(g)


async def ticker(n):
    for i in range(n):
        v = await ask(("tick", i))
        yield v[1] * 10


@case(3, expect=[1, 11, 21])
async def agen_async_for(n):
    out = []
    async for y in ticker(n):  # the async generator suspends too
        out.append(await add(y, 1))
    return out


async def averager():
    total = 0.0
    count = 0
    avg = None
    while True:
        x = yield avg
        total += await ask(x)
        count += 1
        avg = total / count


@case(expect=[None, 10.0, 15.0, 20.0])
async def agen_asend():
    ag = averager()
    out = [await ag.asend(None)]
    for x in (10, 20, 30):
        out.append(await ag.asend(x))  # suspended inside the asend awaitable
    await ag.aclose()
    return out


@case(5, expect=(0, 10, ("holding", 0, 10), [20, 30, 40]))
async def agen_partial_held(n):
    ag = ticker(n)
    first = await anext(ag)
    second = await ag.__anext__()
    mid = await ask(("holding", first, second))  # ag is parked, half consumed
    rest = [y async for y in ag]
    return first, second, mid, rest


@case(3, expect=[100, 101, 102])
async def agen_cross_module(n):
    out = []
    async for v in other_module.remote_agen(n):
        out.append(await ask(v))
    return out


async def guarded(log):
    try:
        i = 0
        while True:
            yield await add(i, 0)
            i += 1
    finally:
        log.append(await ask("agen-finally"))


@case(expect=([0, 1], ["agen-finally"]), refused="AR111")
async def agen_aclose_awaits_in_finally():
    log = []
    ag = guarded(log)
    got = [await anext(ag), await anext(ag)]
    await ag.aclose()  # the finally suspends inside aclose()
    return got, log
