"""Engine refusals: an engine bug is InternalInconsistency (AR199), never a 'modified blob'."""

import collections

import attrs
import pytest

import agentrt
from agentrt._frames import _capture, _resume
from agentrt.exceptions import AgentrtError, CorruptBlob, InternalInconsistency
from agentrt.lowlevel import Machine, suspend


async def _agent():
    x = await suspend("a")
    return x + await suspend("b")


def _suspended() -> Machine:
    m = Machine(_agent)
    assert m.step() == "a"
    return m


def test_internal_inconsistency_is_its_own_error_class():
    assert issubclass(InternalInconsistency, AgentrtError)
    assert not issubclass(InternalInconsistency, CorruptBlob)
    assert agentrt.InternalInconsistency is InternalInconsistency


def test_a_capture_that_contradicts_the_analysis_is_reported_as_an_engine_bug():
    m = _suspended()
    view = _capture.view_of(_agent.__code__)
    # the view now "sees" one stack entry fewer than the analysis expects
    _capture._VIEWS.put(_agent.__code__, attrs.evolve(view, nslots=view.nslots + 1))
    try:
        with pytest.raises(InternalInconsistency) as info:
            m.get()
    finally:
        _capture._VIEWS.put(_agent.__code__, view)
    message = str(info.value)
    assert message.startswith("AR199: ")
    assert "_agent" in message and f"{__file__}:{_agent.__code__.co_firstlineno + 1}" in message
    assert "bug in agentrt" in message and "truncated or modified" not in message
    assert "noticed by capture" in message
    m.discard()


def test_a_resume_code_failure_on_restore_is_not_blamed_on_the_blob(monkeypatch):
    m = _suspended()
    blob = m.get()
    m.discard()

    def broken(shape):
        raise TypeError("operation STORE_FAST argument must be a str, got FreeVar")

    monkeypatch.setattr(_resume, "_CACHE", collections.OrderedDict())
    monkeypatch.setattr(_resume, "_from_disk", lambda shape, extra: None)
    monkeypatch.setattr(_resume, "_synthesize", broken)
    import agentrt._frames._plans as frames

    monkeypatch.setattr(frames, "PLANS", collections.OrderedDict())
    with pytest.raises(InternalInconsistency) as info:
        Machine.set(blob)
    message = str(info.value)
    assert "AR199" in message and "truncated or modified" not in message
    assert "_agent" in message and "STORE_FAST" in message


@pytest.mark.agentrt_no_roundtrip  # the agent holds its own Machine in a cell: nothing to round-trip
def test_get_from_inside_the_agent_carries_an_ar_code():
    box = {}

    async def agent():
        await suspend("a")
        box["m"].get()

    m = box["m"] = Machine(agent)
    m.step()
    with pytest.raises(AgentrtError, match=r"^AR113: .*is running"):
        m.step(None)
