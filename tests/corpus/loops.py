"""Loops with awaits inside: every kind of for-iterator on the value stack, while with
walrus, break/continue/else, nesting, and augmented assignment with a preloaded operand."""

import attrs

from tests.corpus.protocol import add, ask, serializable
from tests.corpus.registry import case


@case([1, 2, 3], expect=[(1, 2), (2, 4), (3, 6)])
async def loop_for_list(items):
    out = []
    for x in items:
        y = await ask(x)
        out.append((x, y * 2))
    return out


@case("ab", (10, 20), expect=[("a", "a"), ("b", "b"), 10, 20])
async def loop_for_str_tuple(s, t):
    out = []
    for ch in s:
        out.append((ch, await ask(ch)))
    for v in t:
        out.append(await ask(v))
    return out


@case(2, 11, 3, expect=[102, 105, 108])
async def loop_for_range(start, stop, step):
    out = []
    for i in range(start, stop, step):
        out.append(await add(i, 100))
    return out


@case({"a": 1, "b": 2, "c": 3}, expect=["a", "b", "c"])
async def loop_dict_keys(d):
    seen = []
    for k in d.keys():
        seen.append(await ask(k))
    return seen


@case({"a": 1, "b": 2, "c": 3}, expect=36)
async def loop_dict_values(d):
    total = 0
    for v in d.values():
        r = await add(v, 10)
        total = total + r
    return total


@case({"x": 1, "y": 2}, expect={"x": 2, "y": 4})
async def loop_dict_items(d):
    out = {}
    for k, v in d.items():
        out[k] = await add(v, v)
    return out


@case(["p", "q", "r"], expect=[(1, "p"), (2, "q"), (3, "r")])
async def loop_enumerate(items):
    out = []
    for i, x in enumerate(items, start=1):
        out.append((await ask(i), x))
    return out


@case([1, 2, 3], ["a", "b", "c", "d"], expect=[(1, "a"), (2, "b"), (3, "c")])
async def loop_zip(xs, ys):
    out = []
    for x, y in zip(xs, ys):
        out.append(await ask((x, y)))
    return out


@case([1, 2, 3], ("x", "y"), expect=[3, 2, 1, "y", "x", 2, 1, 0])
async def loop_reversed(lst, tup):
    out = []
    for x in reversed(lst):  # list_reverseiterator
        out.append(await ask(x))
    for x in reversed(tup):  # reversed object
        out.append(await ask(x))
    for i in reversed(range(3)):  # range_iterator
        out.append(await ask(i))
    return out


@case(7, expect=[0, 4, 16, 36])
async def loop_genexpr(n):
    out = []
    for sq in (i * i for i in range(n) if i % 2 == 0):
        out.append(await ask(sq))
    return out


def countdown(n):
    while n > 0:
        yield n
        n -= 1
    yield "liftoff"


@case(3, expect=[3, 2, 1, "liftoff"])
async def loop_sync_generator_fn(n):
    out = []
    for v in countdown(n):
        out.append(await ask(v))
    return out


@case(4, expect=[3, 2, 1, "b", "a"])
async def loop_while_walrus(n):
    seen = []
    while (n := await add(n, -1)) > 0:  # the await is inside the walrus
        seen.append(n)
    stack = ["a", "b"]
    while (item := (stack.pop() if stack else None)) is not None:
        seen.append(await ask(item))
    return seen


@case(
    [1, 2, 3, 4, 8, 9],
    expect=[("odd", 1), ("even", 2), ("odd", 3), ("even", 4), ("stop", 8), 3, ("else", "done")],
)
async def loop_break_continue(items):
    out = []
    for x in items:
        if x % 2:
            out.append(("odd", await ask(x)))
            continue
        if x > 5:
            out.append(("stop", await ask(x)))
            break
        out.append(("even", await ask(x)))
    else:
        out.append("no-break")
    i = 0
    while True:
        i = await add(i, 1)
        if i < 3:
            continue
        break
    out.append(i)
    for y in range(2):
        await ask(y)
    else:
        out.append(("else", await ask("done")))
    return out


@case([[1, 2], [3], []], expect=[10, 11, 20, 21, ("row", 0), 30, 31, ("row", 1), ("row", 2)])
async def loop_nested(rows):
    out = []
    for i, row in enumerate(rows):
        for j in range(len(row)):
            k = 0
            while k < 2:
                out.append(await add(row[j] * 10, k))
                k += 1
        out.append(("row", await ask(i)))
    return out


@serializable
@attrs.define
class Box:
    value: int = 0


@case(4, expect=(12, [0, 1, 2, 3], 16, {"k": 94}))
async def loop_augassign(n):
    acc = 0
    parts = []
    box = Box(1)
    tally = {"k": 100}
    for i in range(n):
        acc += await add(i, i)  # acc is on the stack under the await
        parts += [await ask(i)]  # the list too, plus a half-built display
        box.value *= await add(1, 1)  # box and box.value on the stack
        tally["k"] -= await ask(i)  # tally, "k" and the old value on the stack
    return acc, parts, box.value, tally
