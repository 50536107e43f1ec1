"""capture()'s fast path (only the kept slots, read in one call) gives exactly what reading every slot gives.

``_capture._capture_picked`` reads the live locals, the cells and the value stack of a suspended
frame in one ``itemgetter`` call over the slots and gives up (returns None) on anything unusual,
leaving it to the path that reads every slot.  For every agent of the construct corpus, at every
suspension, on the original chain and on a chain restored from its checkpoint (whose dead locals
are NULL), every frame of the chain is captured both ways, and the two states must be the same:
the same fields, the very same value objects.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest

from agentrt._frames import _capture
from agentrt._frames._capture import KIND_OF_TYPE, capture
from agentrt.exceptions import UnsupportedSuspension
from agentrt.lowlevel import Done, Machine, suspend
from tests.corpus import CASES
from tests.corpus.harness import HarnessError, checkpoint_restore, run_machine

_AWAITED = ("cr_await", "gi_yieldfrom", "ag_await")


def _chain(obj: Any) -> list[Any]:
    frames = []
    while type(obj) in KIND_OF_TYPE and obj not in frames:
        frames.append(obj)
        obj = next((getattr(obj, name) for name in _AWAITED if hasattr(obj, name)), None)
        if type(obj).__name__ == "async_generator_asend":
            break
    return frames


def _same(fast: Any, slow: Any) -> bool:
    for a, b in zip(fast, slow, strict=True):
        if type(a) is tuple and type(b) is tuple:
            if len(a) != len(b) or any(x is not y and x != y for x, y in zip(a, b, strict=True)):
                return False
        elif a is not b and a != b:
            return False
    return True


def _check_chain(machine: Any, monkeypatch: pytest.MonkeyPatch, seen: list[int]) -> None:
    picked = _capture._capture_picked
    took: list[bool] = []

    def spy(*args: Any) -> Any:
        result = picked(*args)
        took.append(result is not None)
        return result

    for frame in _chain(machine._coro):
        took.clear()
        with monkeypatch.context() as patch:
            patch.setattr(_capture, "_capture_picked", spy)
            fast = capture(frame)
            patch.setattr(_capture, "_capture_picked", lambda *args: None)
            slow = capture(frame)
        assert _same(fast, slow), f"{fast}\n!=\n{slow}"
        seen[0] += 1
        seen[1] += any(took)


# As in tests/test_corpus.py: a chain dropped while suspended in a try/finally whose cleanup awaits
# reports "coroutine ignored GeneratorExit" when collected; that is an abandoned chain's fate.
@pytest.mark.filterwarnings(
    r"ignore:(?s)Exception ignored in\x3a <(coroutine|async_generator) object .*GeneratorExit"
    ":pytest.PytestUnraisableExceptionWarning"
)
def test_the_fast_path_captures_what_reading_every_slot_captures(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = [0, 0]  # frames compared, of which the fast path took

    def hook(m: Any, payload: Any, k: int) -> Any:
        if getattr(m, "_started", False) and not getattr(m, "_finished", True) and hasattr(m, "_coro"):
            _check_chain(m, monkeypatch, seen)
            restored = checkpoint_restore(m, payload, k)
            _check_chain(restored, monkeypatch, seen)
            return restored
        return m

    for case in CASES:
        try:
            run_machine(case, before_answer=hook)
        except HarnessError:
            continue  # a construct the engine refuses: nothing to capture
    gc.collect()  # chains kept alive by cycles die here, under the filter above
    print(f"{seen[0]} frames compared, {seen[1]} by the fast path")
    assert seen[0] > 300 and 0.5 * seen[0] < seen[1] < seen[0]  # most frames take the fast path, not all


def _yields_from_range(n: int) -> Any:
    yield from range(n)


def _yields_each(n: int) -> Any:
    yield from _loop_yield(n)


def _loop_yield(n: int) -> Any:
    for i in range(n):  # noqa: UP028 -- the checkpointable spelling of `yield from range(n)`
        yield i


async def _walks(numbers: Any) -> list[Any]:
    out = []
    for value in numbers:
        out.append((value, await suspend(value)))
    return out


def test_a_generator_waiting_in_a_plain_iterator_is_refused_at_checkpoint_time():
    # a restore would have to advance the range iterator to put the generator back at its yield,
    # so such a checkpoint could never be restored: get() says so, with the fix
    m = Machine(_walks, _yields_from_range(3))
    m.step()
    with pytest.raises(
        UnsupportedSuspension,
        match=r"AR113: .*_yields_from_range.*yield from. a range_iterator.*for x in range",
    ):
        m.get()
    m.discard()


def test_a_generator_delegating_to_a_generator_checkpoints_and_resumes():
    m = Machine(_walks, _yields_each(3))
    m.step()
    restored = Machine.set(m.get())
    m.discard()
    assert restored.step("a") == 1 and restored.step("b") == 2
    assert restored.step("c") == Done([(0, "a"), (1, "b"), (2, "c")])
