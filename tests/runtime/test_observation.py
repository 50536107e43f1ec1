"""One observer registry, one event type: capture_trace, failing observers, the old names."""

from __future__ import annotations

import asyncio
import logging

import pytest

from agentrt import MemoryStore, Runtime
from agentrt._runtime.observation import CAPTURES, Observation
from agentrt.observe import TraceEvent
from agentrt.testing import capture_trace
from tests.runtime import agents as A


def test_capture_trace_collects_what_runtimes_report_inside_the_block_only():
    async def main():
        async with Runtime(MemoryStore()) as rt:
            run_id = await rt.start(A.summer, {"n": 3})
            await rt.wait(run_id, timeout=60)
            return run_id

    with capture_trace() as events:
        with capture_trace() as inner:  # nested captures each get everything inside them
            run_id = asyncio.run(main())
        asyncio.run(main())
    with capture_trace() as after:
        pass
    assert after == [] and CAPTURES == []
    assert inner == [e for e in events if e.run_id == run_id]
    mine = [e for e in events if e.run_id == run_id]
    assert mine and all(isinstance(e, TraceEvent) for e in mine)
    assert mine[0].kind == "started" and mine[-1].kind == "completed"
    assert [e.seq for e in mine] == list(range(len(mine)))


def test_a_failing_observer_is_logged_once_and_switched_off(caplog):
    seen: list[str] = []

    def flaky(event: TraceEvent) -> None:
        seen.append(event.kind)
        raise ValueError("observer bug")

    good: list[str] = []
    observation = Observation([flaky, lambda e: good.append(e.kind)])
    with caplog.at_level(logging.WARNING, logger="agentrt.observe"):
        for kind in ("started", "checkpoint", "completed"):
            observation.emit(kind, "r1")
    assert seen == ["started"]  # called once, then off
    assert good == ["started", "checkpoint", "completed"]  # the others keep watching
    (record,) = caplog.records
    assert "on_trace observer" in record.getMessage() and "switched off" in record.getMessage()


def test_the_old_names_are_gone():
    """``observers=``, ``add_tracer`` and ``RuntimeEvent`` were removed before the first release."""
    import agentrt._runtime as runtime_package
    import agentrt._runtime.runtime as runtime_module

    with pytest.raises(TypeError, match="observers"):
        Runtime(MemoryStore(), observers=[print])  # type: ignore[call-arg]
    assert not hasattr(Runtime, "add_tracer")
    for module in (runtime_package, runtime_module):
        with pytest.raises(AttributeError):
            module.RuntimeEvent
    events: list[TraceEvent] = []
    rt = Runtime(MemoryStore())
    rt.add_observer(events.append)  # the one name
    rt.observation.emit("completed", "r1")
    assert [(e.kind, e.type) for e in events] == [("completed", "end")]
    asyncio.run(rt.close())
