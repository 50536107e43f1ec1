"""Awaits in the middle of expressions: half-built calls (positional, keyword, star,
method, nested), displays, arithmetic, f-strings, conditionals, boolean ops,
subscripts, comparison chains and unpacking."""

import attrs

from tests.corpus.protocol import add, ask, serializable
from tests.corpus.registry import case


def f3(a, b, c=0):
    return (a, b, c)


def kwf(a=None, b=None, **rest):
    return (a, b, sorted(rest.items()))


def f_star(*args, **kwargs):
    return (args, sorted(kwargs.items()))


@case(1, expect=[(1, 2, 0), (1, 2, 3), ("x", 2, 0)])
async def expr_call_positional(a):
    out = []
    out.append(f3(a, await ask(2)))
    out.append(f3(a, await add(1, 1), await add(1, 2)))
    out.append(f3(await ask("x"), await ask(2)))
    return out


@case(expect=[(1, 2, []), (None, 5, [("z", 7)])])
async def expr_call_keyword():
    out = []
    out.append(kwf(a=await ask(1), b=2))
    out.append(kwf(b=await add(2, 3), z=await ask(7)))
    return out


@case([1, 2], expect=[((1, 2, 3), []), ((0, 1, 2, 4, 5), []), ((), [("k", "v"), ("other", 9)])])
async def expr_call_star(xs):
    out = []
    out.append(f_star(*xs, await ask(3)))
    out.append(f_star(0, *xs, *[await ask(4)], await ask(5)))
    out.append(f_star(**{"k": await ask("v")}, other=await ask(9)))
    return out


@serializable
@attrs.define
class Acc:
    items: list = attrs.Factory(list)

    def put(self, x, tag="-"):
        self.items.append((tag, x))
        return len(self.items)


@case(expect=(1, 2, [("-", "a"), ("t", "b")], [1, 2, 3], "p-q", "x0y"))
async def expr_method_calls():
    acc = Acc()
    lst = []
    n1 = acc.put(await ask("a"))
    n2 = acc.put(await ask("b"), tag=await ask("t"))
    lst.append(await ask(1))
    lst.extend([await ask(2), await ask(3)])
    s = "-".join([await ask("p"), "q"])
    return n1, n2, acc.items, lst, s, "x{}y".format(await ask(0))


@case(expect=(5, 5, (("in", 1, 0), (1, 2, 3), 0)))
async def expr_nested_calls():
    a = len(str(await ask(12345)))
    b = max(1, min(await ask(7), 5))
    c = f3(f3(await ask("in"), 1), tuple(sorted([await ask(3), 1, 2])))
    return a, b, c


@case(expect=([1, 2, 3, 4], ("a", "b"), {"k": "v", "k2": 2, "z": 26}, {1, 2, 3}))
async def expr_displays():
    lst = [1, await ask(2), 3, *[await ask(4)]]
    tup = ("a", await ask("b"))
    dct = {"k": await ask("v"), await ask("k2"): 2, **{"z": await ask(26)}}
    st = {1, await ask(2), 3}
    return lst, tup, dct, st


@case(3, 4, expect=(19, -4, 2.5, 993, 8))
async def expr_arith(a, b):
    r1 = a * (await ask(5)) + b
    r2 = -((await ask(2)) ** 2)
    r3 = (await ask(10)) / (await ask(4))
    r4 = 1000 - await add(a, b)
    r5 = a << await ask(2) ^ b
    return r1, r2, r3, r4, r5


@case("A", expect=("A1", "[  B]", "x=07|y", "A-'q'"))
async def expr_fstrings(a):
    s1 = f"{a}{await ask(1)}"
    s2 = f"[{await ask('B'):>3}]"
    s3 = f"x={await ask(7):02d}|{await ask('y')}"
    s4 = f"{a}-{await ask('q')!r}"
    return s1, s2, s3, s4


@case(True, expect=("yes", "n-side", 2))
async def expr_conditional(flag):
    r1 = "yes" if await ask(flag) else "no"
    r2 = (await ask("y-side")) if not flag else (await ask("n-side"))
    r3 = (await ask(1)) + (1 if flag else await ask(100))
    return r1, r2, r3


@case(expect=("and-taken", 0, "or-taken", True, "fallback"))
async def expr_boolops():
    a = 1 and await ask("and-taken")
    b = 0 and await ask("never")
    c = "" or await ask("or-taken")
    d = not await ask(0)
    e = (await ask(0)) or (await ask(None)) or "fallback"
    return a, b, c, d, e


@case({"a": 1, "b": 2}, expect=(1, {"a": 1, "c": 3}, [2, 3, 4], ["zero", 1]))
async def expr_subscripts(d):
    lst = list(range(10))
    v1 = d[await ask("a")]
    d[await ask("c")] = await add(1, 2)  # value, then d and the key on the stack
    sl = lst[await ask(2) : await ask(5)]
    lst[await ask(0)] = "zero"
    del d[await ask("b")]
    return v1, d, sl, lst[:2]


@case(5, expect=(True, False, True, True))
async def expr_compare_chain(x):
    r1 = 1 < await ask(x) <= 5
    r2 = 1 < await ask(x) < await ask(3)
    r3 = await ask(2) < x < await ask(10) != await ask(9)
    r4 = (await ask("k")) in {"k": 1} and x is not None
    return r1, r2, r3, r4


@case(expect=(1, 2, 3, [4, 5], "last"))
async def expr_unpacking():
    a, b = await ask((1, 2))
    c, *rest = await ask([3, 4, 5])
    x = await ask("last")
    return a, b, c, rest, x
