"""Floats bound to two names stay one float across get -> set (blob-format §6), and floats no
other name holds are written as plain floats (``_reduce._share_floats`` reads reference counts).

The cases: within one frame, down a chain (computed and constant floats), in an unstarted
coroutine (a restored one too), in generators, and the documented limit -- a float inside a
container or a cell comes back equal, as its own float.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pytest

from agentrt._codec import _reduce
from agentrt.lowlevel import Done, Machine, suspend


def _round_trip(machine: Machine, value: Any = None, *, twice: bool = False) -> Any:
    """get -> set -> step to the end; ``twice``: the restored machine is checkpointed again first."""
    restored = Machine.set(machine.get())
    machine.discard()
    if twice:
        again = Machine.set(restored.get())
        restored.discard()
        restored = again
    done = restored.step(value)
    assert isinstance(done, Done)
    return done.value


@pytest.fixture
def boxed() -> Iterator[list[int]]:
    """How many floats each frame of a get() wrapped (records ``_share_floats``'s answers)."""
    seen: list[int] = []
    original = _reduce._share_floats

    def spy(enc: Any, state: list[Any], alone: int) -> tuple[int, ...] | None:
        positions = original(enc, state, alone)
        seen.append(len(positions or ()))
        return positions

    _reduce._share_floats = spy
    try:
        yield seen
    finally:
        _reduce._share_floats = original


# --- one frame ------------------------------------------------------------------------------


async def _computed_alias(x: float) -> tuple[bool, bool]:
    a = x * 3.0
    b = a
    c = x * 5.0  # held by this frame only
    await suspend("floats")
    return a is b, c == x * 5.0


async def _constant_alias() -> bool:
    a = 0.125
    b = a
    await suspend("floats")
    return a is b


async def _lone_floats(x: float) -> float:
    a = x * 3.0
    b = x + 1.0
    await suspend("floats")
    return a + b


@pytest.mark.parametrize("twice", [False, True])
def test_two_names_of_one_computed_float_stay_one(twice: bool) -> None:
    machine = Machine(_computed_alias, 0.5)
    machine.step()
    assert _round_trip(machine, twice=twice) == (True, True)


@pytest.mark.parametrize("twice", [False, True])
def test_two_names_of_one_constant_float_stay_one(twice: bool) -> None:
    machine = Machine(_constant_alias)
    machine.step()
    assert _round_trip(machine, twice=twice) is True


def test_a_float_only_its_frame_holds_is_written_plain(boxed: list[int]) -> None:
    machine = Machine(_lone_floats, 0.5)
    machine.step()
    blob = machine.get()
    assert boxed == [0]  # neither float has a second holder: nothing wrapped
    restored = Machine.set(blob)
    boxed.clear()
    restored.get()  # the restored frame's floats are fresh objects: still nothing to wrap
    assert boxed == [0]
    done = restored.step(None)
    assert isinstance(done, Done) and done.value == 0.5 * 3.0 + 0.5 + 1.0


def test_an_aliased_float_is_wrapped_once_per_occurrence(boxed: list[int]) -> None:
    machine = Machine(_computed_alias, float("0.5"))  # not a constant of this module: the frame's own
    machine.step()
    machine.get()
    assert boxed == [2]  # a and b; c (held by the frame only) and x (the caller's argument) are not
    machine.discard()


# --- down a chain ---------------------------------------------------------------------------


async def _callee(z: float) -> float:
    await suspend("inner")
    return z


async def _computed_caller(x: float) -> bool:
    y = x * 2.0
    back = await _callee(y)
    return back is y


async def _constant_caller() -> bool:
    y = 0.375
    back = await _callee(y)
    return back is y


async def _two_levels(x: float) -> bool:
    y = x * 7.0
    back = await _middle(y)
    return back is y


async def _middle(m: float) -> float:
    other = m * 1.0  # an equal float, not the same one
    back = await _callee(m)
    assert back is m and other is not m
    return back


@pytest.mark.parametrize("twice", [False, True])
@pytest.mark.parametrize("agent", [_computed_caller, _constant_caller, _two_levels])
def test_a_float_passed_down_the_chain_stays_one(agent: Any, twice: bool) -> None:
    args = () if agent is _constant_caller else (0.25,)
    machine = Machine(agent, *args)
    machine.step()
    assert _round_trip(machine, twice=twice) is True


async def _holds_unstarted(x: float) -> bool:
    y = x * 4.0
    pending = _callee(y)  # created, not started: its argument is the caller's float
    await suspend("outer")
    back = await pending
    return back is y


@pytest.mark.parametrize("twice", [False, True])
def test_an_unstarted_coroutine_keeps_its_float_argument_shared(twice: bool) -> None:
    machine = Machine(_holds_unstarted, 0.5)
    machine.step()
    restored = Machine.set(machine.get())
    machine.discard()
    if twice:  # the unstarted coroutine is now a restored one that never ran
        again = Machine.set(restored.get())
        restored.discard()
        restored = again
    assert restored.step(None) == "inner"
    done = restored.step(None)
    assert isinstance(done, Done) and done.value is True


def _gen(value: float) -> Generator[float, None, None]:
    held = value
    yield held
    yield held


async def _generator_holder(x: float) -> bool:
    y = x * 9.0
    gen = _gen(y)
    first = next(gen)
    await suspend("gen")
    return first is y and next(gen) is y


@pytest.mark.parametrize("twice", [False, True])
def test_a_float_held_by_a_generator_and_its_caller_stays_one(twice: bool) -> None:
    machine = Machine(_generator_holder, 0.5)
    machine.step()
    assert _round_trip(machine, twice=twice) is True


# --- the documented limit: containers and cells -----------------------------------------------


async def _in_containers(x: float) -> tuple[bool, bool, bool]:
    y = x * 6.0
    items = [y, y]
    table = {"y": y}

    def read() -> float:
        return y

    await suspend("containers")
    return items[0] == items[1], items[0] == y == table["y"] == read(), y is read()


@pytest.mark.parametrize("twice", [False, True])
def test_floats_inside_containers_and_cells_come_back_equal(twice: bool) -> None:
    machine = Machine(_in_containers, 0.5)
    machine.step()
    equal_in_list, equal, cell_is_itself = _round_trip(machine, twice=twice)
    assert equal_in_list is True  # the C pickler writes a float in a container by value, each time
    assert equal is True
    assert cell_is_itself is True  # y is the cell's own contents: one name


async def _local_and_list(x: float) -> bool:
    y = x * 6.0
    items = [y]
    await suspend("mixed")
    return items[0] == y


def test_a_float_in_a_local_and_a_list_comes_back_equal() -> None:
    machine = Machine(_local_and_list, 0.5)
    machine.step()
    assert _round_trip(machine) is True
