"""The value-stack labels of ``agentrt dump``: derived from the bytecode, checked against the engine."""

from __future__ import annotations

import importlib
import inspect
import types

import pytest

from agentrt import serializable
from agentrt._frames._liveness import SiteKind, analyze
from agentrt._frames._stack import _code, _producers, describe_slots
from agentrt.inspection import dump_blob
from agentrt.lowlevel import Machine, suspend

CORPUS = [
    f"tests.corpus.{m}" for m in ("calls", "comps", "contexts", "excs", "exprs", "gens", "loops", "state")
]
FRAME_FLAGS = inspect.CO_COROUTINE | inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR


def _codes(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _suspension_sites():
    for name in CORPUS:
        module = importlib.import_module(name)
        with open(module.__file__) as f:
            top = compile(f.read(), module.__file__, "exec")
        for code in _codes(top):
            if code.co_flags & FRAME_FLAGS:
                for site in analyze(code).sites.values():
                    yield code, site


def test_the_simulated_stack_agrees_with_the_engine_at_every_corpus_suspension():
    sites = list(_suspension_sites())
    assert len(sites) > 300
    for code, site in sites:
        info = _code(code)
        producers = _producers(info, info.index_of[site.yield_offset])
        assert producers is not None and len(producers) == site.stack_depth + 1, (code.co_qualname, site)
        slots = describe_slots(
            code, site.yield_offset, site.stack_depth, [False] * site.stack_depth,
            site.kind is SiteKind.AWAIT, [None] * site.stack_depth,
        )  # fmt: skip
        assert [s.position for s in slots] == list(range(site.stack_depth))
        if site.kind is SiteKind.AWAIT:
            assert slots[-1].role == "awaited"


def f(*args, **kwargs):
    return args, kwargs


@serializable
class Box:
    def put(self, *values):
        return values


async def keyword_argument():
    return f(1, b=2, c=await suspend("kw"))


async def method_call(box):
    return box.put(5, await suspend("method"))


async def operand_and_fstring(x):
    return f"{x}-{x * 3 + await suspend('op')}"


async def comprehension(xs):
    return [y + await suspend(y) for y in xs]


def _stack(fn, *args):
    m = Machine(fn, *args)
    m.step()
    dump = dump_blob(m.get())
    m.discard()
    return [(e.role, e.label, e.value.repr if e.value else None) for f in dump.chain for e in f.stack]


def _line(fn) -> int:
    return fn.__code__.co_firstlineno + 1  # each agent above is one `return` line


def test_call_roles_name_the_callable_and_keywords():
    stack = _stack(keyword_argument)
    line = _line(keyword_argument)
    assert ("call_argument", f"argument b= of the call f(...) at line {line}", "2") in stack
    assert ("call_argument", f"argument 0 of the call f(...) at line {line}", "1") in stack
    assert [r for r, _, _ in stack].count("call_null") == 1
    method = _stack(method_call, Box())
    assert (
        "call_self",
        f"self argument of the method call .put(...) at line {_line(method_call)}",
        "<tests.inspect.test_stack_roles.Box>",
    ) in method


def test_operands_fstring_parts_and_comprehensions():
    roles = [label for _, label, _ in _stack(operand_and_fstring, 2)]
    line = _line(operand_and_fstring)
    assert f"part 0 of the f-string being built at line {line}" in roles
    assert f"left operand of * at line {line}" not in roles  # x * 3 is computed before the await
    assert f"left operand of + at line {line}" in roles
    comp = _stack(comprehension, [1, 2])
    assert any(role == "for_iterator" and "index 1" in (value or "") for role, _, value in comp)
    assert any(role == "collection_being_built" for role, _, _ in comp)


@pytest.mark.parametrize("fn", [keyword_argument, comprehension])
def test_no_slot_falls_back_to_a_bare_position(fn):
    args = ([1, 2],) if fn is comprehension else ()
    assert not any(label.startswith("stack slot") for _, label, _ in _stack(fn, *args))
