"""Functions, classes and builtins by reference; lambdas and closures by code identity."""

from __future__ import annotations

import functools
import math
import sys
import types
from typing import Any

import pytest

from agentrt._codec import code_digest, dumps, loads, read_header, resolve_code
from agentrt.exceptions import IncompatibleBlob
from tests.codec import codec_samples as s
from tests.codec.helpers import roundtrip


def test_references_are_the_same_objects() -> None:
    values = [
        s.top_level,
        s.agent_fn,
        s.Point,
        s.Holder.Inner,
        s.Holder.static,
        len,
        print,
        math.sqrt,
        str.upper,
        dict.fromkeys,
        object.__new__,
        int,
        type(None),
        types.FunctionType,
        s,
        math,
        s.decorated,
    ]
    restored = roundtrip(values)
    # dict.fromkeys makes a new bound method on every access: equal, not identical
    assert [r for r, v in zip(restored, values, strict=True) if r is not v] == [dict.fromkeys]
    assert read_header(dumps(values)).codes == ()


def test_bound_methods() -> None:
    p = s.Point(3, -4)
    lst = [1]
    method, cls_method, append, length = roundtrip([p.norm1, s.Holder.create, lst.append, lst.__len__])
    assert method() == 7 and cls_method() == "Holder"
    append(2)
    assert append.__self__ == [1, 2] and length() == 2


def test_bound_builtin_shares_its_owner() -> None:
    lst = [1]
    r_lst, r_append = roundtrip([lst, lst.append])
    r_append(2)
    assert r_lst == [1, 2]


def test_partials() -> None:
    p = functools.partial(s.top_level, 1, b=5)
    p.note = "kept"  # type: ignore[attr-defined]
    restored = roundtrip(p)
    assert restored() == 6 and restored.note == "kept"
    assert roundtrip(functools.partial(max, 3))(1) == 3


def test_closure_keeps_its_state() -> None:
    inc = s.make_counter()
    inc()
    inc()
    restored = roundtrip(inc)
    assert restored() == 3 and inc() == 3
    assert restored.__qualname__ == "make_counter.<locals>.inc"


def test_shared_cells_stay_shared() -> None:
    push, peek = s.make_pair()
    push(1)
    r_push, r_peek = roundtrip([push, peek])
    r_push(2)
    assert r_peek() == [1, 2]
    assert r_push.__closure__[0] is r_peek.__closure__[0]


def test_recursive_closure() -> None:
    fact = s.make_recursive()
    assert roundtrip(fact)(5) == 120


def test_empty_cell() -> None:
    fn = s.make_empty_cell()
    restored = roundtrip(fn)
    with pytest.raises(NameError):
        restored()


def test_defaults_kwdefaults_and_attributes() -> None:
    inner = s.make_with_defaults()
    restored = roundtrip(inner)
    assert restored(0) == (0, [1, 2], "kw") and restored.marker == "attr"


def test_lambdas_module_level_nested_and_in_classes() -> None:
    add5 = s.make_lambda(5)
    deep = s.Holder.Inner().deep()
    r_module, r_add5, r_deep = roundtrip([s.LAMBDA, add5, deep])
    assert r_module(4) == 8 and r_add5(1) == 6 and r_deep() == "deep lambda"


def test_wrapped_original_found_through_wrapper() -> None:
    original = s.decorated.__wrapped__
    restored = roundtrip(original)
    assert restored(2) == 20 and restored is not s.decorated


def test_header_lists_codes() -> None:
    blob = dumps([s.make_counter(), s.make_lambda(1)])
    codes = read_header(blob).codes
    assert [(c.module, c.qualname) for c in codes] == [
        ("tests.codec.codec_samples", "make_counter.<locals>.inc"),
        ("tests.codec.codec_samples", "make_lambda.<locals>.<lambda>"),
    ]
    assert codes[0].digest == code_digest(s.make_counter().__code__)


