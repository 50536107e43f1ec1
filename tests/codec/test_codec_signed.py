"""The pickle protocol in signed blobs (issue 24): identity, cycles, hashing, names, refusals."""

from __future__ import annotations

import dataclasses
import sys
import types
from typing import Any

import pytest

from agentrt._codec import dumps, loads
from agentrt._codec._pickled import callable_name
from agentrt.exceptions import CannotCrossAwait, IncompatibleBlob

KEY = b"k" * 32


def signed_roundtrip(value: Any) -> Any:
    return loads(dumps(value, key=KEY), keys=[KEY])


@dataclasses.dataclass(frozen=True)
class Key:
    a: int
    b: str


@dataclasses.dataclass
class Node:
    name: str
    parent: Node | None = None
    children: list[Node] = dataclasses.field(default_factory=list)


class Singleton:
    def __reduce__(self) -> str:
        return "THE_ONE"


THE_ONE = Singleton()


class Vanishing:
    pass


def test_hashable_instances_in_sets_and_dict_keys() -> None:
    value = {Key(1, "x"): {Key(2, "y")}, "list": [Key(1, "x")]}
    assert signed_roundtrip(value) == value


def test_cycles_and_shared_references_through_instances() -> None:
    root = Node("root")
    child = Node("child", root)
    root.children.append(child)
    out = signed_roundtrip([root, child])
    assert out[0].children[0] is out[1] and out[1].parent is out[0]


def test_a_reduction_to_a_global_name_restores_that_object() -> None:
    assert signed_roundtrip([THE_ONE])[0] is THE_ONE


def test_callables_are_named_as_pickle_finds_them() -> None:
    import zoneinfo

    assert callable_name(zoneinfo.ZoneInfo._unpickle) == ("zoneinfo", "ZoneInfo._unpickle")
    assert callable_name(dataclasses.replace) == ("dataclasses", "replace")
    assert callable_name(lambda: None) is None
    assert callable_name(getattr) == ("builtins", "getattr")


def test_a_class_gone_since_the_checkpoint_is_incompatible() -> None:
    blob = dumps(Vanishing(), key=KEY)
    module = sys.modules[__name__]
    saved = module.Vanishing  # type: ignore[attr-defined]  # the class of this module
    del module.Vanishing  # type: ignore[attr-defined]
    try:
        with pytest.raises(IncompatibleBlob, match="Vanishing"):
            loads(blob, keys=[KEY])
    finally:
        module.Vanishing = saved  # type: ignore[attr-defined]


def test_an_instance_of_a_local_class_is_refused_at_get() -> None:
    class Local:
        pass

    with pytest.raises(CannotCrossAwait) as info:
        dumps({"state": [Local()]}, key=KEY)
    assert info.value.code == "AR111"
    assert info.value.path == '["state"][0]'
    assert "defined inside a function" in info.value.fix


def test_a_c_object_that_does_not_pickle_is_refused_with_the_reason() -> None:
    with pytest.raises(CannotCrossAwait) as info:
        dumps({"view": types.MappingProxyType({})}, key=KEY)
    assert info.value.code == "AR111"
    assert "mappingproxy" in info.value.fix


def test_unsigned_blobs_keep_the_strict_list() -> None:
    with pytest.raises(CannotCrossAwait) as info:
        dumps(Key(1, "x"), key=b"")
    assert info.value.code == "AR105"


class WithNew(Exception):
    """An exception with a __new__ written in Python: still agentrt's own exception reducer."""

    def __new__(cls, *args: Any) -> WithNew:
        return super().__new__(cls, *args)


def test_an_exception_with_a_python_new_stays_in_the_unsigned_list() -> None:
    exc = WithNew("a", 1)
    exc.add_note("kept")
    out = loads(dumps(exc, key=b""))
    assert type(out) is WithNew and out.args == ("a", 1) and out.__notes__ == ["kept"]
