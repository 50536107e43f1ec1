"""Classes that module:qualname does not name (agentrt/_codec/_class_paths.py): pydantic parametrized
generics, create_model classes held under another name or by a module-level object, and functions a
decorator replaced by an object; each restored in this process and in a fresh one (signed blobs),
refused in unsigned blobs and when nothing at module level holds them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentrt._codec import dumps, loads
from agentrt.exceptions import CannotCrossAwait
from tests.codec import class_path_subjects as s

KEY = b"k" * 32
ROOT = Path(__file__).resolve().parents[2]


def signed_roundtrip(value: object) -> object:
    return loads(dumps(value, key=KEY), keys=[KEY])


def in_fresh_process(value: object, probe: str) -> str:
    """Restore ``value``'s signed blob in a new interpreter and print ``probe`` (about ``v``) there;
    the subjects' module is imported first, as a host imports its code."""
    script = (
        "import sys\n"
        "import tests.codec.class_path_subjects\n"
        "from agentrt._codec import loads\n"
        f"v = loads(sys.stdin.buffer.read(), keys=[{KEY!r}])\n"
        f"print(repr(({probe})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=dumps(value, key=KEY),
        capture_output=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().strip()


def test_a_pydantic_generic_is_its_origin_subscripted_again() -> None:
    value = s.Envelope[s.Item](payload=s.Item(name="bolt", qty=3), tag="x")
    back = signed_roundtrip(value)
    assert type(back) is s.Envelope[s.Item]
    assert back == value
    assert (
        in_fresh_process(value, "type(v).__qualname__, v.payload.qty, v.tag") == "('Envelope[Item]', 3, 'x')"
    )


def test_a_pydantic_generic_over_a_typevar() -> None:
    value = s.Envelope[s.T](payload=[1, 2])  # type: ignore[valid-type]  # what openai's .parse() makes
    back = signed_roundtrip(value)
    assert type(back) is type(value)
    assert back.payload == [1, 2]


def test_a_created_model_under_another_module_name() -> None:
    value = s.Schema(city="Oslo")  # type: ignore[call-arg]  # fields made by create_model
    back = signed_roundtrip(value)
    assert type(back) is s.Schema
    assert in_fresh_process(value, "type(v).__name__, v.city, v.days") == "('Weather', 'Oslo', 3)"


def test_a_class_and_a_function_held_by_a_decorator_object() -> None:
    args = s.double.args_schema(a=4)
    value = {"tool": s.double, "args": args, "cls": s.double.args_schema}
    back = signed_roundtrip(value)
    assert back["cls"] is s.double.args_schema
    assert type(back["args"]) is s.double.args_schema
    assert back["tool"].func(back["args"].a) == 8
    probe = "v['cls'] is v['tool'].args_schema.__class__ or v['cls'].__name__, v['tool'].func(v['args'].a)"
    assert in_fresh_process(value, probe) == "('double', 8)"


def test_unsigned_blobs_and_unheld_classes_stay_refused() -> None:
    with pytest.raises(CannotCrossAwait, match=r"AR111.*Envelope\[Item\].*not reachable by module:qualname"):
        dumps(s.Envelope[s.Item])  # an unsigned blob calls nothing, not even a subscription
    with pytest.raises(CannotCrossAwait, match=r"AR111.*Weather"):
        dumps(s.Schema)
    with pytest.raises(CannotCrossAwait, match=r"AR111.*Loose"):
        dumps(s.make_unfindable()(x=1), key=KEY)


def test_a_decorator_replaced_function_is_code_in_unsigned_blobs_too() -> None:
    """The function is found again by its code (named by digest), which needs no call."""
    back = loads(dumps(s.double.func, key=b""))
    assert back is not s.double.func and back.__code__ is s.double.func.__code__
    assert back(21) == 42


def test_a_function_two_closures_down_in_a_library_tool_object() -> None:
    """``@function_tool`` of the OpenAI Agents SDK's shape: the tool holds a library closure that
    holds a closure that holds the user's function; its code is found there."""
    import asyncio

    inner = s.lookup.on_invoke_tool.__closure__[0].cell_contents.__closure__[0].cell_contents  # type: ignore[index, union-attr]
    assert inner.__qualname__ == "lookup"
    back = signed_roundtrip(s.lookup)
    assert asyncio.run(back.on_invoke_tool("hi")) == "HI"
    assert asyncio.run(loads(dumps(inner, key=b""))("x")) == "X"
