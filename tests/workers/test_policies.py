"""Per-tool run policy declared on ``@tool``: timeout per attempt, retries with backoff, retryable types."""

from __future__ import annotations

import asyncio

import pytest

from agentrt import Runtime, tool
from agentrt.stores import MemoryStore
from agentrt.testing import capture_trace
from tests.workers import agents


def run(input):
    async def main():
        async with Runtime(MemoryStore()) as rt:
            run_id = await rt.start(agents.policies, input)
            return run_id, (await rt.wait(run_id, timeout=60)).value

    agents.ATTEMPTS.clear()
    with capture_trace() as events:
        run_id, value = asyncio.run(main())
    return run_id, value, [e for e in events if e.kind == "tool_retry"]


def test_a_retryable_failure_is_tried_again_and_only_the_outcome_is_journaled():
    run_id, value, retries = run({"fail_times": 2})
    assert value == "ok after 3"
    assert {f"{run_id}:1": 3} == agents.ATTEMPTS
    assert [e.data["attempt"] for e in retries] == [1, 2]
    assert retries[1].data["delay"] == pytest.approx(0.02)


def test_attempts_run_out():
    _run_id, value, retries = run({"fail_times": 5})
    assert value == "ConnectionError: attempt 3" and len(retries) == 2


def test_an_exception_not_in_retry_on_is_not_retried():
    _run_id, value, retries = run({"fail_times": 1, "error": "value"})
    assert value == "ValueError: attempt 1" and retries == []


def test_a_timeout_per_attempt():
    run_id, value, retries = run({"fail_times": 0, "stuck": True})
    assert value == "TimeoutError: tool 'stuck' took longer than its timeout of 0.2 s"
    assert {f"{run_id}:1": 2} == agents.ATTEMPTS and len(retries) == 1


def test_a_bad_policy_is_refused_where_it_is_declared():
    with pytest.raises(ValueError, match="attempts"):
        tool(attempts=0)
    with pytest.raises(ValueError, match="timeout"):
        tool(timeout=-1)
    with pytest.raises(TypeError, match="retry_on"):
        tool(retry_on="ConnectionError")  # type: ignore[arg-type]
