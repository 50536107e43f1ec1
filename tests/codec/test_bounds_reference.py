"""The decode-bounds walk and the opcode scan, rewritten for speed, refuse exactly what they did.

tests/codec/bounds_reference.py is the walk as it was; agentrt/_codec/_bounds.py the rewrite
(list-based nodes, commonest opcodes first, measuring in place).  Both see the same payloads:
genuine ones (plain values, frame chains), the hostile ones of the bounds and collision tests,
and seeded byte mutations of every one of them that still pass the opcode allowlist (the walk
only ever sees allowlisted payloads).  They must agree on every payload: both accept it, or
both refuse it with the same message.  One difference is by design: the earlier walk decoded
short strings and refused invalid UTF-8 itself; the rewrite leaves that to the unpickler (a
string is not a bound), so a payload the earlier walk refuses for that reason is skipped.

The opcode scan (agentrt/_codec/_scan.py) now matches runs of argument-less opcodes in one go;
:func:`_single_alternation_run` below is its earlier pattern, one alternation repeated per
opcode, and both must accept exactly the same payloads, mutated ones included.
"""

from __future__ import annotations

import random
import re

import pytest

from agentrt._codec import _bounds, _format, _scan, dumps
from agentrt._codec._scan import (
    _CODES,
    _FIXED_ARGUMENT_BYTES,
    _LENGTH1,
    _MAX_SHORT_LENGTH,
    _NO_ARGUMENT,
    _charset,
)
from agentrt.exceptions import CorruptBlob
from agentrt.lowlevel import Machine
from tests.codec import bounds_reference as reference
from tests.codec.test_codec_bounds import BENIGN, HOSTILE
from tests.codec.test_codec_values import SIMPLE_VALUES
from tests.security import agents
from tests.security.test_collisions import _payloads

MUTANTS_PER_PAYLOAD = 150


def _verdict(check: object, payload: bytes, blob_size: int) -> str | None:
    try:
        check(payload, blob_size)  # type: ignore[operator]  # one of the two check_bounds
    except CorruptBlob as exc:
        return str(exc)
    return None


def _genuine() -> list[bytes]:
    payloads = [_format.unpack(dumps(value, key=b"")).payload for value in SIMPLE_VALUES]
    shared: list[object] = [1, 2]
    payloads.append(_format.unpack(dumps([shared, shared, (shared,), {"k": shared}], key=b"")).payload)
    cyclic: list[object] = []
    cyclic.append(cyclic)
    payloads.append(_format.unpack(dumps(cyclic, key=b"")).payload)
    for fn, args, steps in (
        (agents.loop, ([1, 2, 3],), 2),
        (agents.half_built_call, ("m",), 1),
        (agents.outer, ("/nonexistent/dir/m",), 1),
        (agents.mixed, ("m",), 2),
    ):
        m = Machine(fn, *args)
        m.step()
        for _ in range(steps - 1):
            m.step(1)
        payloads.append(_format.unpack(m.get_bound(b"", ("checkpoint", None, None))).payload)
    return payloads


def _crafted() -> list[bytes]:
    small = {name: body for name, body in {**HOSTILE, **BENIGN}.items()}
    out = [body for body in small.values() if len(body) < 20_000]
    out += [b"\x80\x05" + body + b"." for body in _payloads(40).values()]
    return out


def _allowlisted(payload: bytes) -> bool:
    try:
        _scan.check_payload(payload)
    except CorruptBlob:
        return False
    return True


def _mutants(payload: bytes, rng: random.Random) -> list[bytes]:
    out = []
    for _ in range(MUTANTS_PER_PAYLOAD):
        raw = bytearray(payload)
        what = rng.randrange(3)
        i = rng.randrange(2, len(raw) - 1) if len(raw) > 3 else 2
        if what == 0:
            raw[i] = rng.randrange(256)
        elif what == 1:
            raw[i:i] = raw[i : i + rng.randrange(1, 8)]  # a few opcodes repeated: more sharing, nesting
        else:
            del raw[i : i + rng.randrange(1, 4)]
        if _allowlisted(bytes(raw)):
            out.append(bytes(raw))
    return out


def _cases() -> list[bytes]:
    rng = random.Random(1729)
    base = [p for p in _genuine() + _crafted() if _allowlisted(p)]
    cases = list(base)
    for payload in base:
        cases += _mutants(payload, rng)
    return cases


def test_the_rewritten_walk_refuses_exactly_what_the_earlier_one_did() -> None:
    cases = _cases()
    refused = compared = 0
    for payload in cases:
        size = len(payload) + 100  # the blob around it: header and digest
        old = _verdict(reference.check_bounds, payload, size)
        new = _verdict(_bounds.check_bounds, payload, size)
        if old is not None and "not UTF-8" in old:
            continue  # the one designed difference (see the module docstring): no verdict to compare
        assert new == old, f"payload {payload[:60]!r}...: the earlier walk said {old!r}, the rewrite {new!r}"
        compared += 1
        refused += old is not None
    print(f"{compared} payloads compared, {refused} refused")
    assert compared > 2000 and 100 < refused < compared - 100  # both verdicts well represented


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_hostile_payloads_are_refused_alike(name: str) -> None:
    payload = HOSTILE[name]
    size = len(payload) + 100
    assert _verdict(_bounds.check_bounds, payload, size) == _verdict(reference.check_bounds, payload, size)
    assert _verdict(_bounds.check_bounds, payload, size) is not None


def _single_alternation_run() -> re.Pattern[bytes]:
    """The scan's pattern before the rewrite: one alternation over every opcode, repeated."""
    lengths = (
        b"(?:" + b"|".join(re.escape(bytes([n])) + b".{%d}" % n for n in range(_MAX_SHORT_LENGTH + 1)) + b")"
    )
    alternatives = [
        re.escape(_CODES["BINGET"]) + b".",
        re.escape(_CODES["MEMOIZE"]),
        re.escape(_CODES["SHORT_BINUNICODE"]) + lengths,
        _charset(_NO_ARGUMENT),
    ]
    by_size: dict[int, list[str]] = {}
    for name, size in _FIXED_ARGUMENT_BYTES.items():
        by_size.setdefault(size, []).append(name)
    alternatives += [_charset(tuple(names)) + b".{%d}" % size for size, names in sorted(by_size.items())]
    alternatives.append(_charset(_LENGTH1) + lengths)
    return re.compile(b"(?s:(?:" + b"|".join(alternatives) + b")*+)")


def _scan_verdict(payload: bytes) -> str | None:
    try:
        _scan.check_payload(payload)
    except CorruptBlob as exc:
        return str(exc)
    return None


def test_the_run_pattern_of_the_scan_accepts_exactly_what_the_single_alternation_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(4711)
    base = _genuine() + _crafted()
    cases = list(base)
    for payload in base:
        for _ in range(MUTANTS_PER_PAYLOAD):
            raw = bytearray(payload)
            i = rng.randrange(2, len(raw)) if len(raw) > 2 else 0
            raw[i : i + rng.randrange(0, 3)] = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 3)))
            cases.append(bytes(raw))
    new = [_scan_verdict(p) for p in cases]
    old_run = _single_alternation_run()
    monkeypatch.setattr(_scan, "_build_run", lambda: old_run)
    old = [_scan_verdict(p) for p in cases]
    assert new == old
    assert 100 < sum(v is None for v in new) < len(cases) - 100  # both verdicts well represented
