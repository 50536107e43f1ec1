"""Unit tests of the pieces of ``agentrt upgrade`` that need no store: site descriptions, frame
judgement, the ``@agentrt.migrate`` registry."""

from __future__ import annotations

import pytest

import agentrt
from agentrt._codec import code_digest
from agentrt._frames._liveness import analyze
from agentrt._frames._migrate import FrameRecord, Verdict, plan_move
from agentrt._frames._sites import INFO_VERSION, RecordInfo, normalized, record_info, site_refs
from agentrt._upgrade._registry import find_migration


async def _step(value):
    return value


async def two_awaits(items):
    total = 0
    for item in items:
        total += await _step(item)
    with open(__file__) as f:
        first = await _step(f.readline())
    return total, first


def _offsets(code):
    return sorted(analyze(code).sites)


def test_sites_are_described_by_position_source_and_stack():
    code = two_awaits.__code__
    refs = [site_refs(code)[offset] for offset in _offsets(code)]
    assert [r.ordinal for r in refs] == [0, 1] and all(r.count == 2 and r.kind == "await" for r in refs)
    assert refs[0].source == "await _step(item)" and refs[1].source == "await _step(f.readline())"
    assert refs[0].stack == ("for_iterator", "operand", "awaited")  # total += await ... inside the for
    assert refs[1].stack == ("with_exit", "awaited")
    assert refs[0].label().startswith("await #1 (line ")


def test_source_comparison_ignores_formatting():
    assert normalized("await  f(\n  1,\n)") == normalized("await f(1)")
    assert normalized("await f(1)") != normalized("await f(2)")


def test_record_info_round_trips_through_its_parser():
    code = two_awaits.__code__
    offset = _offsets(code)[1]
    info = RecordInfo.from_tuple(record_info(code, offset))
    assert info is not None and info.site is not None and info.site.ordinal == 1
    assert info.varnames == code.co_varnames
    assert "total" in {info.varnames[i] for i in info.live}
    assert RecordInfo.from_tuple((INFO_VERSION + 1, *record_info(code, offset)[1:])) is None
    assert RecordInfo.from_tuple(("garbage",)) is None


def test_a_record_without_site_info_is_blocked_not_guessed():
    code = two_awaits.__code__
    offset = _offsets(code)[0]
    record = FrameRecord.parse((0, 0, offset, (0, 1), (False, False, False), False, ()))
    assert record is not None and record.info is None
    move = plan_move(record, "0" * 32, code, code_digest(code), has_migration=False)
    assert move.verdict is Verdict.BLOCKED and "before agentrt recorded await sites" in move.reason


def test_the_same_code_is_unchanged():
    code = two_awaits.__code__
    offset = _offsets(code)[0]
    record = FrameRecord.parse((0, 0, offset, (0,), (False,) * 3, False, (), record_info(code, offset)))
    assert record is not None
    move = plan_move(record, code_digest(code), code, code_digest(code), has_migration=False)
    assert move.verdict is Verdict.UNCHANGED


def test_migrate_validates_its_arguments_and_stays_callable():
    with pytest.raises(ValueError, match="at least 8 hex digits"):
        agentrt.migrate(two_awaits, from_digest="abc")
    with pytest.raises(TypeError, match="new version of the function"):
        agentrt.migrate(42, from_digest="0123456789abcdef")

    @agentrt.migrate(two_awaits, from_digest="0123456789ABCDEF", site=2)
    def fill(old_locals):
        return {"total": old_locals.get("sum", 0)}

    assert fill({"sum": 3}) == {"total": 3}  # tested like any code
    refs = site_refs(two_awaits.__code__)
    second = refs[_offsets(two_awaits.__code__)[1]]
    module, qualname = two_awaits.__module__, two_awaits.__code__.co_qualname
    found = find_migration(module, qualname, "0123456789abcdef" + "0" * 16, second)
    assert found is not None and found.fn is fill
    first = refs[_offsets(two_awaits.__code__)[0]]
    assert find_migration(module, qualname, "0123456789abcdef" + "0" * 16, first) is None
    assert find_migration(module, qualname, "f" * 32, second) is None
    assert not found.restart
    with pytest.raises(TypeError, match=r"restart=...\) takes True or False"):
        agentrt.migrate(two_awaits, from_digest="0123456789abcdef", restart="yes")

    @agentrt.migrate(two_awaits, from_digest="fedcba9876543210", site=2, restart=True)
    def back(old_locals):
        return {}

    again = find_migration(module, qualname, "fedcba9876543210" + "0" * 16, second)
    assert again is not None and again.fn is back and again.restart


def test_a_source_line_that_does_not_belong_to_the_code_is_not_recorded():
    from agentrt._frames._sites import _checked

    code = two_awaits.__code__
    assert _checked(code, "await _step(item)") == "await _step(item)"
    assert _checked(code, "await other_function(x)") == ""  # the file changed under the process
