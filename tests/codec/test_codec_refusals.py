"""What cannot cross an await: CannotCrossAwait with the code, the variable and the path."""

from __future__ import annotations

import asyncio
import functools
import io
import re
import socket
import threading
import types
import weakref
from typing import Any

import pytest

from agentrt._codec import dumps
from agentrt._codec._extension import extension_for_type
from agentrt.exceptions import CannotCrossAwait
from agentrt.lowlevel import suspend
from tests.codec import codec_samples as s
from tests.codec.codec_fake_ext import FakeFrame, frame_of


def refuse(value: Any) -> CannotCrossAwait:
    with pytest.raises(CannotCrossAwait) as info:
        dumps(value)
    return info.value


def _gen() -> Any:
    yield 1


class Awaitable:
    def __await__(self) -> Any:
        yield


@pytest.fixture
def tcp_socket() -> Any:
    sock = socket.socket()
    yield sock
    sock.close()


def test_resource_types_are_ar112(tcp_socket: Any, tmp_path: Any) -> None:
    with open(tmp_path / "f.txt", "w") as handle:
        values = [
            handle,
            io.BytesIO(),
            tcp_socket,
            threading.Lock(),
            threading.RLock(),
            threading.Event(),
            threading.Condition(),
            threading.Semaphore(),
            threading.Thread(target=print),
        ]
        if extension_for_type(types.GeneratorType) is None:  # else the frame engine checkpoints it
            values.append(_gen())
        for value in values:
            error = refuse({"res": value})
            assert error.code == "AR112", (value, error)
            assert error.path == '["res"]'
            assert "close it / `del` it before the await" in error.fix or "Exhaust" in error.fix


def test_asyncio_future_and_foreign_awaitables_are_ar101() -> None:
    loop = asyncio.new_event_loop()
    try:
        future = loop.create_future()
        assert refuse([future]).code == "AR101"
    finally:
        loop.close()
    error = refuse([Awaitable()])
    assert error.code == "AR101" and error.path == "[0]"


def test_match_is_ar103_and_pattern_is_fine() -> None:
    match = re.match("a", "a")
    error = refuse({"m": match, "p": re.compile("a")})
    assert error.code == "AR103" and error.path == '["m"]' and "re.Match" in error.type_name


def test_weak_references_are_ar104() -> None:
    target = s.Node(1)
    for value in (
        weakref.ref(target),
        weakref.proxy(target),
        weakref.WeakKeyDictionary(),
        weakref.WeakValueDictionary(),
        weakref.WeakSet(),
        weakref.finalize(target, print),
    ):
        assert refuse([value]).code == "AR104", value


def test_unmarked_instance_is_ar105_with_fix() -> None:
    error = refuse({"state": {"client": s.NotMarked()}})
    assert error.code == "AR105" and error.type_name == "tests.codec.codec_samples.NotMarked"
    assert error.path == '["state"]["client"]'
    assert "Mark class NotMarked with @agentrt.serializable" in error.fix
    assert (
        "AR105" in str(error)
        and '["state"]["client"]' in str(error)
        and "tests.codec.codec_samples.NotMarked" in str(error)
    )


def test_bound_method_of_unmarked_object_is_ar106(tmp_path: Any) -> None:
    error = refuse({"cb": s.NotMarked().method})
    assert error.code == "AR106" and error.path == '["cb"]' and "NotMarked.method" in error.type_name
    with open(tmp_path / "f.txt", "w") as handle:
        error = refuse([handle.write])
        assert error.code == "AR106" and error.path == "[0]"
    error = refuse([functools.partial(s.NotMarked().method)])
    assert error.code == "AR106"


def test_nested_paths_through_instances_closures_and_lists() -> None:
    lock = threading.Lock()
    point = s.Point(1, tags=["ok", lock])  # type: ignore[list-item]
    error = refuse({"p": point})
    assert error.path == '["p"].tags[1]' and error.code == "AR112"
    holder = s.Node(s.Node(s.NotMarked()))
    assert refuse([holder]).path == "[0].value.value"

    def closure() -> Any:
        return lock

    assert refuse({"fn": closure}).path == "[\"fn\"].<closure cell 'lock'>"


def test_unreferable_things_are_named() -> None:
    class Local:
        pass

    error = refuse([Local])
    assert error.code == "AR111" and "defined inside a function" in error.fix
    code_error = refuse([s.top_level.__code__])
    assert code_error.code == "AR111" and code_error.type_name == "code"
    namespace: dict[str, Any] = {}
    exec("def made(): pass", namespace)
    error = refuse([namespace["made"]])
    assert error.code == "AR106" and "globals that are not the namespace" in error.fix


