"""Call chains 3+ deep (same module and across modules), recursion, async methods of
serializable instances, closures with nonlocal, lambdas, inner async defs, argument
kinds, match statements and a decorated helper."""

import dataclasses
import functools

import attrs

from tests.corpus import other_module
from tests.corpus.protocol import add, ask, serializable
from tests.corpus.registry import case


async def level3(x):
    a = await ask(("l3", x))
    b = await add(a[1], 1)
    return b


async def level2(x):
    pre = await ask(("l2-pre", x))
    r = await level3(x * 2)
    post = await ask(("l2-post", r))
    return pre, r, post


@case(5, expect=("l1", (("l2-pre", 5), 11, ("l2-post", 11)), 111))
async def chain_three_deep(x):
    start = await ask("l1")
    inner = await level2(x)
    end = await add(inner[1], 100)
    return start, inner, end


async def local_callback(y):
    v = await ask(("callback", y))
    return await other_module.remote_double(v[1])


@case(1, expect=(2, (("remote-in", 2), 6, ("remote-out", 6))))
async def chain_cross_module(x):
    a = await other_module.remote_double(x)
    # agent -> other_module.remote_level -> calls.local_callback -> other_module.remote_double
    b = await other_module.remote_level(a, local_callback)
    return a, b


async def fact(n):
    k = await ask(n)
    if k <= 1:
        return 1
    return k * await fact(k - 1)  # k on the stack while the callee is suspended


@case(6, expect=720)
async def recursion_factorial(n):
    return await fact(n)


async def tree_sum(node):
    if isinstance(node, int):
        return await add(node, 0)
    total = 0
    for child in node:
        total += await tree_sum(child)
    return total


@case([1, [2, 3], [[4]], 5], expect=15)
async def recursion_tree(tree):
    return await tree_sum(tree)


@serializable
@attrs.define
class Counter:
    name: str
    n: int = 0
    history: list = attrs.Factory(list)

    async def bump(self, k):
        self.history.append(("before", self.n))
        self.n += await add(k, 0)
        self.history.append(await ask(("after", self.n)))
        return self.n

    async def bump_twice(self, k):
        await self.bump(k)
        return await self.bump(k)

    @staticmethod
    async def static_helper(x):
        return await add(x, 1)

    @classmethod
    async def make(cls, name):
        return cls(await ask(name))


@case(
    expect=(
        2,
        8,
        8,
        [("before", 0), ("after", 2), ("before", 2), ("after", 5), ("before", 5), ("after", 8)],
        4,
        9,
        9,
    )
)
async def method_async_state():
    c = Counter("c")
    r1 = await c.bump(2)
    r2 = await c.bump_twice(3)
    rc = other_module.RemoteCounter()
    r3 = await rc.bump(4)
    r4 = await rc.bump(5)
    return r1, r2, c.n, c.history, r3, r4, rc.n


@case(expect=("made", 2, Counter("made", 3, [("before", 0), ("after", 3)])))
async def method_class_static():
    c = await Counter.make("made")
    s = await Counter.static_helper(1)
    await c.bump(s + 1)
    return c.name, s, c


@case(10, expect=(11, 122, 122, 122, 122))
async def closure_nonlocal(start):
    count = start

    def inc(by):
        nonlocal count
        count += by
        return count

    async def ainc():
        nonlocal count
        count += await ask(100)  # suspended in a frame sharing the cell
        return count

    inc(1)
    a = await ask(count)
    inc(a)
    b = await ainc()
    c = inc(0)
    d = await ask(count)
    return a, b, c, d, count


def make_counter():
    n = 0

    def incr():
        nonlocal n
        n += 1
        return n

    def get():
        return n

    return incr, get


@case(expect=(1, 2, 3, 3))
async def closure_factory_shared_cell():
    incr, get = make_counter()  # two functions, one cell
    a = incr()
    await ask("hold")
    b = incr()
    await ask("hold again")
    c = incr()
    return a, b, c, get()


@case(3, expect=("hold", 12, [4, 9], [3, 2, 1]))
async def lambda_held(k):
    mul = lambda x: x * k  # noqa: E731
    fns = [lambda x: x + 1, lambda x, y=2: x**y]
    a = await ask("hold")
    k = await ask(4)  # rebinding k is seen by the lambda's cell
    return a, mul(3), [f(3) for f in fns], sorted([3, 1, 2], key=lambda v: -v)


@case(5, expect=("start", 12, 21))
async def inner_async_def(x):
    async def inner(y, scale=2):
        a = await add(y, x)
        return a * scale

    first = await ask("start")
    r1 = await inner(1)
    r2 = await inner(await ask(2), scale=await ask(3))
    return first, r1, r2


@case(1, 2, 3, 4, c=5, e=6, f=7, expect=[(1, 2), (3, 4), (5, 40), [("e", 6), ("f", 7)]])
@case(1, c=3, name="args_defaults_only", expect=[(1, 20), (), (3, 40), []])
async def args_variety(a, /, b=20, *args, c, d=40, **kwargs):
    r = []
    r.append(await ask((a, b)))
    r.append(await ask(args))
    r.append(await ask((c, d)))
    r.append(await ask(sorted(kwargs.items())))
    return r


@serializable
@dataclasses.dataclass
class Point:
    x: int
    y: int


@case(
    [("go", 3), {"k": "v"}, Point(0, 5), Point(1, 1), "other", ("go", -1)],
    expect=[("go", 4), ("map", "v"), ("on-axis", 5), ("point", "p"), ("default", "other"), ("no-go", -1)],
)
async def match_statement(commands):
    out = []
    for cmd in commands:
        match await ask(cmd):
            case ("go", n) if await ask(n > 0):
                out.append(("go", await add(n, 1)))
            case ("go", n):
                out.append(("no-go", n))
            case {"k": v}:
                out.append(("map", await ask(v)))
            case Point(x=0, y=yy):
                out.append(("on-axis", await ask(yy)))
            case Point():
                out.append(("point", await ask("p")))
            case _:
                out.append(("default", await ask(cmd)))
    return out


def traced(fn):
    @functools.wraps(fn)
    async def wrapper(*args, **kwargs):
        await ask(("enter", fn.__name__))
        result = await fn(*args, **kwargs)
        await ask(("exit", fn.__name__))
        return result

    return wrapper


@traced
async def traced_helper(x):
    return await add(x, 1)


@case(1, expect=(2, 3))
async def chain_decorated_helper(x):
    # agent -> traced.<locals>.wrapper (a closure over fn) -> traced_helper's code
    a = await traced_helper(x)
    b = await traced_helper(a)
    return a, b
