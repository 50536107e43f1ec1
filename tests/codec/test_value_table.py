"""Issue 24: what a signed and an unsigned blob do with everyday values, restored in a fresh process.

Every case of ``value_table`` is held by an agent across an await.  Signed (the default):
``Machine.get()`` either refuses it with its documented code, or the blob restores in a
fresh interpreter (``value_worker``) and the value comes back equal and still shared.
Unsigned: the values the pickle protocol newly carries are refused at ``get()``, and an
unsigned blob that names the pickle protocol anyway is refused at decode, naming the fix.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrt import keys
from agentrt._codec import loads
from agentrt._codec._format import pack, unpack
from agentrt.exceptions import CannotCrossAwait, CorruptBlob
from agentrt.lowlevel import Done, Machine
from tests.codec import value_table
from tests.codec.value_table import CASES, EXACT, Case

ROOT = Path(__file__).resolve().parents[2]
UNBOUND = ("checkpoint", None, None)
SECRETS = (b"secret-token", b"k-1", b"sk-never-in-a-blob", b"sk-ant-never-in-a-blob")

# These tests checkpoint and restore every value themselves (in a fresh interpreter, with the
# environment a reopened client needs) and expect the refusals the table documents: the round-trip
# pass would turn each expected refusal into a failure of its own.
pytestmark = pytest.mark.agentrt_no_roundtrip


def _ids(cases: tuple[Case, ...]) -> list[str]:
    return [case.name for case in cases]


@pytest.fixture(scope="module")
def fresh() -> Iterator[Callable[[dict[str, str]], dict[str, Any]]]:
    """One fresh interpreter for the module: it imports the table, never the values' blobs."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENAI_API_KEY="sk-from-env", ANTHROPIC_API_KEY="sk-ant-env")
    process = subprocess.Popen(
        [sys.executable, "-W", "error", "-m", "tests.codec.value_worker"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None

    def ask(request: dict[str, str]) -> dict[str, Any]:
        process.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]  # checked above
        process.stdin.flush()  # type: ignore[union-attr]
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line, "the fresh interpreter died"
        answer: dict[str, Any] = json.loads(line)
        return answer

    try:
        yield ask
    finally:
        process.stdin.close()
        process.stdout.close()
        process.wait(timeout=60)


def _held(case: Case) -> Machine:
    machine = Machine(value_table.hold, case.name)
    assert machine.step() == ("holding", case.name)
    return machine


def _finish_here(machine: Machine, *, same: bool = True) -> None:
    """Run the agent to its end in this process (it compares the value and closes it)."""
    done = machine.step(None)
    assert isinstance(done, Done) and (done.value is True or not same)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_signed_blob(case: Case, fresh: Callable[[dict[str, str]], dict[str, Any]], tmp_path: Path) -> None:
    machine = _held(case)
    try:
        if case.signed != EXACT:
            with pytest.raises(CannotCrossAwait) as info:
                machine.get()
            assert info.value.code == case.signed, str(info.value)
            assert info.value.variable in ("value", "alias"), str(info.value)
            _finish_here(machine, same=False)  # a lock, a socket...: not equal to a new one
            return
        blob = machine.get()
        for secret in SECRETS:
            assert secret not in blob
        (tmp_path / "blob").write_bytes(blob)
        assert fresh({"hold": str(tmp_path / "blob")}) == {"result": True}
    except BaseException:
        machine.discard()
        raise
    _finish_here(machine)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_unsigned_blob(case: Case) -> None:
    machine = _held(case)
    try:
        if case.unsigned != EXACT:
            with pytest.raises(CannotCrossAwait) as info:
                machine.get_bound(b"", UNBOUND)
            assert info.value.code == case.unsigned, str(info.value)
            assert info.value.variable in ("value", "alias"), str(info.value)
            _finish_here(machine, same=False)
            return
        blob = machine.get_bound(b"", UNBOUND)
        _finish_here(Machine.set(blob, allow_unsigned=True))
    except BaseException:
        machine.discard()
        raise
    _finish_here(machine)


def test_unsigned_refusal_names_the_fix() -> None:
    machine = _held(value_table.BY_NAME["dataclass"])
    with pytest.raises(CannotCrossAwait) as info:
        machine.get_bound(b"", UNBOUND)
    assert "@agentrt.serializable" in info.value.fix and "signed" in info.value.fix
    _finish_here(machine)


def test_get_names_the_reason_a_value_would_not_restore() -> None:
    machine = _held(value_table.BY_NAME["__setstate__ that fails"])
    with pytest.raises(CannotCrossAwait) as info:
        machine.get()
    assert "state from an older version" in info.value.fix
    assert info.value.path in ("value", "alias")
    _finish_here(machine, same=False)


def test_unsigned_blob_naming_the_pickle_protocol_is_refused_at_decode() -> None:
    """A signed blob stripped of its signature: nothing runs, and the error says to sign it."""
    machine = _held(value_table.BY_NAME["dataclass"])
    blob = machine.get()
    _finish_here(machine)
    ring = keys.project_keyring()
    assert ring is not None
    envelope = unpack(blob, ring.read)
    codes = [(c.module, c.qualname, c.digest) for c in envelope.codes]
    forged = pack(codes, envelope.flags & ~4, envelope.payload, b"", envelope.bind)
    with pytest.raises(CorruptBlob, match="only in a signed blob"):
        Machine.set(forged, allow_unsigned=True)
    with pytest.raises(CorruptBlob, match="only in a signed blob"):
        loads(forged)


async def _two_names_one_float(x: float) -> bool:
    from agentrt.lowlevel import suspend

    a = x * 3.0
    b = a
    await suspend("floats")
    return a is b


async def _callee(z: float) -> float:
    from agentrt.lowlevel import suspend

    await suspend("inner")
    return z


async def _caller(x: float) -> bool:
    y = x * 2.0
    back = await _callee(y)  # the callee's parameter is the caller's float
    return back is y


def test_a_float_passed_down_the_chain_stays_one_float() -> None:
    machine = Machine(_caller, 0.25)
    machine.step()
    restored = Machine.set(machine.get())
    machine.discard()
    done = restored.step(None)
    assert isinstance(done, Done) and done.value is True


@pytest.mark.parametrize(
    ("values", "positions"),
    [
        ([1.5], (1,)),
        ([1.5], (-1,)),
        ([(1.5,)], (0, 0)),
        (["x"], (0,)),
        ([(1,)], (0,)),
        ([(1.5,)], ()),
        ((1.5,), (0,)),
    ],
)
def test_malformed_float_positions_are_corrupt(values: Any, positions: Any) -> None:
    from agentrt._codec._reconstruct import _unwrap_floats

    with pytest.raises(CorruptBlob):
        _unwrap_floats(list(values) if type(values) is list else values, positions)


def test_two_names_bound_to_one_float_stay_one_float() -> None:
    machine = Machine(_two_names_one_float, 0.5)
    machine.step()
    restored = Machine.set(machine.get())
    machine.discard()
    done = restored.step(None)
    assert isinstance(done, Done) and done.value is True


# --- property: every reducer, combined and shared, through get -> set in a fresh process --------

PROPERTY_CASES = tuple(
    case
    for case in CASES
    if case.signed == EXACT
    and "Client" not in case.name
    and "OpenAI" not in case.name
    and "Anthropic" not in case.name
)


@st.composite
def held_values(draw: st.DrawFn) -> tuple[list[Any], list[Case], bool]:
    """A list of table values, some entries the same object as an earlier one."""
    drawn = draw(st.lists(st.sampled_from(PROPERTY_CASES), min_size=1, max_size=6))
    values: list[Any] = []
    cases: list[Case] = []  # the case of each entry (a shared entry: the case it repeats)
    for case in drawn:
        if values and draw(st.booleans()):
            index = draw(st.integers(0, len(values) - 1))
            values.append(values[index])
            cases.append(cases[index])
        else:
            values.append(case.make())
            cases.append(case)
    nested = draw(st.booleans())
    return ([values, {"again": values}] if nested else values), cases, nested


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=held_values())
def test_property_every_reducer_restores_in_a_fresh_process(
    drawn: tuple[list[Any], list[Case], bool],
    fresh: Callable[[dict[str, str]], dict[str, Any]],
    tmp_path: Path,
) -> None:
    held, cases, nested = drawn
    machine = Machine(value_table.hold_values, held)
    machine.step()
    path = tmp_path / "values"
    path.write_bytes(machine.get())
    machine.discard()
    answer = fresh({"values": str(path)})
    assert "back" in answer, answer.get("error")
    restored = Machine.set(Path(answer["back"]).read_bytes())
    done = restored.step(None)
    assert isinstance(done, Done)
    got = done.value
    if nested:
        assert got[1]["again"] is got[0]
        original, got = held[0], got[0]
    else:
        original = held
    assert len(got) == len(original)
    for i, (before, after) in enumerate(zip(original, got, strict=True)):
        assert cases[i].same(before, after), (cases[i].name, before, after)
        for j in range(i):
            assert (original[j] is before) == (got[j] is after), (i, j)