def test_frame_location_becomes_the_reported_place() -> None:
    frame = frame_of(s.agent_fn, {"x": 1, "state": {"client": s.NotMarked()}}, lineno=42)
    error = refuse(frame)
    assert (error.variable, error.path, error.function, error.lineno) == (
        "state",
        'state["client"]',
        "agent_fn",
        42,
    )
    assert error.filename == s.agent_fn.__code__.co_filename
    assert "variable 'state' at state[\"client\"]" in str(error) and "agent_fn" in str(error)


def test_innermost_frame_wins() -> None:
    inner = frame_of(s.make_counter, {"sock": threading.Lock()}, lineno=3)
    outer = frame_of(s.agent_fn, {"awaiting": inner, "fine": [1, 2]}, lineno=9)
    error = refuse(outer)
    assert (error.variable, error.path, error.function, error.lineno, error.code) == (
        "sock",
        "sock",
        "make_counter",
        3,
        "AR112",
    )


def test_extension_object_refused_when_its_code_cannot_be_found() -> None:
    namespace: dict[str, Any] = {"__name__": "tests.codec.codec_samples"}
    exec("async def ghost():\n    pass\n", namespace)
    error = refuse(FakeFrame(namespace["ghost"].__code__, "tests.codec.codec_samples", {}))
    assert error.code == "AR111" and "cannot be found again" in error.fix


def test_getstate_that_raises_is_reported() -> None:
    class Bad(s.WithState):
        def __getstate__(self) -> Any:
            raise RuntimeError("nope")

    Bad.__qualname__ = "WithState"  # pretend to be referable; the failure is in __getstate__
    error = refuse({"b": Bad(1)})
    assert error.code in ("AR111", "AR105")


def test_deep_nesting_is_a_clear_error() -> None:
    value: list[Any] = []
    for _ in range(100_000):
        value = [value]
    error = refuse(value)
    assert error.code == "AR111" and "nested too deeply" in error.fix


async def _agen() -> Any:
    yield 1


def test_pythons_internal_awaitables_are_ar111() -> None:
    agen = _agen()
    closing = agen.aclose()  # an async_generator_athrow: an awaitable of Python's own machinery
    try:
        if extension_for_type(type(closing)) is not None:
            pytest.skip("the frame engine checkpoints this awaitable")
        error = refuse({"closing": closing})
        assert error.code == "AR111" and "let it finish" in error.fix
    finally:
        closing.close()


def test_value_shared_by_two_frames_is_reported_in_the_inner_one() -> None:
    state = {"client": s.NotMarked()}
    inner = frame_of(s.make_counter, {"state": state}, lineno=3)
    outer = frame_of(s.agent_fn, {"state": state, "awaiting": inner}, lineno=9)
    error = refuse(outer)
    assert (error.function, error.lineno, error.path) == ("make_counter", 3, 'state["client"]')


async def _held_lock(lock: Any) -> None:
    with lock:
        await suspend(1)


async def _held_file(path: str) -> None:
    with open(path) as f:
        await suspend(f)


def test_a_lock_or_file_held_by_with_across_an_await_is_ar112_as_agentrt_check_says(tmp_path: Any) -> None:
    import threading

    from agentrt.lowlevel import Machine

    (tmp_path / "f.txt").write_text("x")
    cases = (
        (_held_lock, threading.Lock(), "_thread.lock"),
        (_held_file, str(tmp_path / "f.txt"), "TextIOWrapper"),
    )
    for fn, arg, kind in cases:
        m = Machine(fn, arg)
        payload = m.step()
        try:
            with pytest.raises(CannotCrossAwait) as info:
                m.get()
        finally:
            m.discard()
            if isinstance(payload, io.TextIOWrapper):
                payload.close()  # the abandoned with block does not close it
        message = str(info.value)
        assert message.startswith("AR112") and kind in message and "@agentrt.serializable" not in message


async def _hand_driven_trap() -> Any:
    marker = suspend(1).send(None)  # what the trap yields to the runtime, taken out by hand
    got = await suspend(2)
    return marker, got


def test_a_trap_marker_taken_out_by_hand_names_the_trap_not_a_class_to_mark() -> None:
    from agentrt.lowlevel import Machine

    m = Machine(_hand_driven_trap)
    assert m.step() == 2
    try:
        with pytest.raises(CannotCrossAwait) as info:
            m.get()
    finally:
        m.discard()
    message = str(info.value)
    assert message.startswith("AR111") and "variable 'marker'" in message
    assert "suspend() trap" in message and "@agentrt.serializable" not in message
