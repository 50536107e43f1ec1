"""Drivers and comparison helpers shared by tests/test_corpus.py and the restore worker."""

from __future__ import annotations

import copy
import math
import reprlib
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tests.corpus import protocol
from tests.corpus.protocol import respond
from tests.corpus.registry import Case

MAX_SUSPENSIONS = 10_000  # a run suspending more often than this is looping


class HarnessError(AssertionError):
    """Something other than the agent went wrong (engine checkpoint/restore, protocol)."""


@dataclass
class Outcome:
    kind: str  # "return" | "raise"
    value: Any  # the returned value, or (type qualname, args)
    payloads: list = field(default_factory=list)  # every payload seen, in order

    def result(self) -> tuple[str, Any]:
        return (self.kind, self.value)


def exc_key(exc: BaseException) -> tuple[str, tuple]:
    return (type(exc).__qualname__, exc.args)


class _Finished:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class DirectRunner:
    """Runs an agent as a plain coroutine (coro.send / coro.throw): no agentrt Machine.

    This is the reference of mode (a): it depends on nothing in the engine.
    """

    def __init__(self, fn: Callable, args: tuple, kwargs: dict) -> None:
        self.coro = fn(*args, **kwargs)

    def _out(self, yielded: Any) -> Any:
        try:
            return protocol.request_payload(yielded)
        except ValueError:
            raise HarnessError(f"agent yielded a non-suspend object {yielded!r}") from None

    def step(self, value: Any = None) -> Any:
        try:
            return self._out(self.coro.send(value))
        except StopIteration as stop:
            return _Finished(stop.value)

    def throw(self, exc: BaseException) -> Any:
        try:
            return self._out(self.coro.throw(exc))
        except StopIteration as stop:
            return _Finished(stop.value)


def is_done(result: Any) -> bool:
    if isinstance(result, _Finished):
        return True
    return protocol.Done is not None and isinstance(result, protocol.Done)


def fresh_args(case: Case) -> tuple[tuple, dict]:
    """Agents may mutate their arguments; every run gets its own copy."""
    return copy.deepcopy(case.args), copy.deepcopy(case.kwargs)


def drive(
    runner: Any,
    result: Any,
    payloads: list,
    before_answer: Callable[[Any, Any, int], Any] | None = None,
    responder: Callable[[Any], tuple[str, Any]] = respond,
) -> Outcome:
    """Answer every suspension with ``responder`` (the corpus's ``respond`` unless another suite,
    such as tests/realcode, brings its own) until the agent returns or raises.

    ``result`` is what the last step returned (a payload or a done marker).
    ``before_answer(runner, payload, k)`` may replace the runner (mode (b) restores
    there); ``k`` is the 1-based index of the suspension.
    """
    while not is_done(result):
        payloads.append(result)
        if len(payloads) > MAX_SUSPENSIONS:
            raise HarnessError(f"more than {MAX_SUSPENSIONS} suspensions: the run is looping")
        if before_answer is not None:
            runner = before_answer(runner, result, len(payloads))
        kind, value = responder(result)
        try:
            result = runner.step(value) if kind == "value" else runner.throw(value)
        except Exception as exc:
            return Outcome("raise", exc_key(exc), payloads)
    return Outcome("return", result.value, payloads)


def start(runner: Any) -> Outcome | Any:
    try:
        return runner.step()
    except Exception as exc:
        return Outcome("raise", exc_key(exc), [])


def run_direct(case: Case, responder: Callable[[Any], tuple[str, Any]] = respond) -> Outcome:
    """Mode (a): uninterrupted reference run."""
    args, kwargs = fresh_args(case)
    runner = DirectRunner(case.fn, args, kwargs)
    first = start(runner)
    if isinstance(first, Outcome):
        return first
    return drive(runner, first, [], responder=responder)


def run_machine(
    case: Case, before_answer=None, responder: Callable[[Any], tuple[str, Any]] = respond
) -> Outcome:
    args, kwargs = fresh_args(case)
    m = protocol.Machine(case.fn, *args, **kwargs)
    first = start(m)
    if isinstance(first, Outcome):
        return first
    return drive(m, first, [], before_answer, responder)


