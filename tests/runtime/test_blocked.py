"""Blocked, not failed: a refused checkpoint keeps the run at its last good one; resume, workers and
retry take it up again, and no tool call that completed is made twice."""

from __future__ import annotations

import asyncio

import pytest

from agentrt import CannotRetry, RunBlocked, Runtime
from agentrt.exceptions import CheckpointNotFound
from tests.runtime import agents as A
from tests.runtime import blocked_agents as B


@pytest.fixture
def store(every_store):
    """Every store: the status, the finding and the journal go through each one's own SQL."""
    return every_store


@pytest.fixture(autouse=True)
def _fresh():
    B.CALLS.clear()
    B.HELD["cm"] = B.locked_section
    B.FLAKY["failures"] = 0
    yield
    B.HELD["cm"] = B.locked_section


def run(coro):
    return asyncio.run(coro)


def bumps(run_id):
    return [(x, key) for tool, x, key in B.CALLS if tool == "bump" and key.startswith(run_id + ":")]


async def _blocked(store, **kw):
    async with Runtime(store, **kw) as rt:
        run_id = await rt.start(B.blocking, {"n": 1})
        with pytest.raises(RunBlocked) as info:
            await rt.wait(run_id, timeout=10)
    return run_id, info.value


def test_a_refused_checkpoint_blocks_the_run_with_the_finding(store):
    run_id, error = run(_blocked(store))
    rec = store.get_run(run_id)
    assert rec.status == "blocked" and not rec.finished and rec.error is None
    finding = rec.blocked
    assert set(finding) == {"code", "message", "function", "lineno", "variable"}
    assert finding["code"] in ("AR106", "AR112") and finding["code"] in finding["message"]
    assert (finding["function"], finding["lineno"]) == ("locked_section", B.LOCK_LINE)
    assert finding["variable"]
    assert error.finding == finding and "Runtime.resume" in str(error) and "Runtime.retry" in str(error)
    # the last good checkpoint is kept, with the result journaled at it
    assert rec.seq == 1 and [c.seq for c in store.list_checkpoints(run_id)] == [1]
    assert rec.pending["name"] == "bump" and list(store.get_results(run_id, 1)) == [0]
    assert rec.lease_owner is None and store.claim_runnable("w", 10, 10) == []
    kinds = [e.kind for e in store.list_events(run_id)]
    assert "failed" not in kinds


def test_resume_after_the_fix_finishes_without_repeating_a_tool_call(store):
    run_id, _ = run(_blocked(store))
    assert bumps(run_id) == [(1, f"{run_id}:1")]
    B.HELD["cm"] = B.Section  # the fix

    async def main():
        async with Runtime(store) as rt:
            await rt.resume(run_id)
            return await rt.wait(run_id, timeout=10)

    assert run(main()) == B.Out(3)
    assert bumps(run_id) == [(1, f"{run_id}:1"), (2, f"{run_id}:2")]  # bump at seq 1 ran once
    rec = store.get_run(run_id)
    assert rec.status == "completed" and rec.blocked is None


def test_resume_with_the_code_unchanged_blocks_again(store):
    run_id, _ = run(_blocked(store))

    async def main():
        async with Runtime(store, worker=False) as rt:
            await rt.resume(run_id)
            return await rt.settle(run_id, timeout=10)

    assert run(main()).status == "blocked"
    assert bumps(run_id) == [(1, f"{run_id}:1")]


def test_a_worker_tries_a_blocked_run_once_and_continues_it_after_a_fix(store):
    run_id, _ = run(_blocked(store, poll_seconds=0.05))
    tried: list[str] = []

    async def worker(seconds):
        async with Runtime(store, poll_seconds=0.05, on_trace=lambda e: tried.append(e.kind)) as rt:
            await asyncio.sleep(seconds)
            return rt.status(run_id)

    # a worker with the code that blocked it: one try (it blocks again), then never again
    assert run(worker(0.6)).status == "blocked"
    assert tried.count("unblocking") == 1 and tried.count("blocked") == 1
    assert bumps(run_id) == [(1, f"{run_id}:1")]

    B.HELD["cm"] = B.Section  # a deploy: a new worker with the fix

    async def fixed():
        async with Runtime(store, poll_seconds=0.05) as rt:
            for _ in range(200):  # Runtime.wait raises RunBlocked while it is blocked
                if rt.status(run_id).status != "blocked":
                    break
                await asyncio.sleep(0.05)
            return await rt.wait(run_id, timeout=10)

    assert run(fixed()) == B.Out(3)
    assert bumps(run_id) == [(1, f"{run_id}:1"), (2, f"{run_id}:2")]


