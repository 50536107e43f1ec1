"""Comprehensions with awaits (element, condition, nested, dict/set) and async
comprehensions / async generator expressions over async generators."""

from tests.corpus.protocol import add, ask
from tests.corpus.registry import case


@case([1, 2, 3], expect=[2, 4, 6])
async def comp_list_await_element(xs):
    return [await add(x, x) for x in xs]


@case([1, 2, 3, 4, 5], expect=[2, 4])
async def comp_list_await_condition(xs):
    return [x for x in xs if await ask(x % 2 == 0)]


@case(["a", "bb", "ccc"], expect={"a": 1, "ccc": 3})
async def comp_dict(words):
    return {w: await ask(len(w)) for w in words if await ask(len(w) % 2 == 1)}


@case([1, 2, 3, 4, 5, 6], expect={0, 1, 2})
async def comp_set(xs):
    return {await ask(x % 3) for x in xs if await ask(x > 0)}


@case(2, 3, expect=([[0, 1, 2], [10, 11, 12]], [0, 2, 10, 12]))
async def comp_nested(n, m):
    grid = [[await add(i * 10, j) for j in range(m)] for i in range(n)]
    flat = [await ask(v) for row in grid for v in row if v % 2 == 0]
    return grid, flat


async def agen_numbers(n):
    for i in range(n):
        yield await add(i, 1)


@case(4, expect=([1, 2, 3, 4], [20, 40], {1: 1, 2: 2}))
async def comp_async_for(n):
    xs = [x async for x in agen_numbers(n)]
    ys = [await ask(x * 10) async for x in agen_numbers(n) if await ask(x % 2 == 0)]
    d = {x: await ask(x) async for x in agen_numbers(2)}
    return xs, ys, d


@case([1, 2, 3], expect=(101, [102, 103]))
async def comp_async_genexp(xs):
    g = (await add(x, 100) for x in xs)  # an async generator expression
    first = await anext(g)
    rest = [y async for y in g]
    return first, rest