def checkpoint_restore(m: Any, payload: Any, k: int) -> Any:
    """``Machine.set(m.get())`` with engine failures reported as HarnessError."""
    Machine = protocol.Machine
    try:
        blob = m.get()
    except Exception as exc:
        raise HarnessError(
            f"suspension {k} (payload {show(payload)}): Machine.get() raised {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(blob, bytes):
        raise HarnessError(f"suspension {k}: Machine.get() returned {type(blob).__name__}, not bytes")
    try:
        restored = Machine.set(blob)
    except Exception as exc:
        raise HarnessError(
            f"suspension {k} (payload {show(payload)}): Machine.set(blob of {len(blob)} bytes) raised "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not deep_equal(restored.pending, payload):
        raise HarnessError(
            f"suspension {k}: restored.pending {show(restored.pending)} != original payload {show(payload)}"
        )
    return restored


def run_checkpoint_every(case: Case, responder: Callable[[Any], tuple[str, Any]] = respond) -> Outcome:
    """Mode (b): ``m = Machine.set(m.get())`` at every suspension before answering."""
    return run_machine(case, before_answer=checkpoint_restore, responder=responder)


def finish_restored(m: Any, responder: Callable[[Any], tuple[str, Any]] = respond) -> Outcome:
    """Drive a restored machine (waiting on ``m.pending``) to the end."""
    return drive(m, m.pending, [], responder=responder)


# ---------------------------------------------------------------- comparison


def deep_equal(a: Any, b: Any, _memo: set | None = None) -> bool:
    """Structural equality that treats NaN as equal to NaN, tells -0.0 from 0.0,
    compares Decimals digit for digit, exceptions by (type, args), tolerates cycles,
    checks dict order, and falls back to ``==`` (objects with ``__eq__``)."""
    if _memo is None:
        _memo = set()
    if type(a) is not type(b):
        return False
    t = type(a)
    if t is float:
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if t is complex:
        return deep_equal(a.real, b.real) and deep_equal(a.imag, b.imag)
    if t is Decimal:
        return str(a) == str(b)
    if t in (int, bool, str, bytes, type(None)):
        return a == b
    if t is range:
        return (a.start, a.stop, a.step) == (b.start, b.stop, b.step)
    key = (id(a), id(b))
    if key in _memo:
        return True
    if isinstance(a, (list, tuple)):
        _memo.add(key)
        return len(a) == len(b) and all(deep_equal(x, y, _memo) for x, y in zip(a, b))
    if isinstance(a, dict):
        _memo.add(key)
        return len(a) == len(b) and all(
            deep_equal(ka, kb, _memo) and deep_equal(va, vb, _memo)
            for (ka, va), (kb, vb) in zip(a.items(), b.items())
        )
    if isinstance(a, BaseException):
        _memo.add(key)
        return deep_equal(a.args, b.args, _memo)
    try:
        return bool(a == b)
    except Exception:
        return False


_repr = reprlib.Repr()
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 12
_repr.maxstring = _repr.maxother = 200
_repr.maxlevel = 5


def show(x: Any) -> str:
    try:
        return _repr.repr(x)
    except Exception as exc:
        return f"<unrepresentable {type(x).__name__}: {exc!r}>"


def compare_outcomes(ref: Outcome, got: Outcome, payloads_from: int = 0) -> list[str]:
    """Differences between the reference and another run (empty list: same).

    ``payloads_from`` skips the reference's first payloads (a run restored at
    suspension k only sees payloads k.. after its pending one).
    """
    problems = []
    if not deep_equal(ref.result(), got.result()):
        problems.append(
            f"outcome differs:\n  reference: {show(ref.result())}\n  got:       {show(got.result())}"
        )
    want = ref.payloads[payloads_from:]
    if not deep_equal(want, got.payloads):
        first = next(
            (i for i, (x, y) in enumerate(zip(want, got.payloads)) if not deep_equal(x, y)),
            min(len(want), len(got.payloads)),
        )
        problems.append(
            f"payload sequence differs at suspension {payloads_from + first + 1}: "
            f"reference {show(want[first : first + 3])} vs got {show(got.payloads[first : first + 3])} "
            f"({len(want)} vs {len(got.payloads)} payloads)"
        )
    return problems