def test_cancelling_a_blocked_run_ends_it(store):
    run_id, _ = run(_blocked(store))

    async def main():
        async with Runtime(store, worker=False) as rt:
            return await rt.cancel(run_id)

    assert run(main()) == [run_id]
    assert store.get_run(run_id).status == "cancelled"


def test_a_lock_across_an_await_blocks(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.holds_lock, {"n": 1})
            with pytest.raises(RunBlocked, match="lock"):
                await rt.wait(run_id, timeout=10)
            return run_id

    run_id = run(main())
    rec = store.get_run(run_id)
    assert rec.status == "blocked" and rec.blocked["code"] == "AR112" and rec.seq == 0


def _failed(store):
    B.FLAKY["failures"] = 1

    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(B.flaky_agent, {"n": 1})
            with pytest.raises(RuntimeError, match="flaky is down"):
                await rt.wait(run_id, timeout=10)
            return run_id

    return run(main())


@pytest.mark.parametrize("from_seq", [None, 2, 1])
def test_retry_of_a_failed_run_reuses_what_succeeded_and_makes_the_failed_call_again(store, from_seq):
    run_id = _failed(store)
    assert store.get_run(run_id).status == "failed"

    async def main():
        async with Runtime(store) as rt:
            rec = await rt.retry(run_id, from_seq=from_seq)
            assert rec.status in ("running", "completed") and rec.error is None
            out = await rt.wait(run_id, timeout=10)
            # the stream goes on past the earlier end: a subscriber reads to the last one
            kinds = [e.kind async for e in rt.subscribe(run_id)]
            assert kinds.count("failed") == 1 and kinds[-1] == "completed" and "retried" in kinds
            return out

    assert run(main()) == B.Out(2 + 20)
    calls = [(tool, key) for tool, _x, key in B.CALLS]
    assert calls.count(("bump", f"{run_id}:1")) == 1  # journaled at checkpoint 1: never made again
    flakies = [key for tool, key in calls if tool == "flaky"]
    assert flakies[0] == f"{run_id}:2" and len(flakies) == 2  # failed once, made again once
    rec = store.get_run(run_id)
    assert rec.status == "completed" and rec.error is None
    (event,) = [e for e in store.list_events(run_id) if e.kind == "retry"]
    assert event.seq == 3 and event.data["from_seq"] == (from_seq or 2)
    assert event.data["previous_status"] == "failed" and event.data["error"]["type"] == "RuntimeError"


def test_retry_of_a_blocked_run_after_the_fix(store):
    run_id, _ = run(_blocked(store))
    B.HELD["cm"] = B.Section

    async def main():
        async with Runtime(store) as rt:
            await rt.retry(run_id)
            return await rt.wait(run_id, timeout=10)

    assert run(main()) == B.Out(3)
    assert bumps(run_id) == [(1, f"{run_id}:1"), (2, f"{run_id}:3")]  # checkpoint 1 again, as 2


def test_retry_refusals_name_the_fix(store):
    run_id = _failed(store)

    async def main():
        async with Runtime(store, worker=False) as rt:
            with pytest.raises(CheckpointNotFound, match=r"no checkpoint 7 .*1\.\.2.*from_seq="):
                await rt.retry(run_id, from_seq=7)
            await rt.retry(run_id)
            await rt.wait(run_id, timeout=10)
            with pytest.raises(CannotRetry, match=r"is completed; only a failed or blocked.*agentrt fork"):
                await rt.retry(run_id)

    run(main())


def test_retry_of_a_run_that_failed_before_any_checkpoint_starts_it_again(store):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(A.holds_lock, {"n": 1})
            with pytest.raises(RunBlocked):
                await rt.wait(run_id, timeout=10)
            rec = await rt.retry(run_id)
            assert rec.seq == 0
            with pytest.raises(RunBlocked):  # the same code blocks it the same way again
                await rt.wait(run_id, timeout=10)
            return run_id

    run_id = run(main())
    kinds = [e.kind for e in store.list_events(run_id)]
    assert kinds.count("retry") == 1
