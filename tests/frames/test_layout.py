"""The version table refuses what it has not verified, with a message that says why."""

import pytest

from agentrt._frames import _layout


def test_self_check_passes_on_this_interpreter():
    _layout.self_check()


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"minor": 14}, "no verified frame layout for this version"),
        ({"minor": 10}, "no verified frame layout for this version"),
        ({"implementation": "pypy"}, "reads CPython frame internals"),
        ({"pointer_size": 4}, "only 64-bit builds"),
        ({"gil_enabled": False}, "free-threaded"),
    ],
)
def test_unsupported_interpreters_get_a_clear_runtime_error(kwargs, reason):
    with pytest.raises(RuntimeError, match=reason) as info:
        _layout.pick_layout(**kwargs)
    assert "Supported: CPython 3.11, 3.12 and 3.13" in str(info.value)


def test_lifecycle_of_generator_like_objects():
    def gen():
        yield 1

    g = gen()
    assert _layout.lifecycle(g) == "CREATED"
    next(g)
    assert _layout.lifecycle(g) == "SUSPENDED"
    g.close()
    assert _layout.lifecycle(g) == "CLOSED"


def test_running_frame_is_reported_running():
    seen = []

    def gen():
        seen.append(_layout.lifecycle(g))
        yield

    g = gen()
    next(g)
    assert seen == ["RUNNING"]