class TestCodeIdentity:
    def test_digest_ignores_position_but_not_behaviour(self) -> None:
        src = "def f(a):\n    return a + 1\n"
        one = compile(src, "one.py", "exec").co_consts[0]
        moved = compile("\n\n\n" + src, "elsewhere/two.py", "exec").co_consts[0]
        changed = compile(src.replace("+ 1", "+ 2"), "one.py", "exec").co_consts[0]
        assert code_digest(one) == code_digest(moved)
        assert code_digest(one) != code_digest(changed)

    def test_digest_independent_of_set_order(self) -> None:
        src = "def f(x):\n    return x in {'a', 'b', 'c', 'd'}\n"
        code = compile(src, "m.py", "exec", dont_inherit=True).co_consts[0]
        assert len(code_digest(code)) == 32
        script = (
            "import sys; sys.path[:0] = {paths!r}\n"
            "from agentrt._codec import code_digest\n"
            "code = compile({src!r}, 'm.py', 'exec', dont_inherit=True).co_consts[0]\n"
            "print(code_digest(code))\n"
        )
        import subprocess

        outputs = {
            subprocess.run(
                [sys.executable, "-c", script.format(paths=sys.path[:3], src=src)],
                env={"PYTHONHASHSEED": seed},
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            for seed in ("1", "2", "3")
        }
        assert outputs == {code_digest(code)}

    def test_resolve_code_finds_nested_code(self) -> None:
        code = s.make_counter().__code__
        assert resolve_code("tests.codec.codec_samples", code.co_qualname, code_digest(code)) is code

    def test_missing_module(self) -> None:
        with pytest.raises(
            IncompatibleBlob,
            match=r"module 'no_such_mod' is not imported; import it before "
            r"Machine.set\(\) or pass allow_modules=\('no_such_mod',\)",
        ):
            resolve_code("no_such_mod", "f", "00")

    def test_allowed_module_is_imported(self) -> None:
        sys.modules.pop("json.tool", None)
        import json.tool as tool_module

        code = tool_module.main.__code__
        sys.modules.pop("json.tool")
        try:
            resolved = resolve_code("json.tool", "main", code_digest(code), allow_modules=("json.tool",))
            assert code_digest(resolved) == code_digest(code)
        finally:
            sys.modules["json.tool"] = tool_module

    def test_missing_function(self) -> None:
        with pytest.raises(
            IncompatibleBlob, match=r"tests.codec.codec_samples:agent\.<locals>\.helper no longer exists"
        ):
            resolve_code("tests.codec.codec_samples", "agent.<locals>.helper", "00")

    def test_changed_code(self) -> None:
        code = s.top_level.__code__
        with pytest.raises(
            IncompatibleBlob,
            match=r"code of tests.codec.codec_samples:top_level changed since the checkpoint "
            r"\(digest a1b2c3d4 → [0-9a-f]{8}\); finish old runs",
        ):
            resolve_code("tests.codec.codec_samples", "top_level", "a1b2c3d4" + "0" * 24)
        assert resolve_code("tests.codec.codec_samples", "top_level", code_digest(code)) is code


class TestChangedCodeAtLoad:
    """A blob written against one version of a module, loaded against another."""

    def _module(self, name: str, source: str) -> types.ModuleType:
        module = types.ModuleType(name)
        module.__file__ = f"<{name}>"
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)
        sys.modules[name] = module
        return module

    def test_edit_above_keeps_blob_valid_and_body_edit_breaks_it(self) -> None:
        name = "codec_test_dynamic_mod"
        src = "def make():\n    k = 3\n    return lambda v: v + k\n"
        try:
            module = self._module(name, src)
            blob = dumps(module.make())
            self._module(name, "# a comment\n\n" + src)
            assert loads(blob)(1) == 4
            self._module(name, src.replace("v + k", "v - k"))
            with pytest.raises(
                IncompatibleBlob,
                match=r"code of codec_test_dynamic_mod:make\.<locals>\.<lambda> "
                r"changed since the checkpoint",
            ):
                loads(blob)
            self._module(name, "def other():\n    pass\n")
            with pytest.raises(IncompatibleBlob, match="no longer exists"):
                loads(blob)
            del sys.modules[name]
            with pytest.raises(IncompatibleBlob, match="is not imported"):
                loads(blob)
        finally:
            sys.modules.pop(name, None)

    def test_renamed_reference(self) -> None:
        name = "codec_test_dynamic_ref"
        try:
            module = self._module(name, "def f():\n    return 1\nclass C:\n    pass\n")
            blob = dumps([module.f, module.C])
            self._module(name, "f = 1\nclass D:\n    pass\n")
            with pytest.raises(
                IncompatibleBlob,
                match=r"codec_test_dynamic_ref:f is now a int, but the checkpoint "
                r"recorded a function",
            ):
                loads(blob)
        finally:
            sys.modules.pop(name, None)


def test_reference_lookup_never_triggers_module_getattr() -> None:
    name = "codec_test_getattr_mod"
    module = types.ModuleType(name)
    calls: list[str] = []

    def __getattr__(attr: str) -> Any:
        calls.append(attr)
        raise AttributeError(attr)

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    exec("def f():\n    return 1\n", module.__dict__)
    sys.modules[name] = module
    try:
        blob = dumps(module.f)
        del module.__dict__["f"]
        with pytest.raises(IncompatibleBlob):
            loads(blob)
        assert calls == []
    finally:
        sys.modules.pop(name, None)
