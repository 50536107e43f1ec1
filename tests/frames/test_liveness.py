"""Liveness per suspension site: dead values never block a checkpoint, live ones always count."""

import re
import threading

from agentrt._frames import _layout as L
from agentrt._frames._liveness import SiteKind, analyze
from agentrt.lowlevel import suspend


def live_names(fn):
    """{await line: sorted live local names} for every suspension site of ``fn``."""
    code = fn.__code__
    return {
        site.lineno - code.co_firstlineno: sorted(code.co_varnames[i] for i in site.live_locals)
        for site in analyze(code).sites.values()
    }


async def lock_used_only_before():
    lock = threading.Lock()
    with lock:
        pass
    match = re.match("a", "a")
    first = match.group(0)
    x = await suspend(1)
    return first, x


def test_values_used_only_before_the_await_are_dead():
    assert live_names(lock_used_only_before) == {6: ["first"]}


async def used_in_handler_only():
    note = "kept for the handler"
    try:
        await suspend(1)
    except ValueError:
        return note
    return None


def test_exception_edges_keep_handler_reads_live():
    assert live_names(used_in_handler_only) == {3: ["note"]}


async def loop_carried(items):
    total = 0
    for item in items:
        got = await suspend(item)
        total += got
    return total


async def preloaded_operand(items):
    total = 0
    for item in items:
        total += await suspend(item)
    return total


def test_loop_carried_values_are_live():
    [names] = live_names(loop_carried).values()
    assert names == ["total"]  # 'items' is dead: the loop holds its iterator on the stack


def test_a_preloaded_operand_lives_on_the_stack_not_in_the_local():
    [names] = live_names(preloaded_operand).values()
    assert names == []  # the old 'total' was pushed before the await; the local is rewritten


async def reads_locals_by_name():
    a = 1
    b = 2
    await suspend(0)
    return locals()


def test_locals_call_keeps_everything_live():
    [names] = live_names(reads_locals_by_name).values()
    assert names == ["a", "b"]


async def deleted_after():
    x = object()
    await suspend(0)
    del x


def test_del_after_the_await_counts_as_a_use():
    [names] = live_names(deleted_after).values()
    assert names == ["x"]


async def with_stack_entries(xs):
    acc = 0
    for x in xs:
        acc += await suspend(x)
    return acc


def test_stack_depth_counts_iterator_operand_and_awaitable():
    [site] = analyze(with_stack_entries.__code__).sites.values()
    assert site.kind is SiteKind.AWAIT
    assert site.stack_depth == 3  # list iterator, pre-loaded 'acc', the awaited trap


def plain_generator():
    kept = []
    yield 1
    kept.append(2)
    yield kept


async def async_generator():
    yield 1
    await suspend(2)


def test_site_kinds():
    assert {s.kind for s in analyze(plain_generator.__code__).sites.values()} == {SiteKind.YIELD}
    kinds = sorted(s.kind.value for s in analyze(async_generator.__code__).sites.values())
    assert kinds == ["async-yield", "await"]


def must_bind_names(fn):
    code = fn.__code__
    return [
        {code.co_varnames[i] for i in site.must_bind}
        for site in sorted(analyze(code).sites.values(), key=lambda s: s.yield_offset)
    ]


async def _read_twice_after_check(p):
    if p:
        y = 1
    await suspend("a")
    if p:
        return [y, y]  # LOAD_FAST_CHECK y, then LOAD_FAST y (3.12+)
    return None


async def _unchecked_read_on_another_path(p):
    y = 1
    await suspend("a")
    return y


def test_a_checked_read_ends_the_unchecked_path():
    """A local needs to be bound at an await only if some path from it reaches an unchecked read
    without first passing a checked read or a store of that local."""
    assert [names - {"p"} for names in must_bind_names(_read_twice_after_check)] == [set()]
    expected = [{"y"}] if L.UNCHECKED_LOADS else [set()]
    assert [names - {"p"} for names in must_bind_names(_unchecked_read_on_another_path)] == expected
