"""The stepper, pure: a run's state and what arrived in, a command out -- no store, no event loop.

A real machine steps the test agents (their code runs), and a signer stands in for the store's key.
"""

from __future__ import annotations

import asyncio

import pytest

from agentrt._runtime.state import START, LiveRun
from agentrt._runtime.stepper import (
    CANCEL_CALLS,
    WAIT,
    Block,
    Checkpoint,
    Complete,
    Dispatch,
    Fail,
    Park,
    Stepper,
)
from agentrt._sdk.requests import Ask, Gather, Sleep, ToolCall
from agentrt.exceptions import Cancelled, DeadlineExceeded, ModelCallBudgetExceeded
from agentrt.lowlevel import Machine
from tests.runtime import agents as A

KEY = b"k" * 32


def sign(machine: Machine, run_id: str, seq: int, chain: bytes) -> bytes:
    return machine.get_bound(KEY, ("checkpoint", run_id, seq))


def refuse(machine: Machine, run_id: str, seq: int, chain: bytes) -> bytes:
    raise ValueError("cannot cross an await")


def fresh(agent=A.summer, value=None, run_id: str = "r1") -> LiveRun:
    live = LiveRun(run_id, agent)
    value = value if value is not None else A.N(2)
    live.machine = Machine(agent.run, value, agent.make_task(run_id))
    live.payload = START
    return live


@pytest.fixture(autouse=True)
def no_loop():
    """The stepper runs no event loop (and needs none)."""
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()


def test_a_run_from_start_to_end():
    stepper = Stepper(sign=sign)
    live = fresh()
    command = stepper.activate(live, now=0.0)
    assert isinstance(command, Checkpoint) and live.seq == 1
    assert command.pending == {"kind": "tool", "name": "add", "kwargs": {"a": 0, "b": 0}}
    assert command.code_required and command.blob and live.checkpoint_digest
    assert stepper.activate(live, now=0.0) == Dispatch(direct=True)  # one tool call: the driver makes it
    live.results[0] = (True, 0)  # what the shell journaled
    assert isinstance(stepper.activate(live, now=0.0), Checkpoint) and live.seq == 2
    live.results[0] = (True, 1)
    command = stepper.activate(live, now=0.0)
    assert isinstance(command, Complete) and command.value == A.Total(1)
    assert command.output == {"total": 1, "notes": []} and live.machine is None


def test_not_answered_after_dispatch_waits_for_calls_in_flight_else_parks():
    stepper = Stepper(sign=sign)
    live = fresh()
    stepper.activate(live, now=0.0)
    live.inflight[0] = object()  # type: ignore[assignment]  # a call in flight (the shell's task)
    assert stepper.after_dispatch(live) is WAIT
    live.inflight.clear()
    live.payload = Gather((ToolCall("add", {}), Ask("ok?"), Sleep(until=50.0, seconds=1.0)), settled=False)
    live.results = {0: (True, 1)}
    assert stepper.activate(live, now=0.0) == Dispatch(direct=False)
    parked = stepper.after_dispatch(live)
    # shown as waiting on the slowest kind of thing (a reply), woken by whatever arrives
    assert parked == Park("reply", None, {"waiting_on": "reply", "seq": 1, "prompt": None})


def test_a_deadline_parks_no_later_than_it_and_cancels_once_due():
    stepper = Stepper(sign=sign)
    live = fresh()
    stepper.activate(live, now=0.0)
    live.payload = Ask("ok?")
    live.deadline = 30.0
    park = stepper.after_dispatch(live)
    assert isinstance(park, Park) and park.wake_at == 30.0 and park.data["prompt"] == "ok?"
    live.inflight[0] = object()  # type: ignore[assignment]
    assert stepper.activate(live, now=31.0) is CANCEL_CALLS  # calls in flight are stopped first
    live.inflight.clear()
    command = stepper.activate(live, now=31.0)  # thrown at the pending await: the agent does not catch it
    assert isinstance(command, Fail) and isinstance(command.error, DeadlineExceeded)
    assert live.cancel_thrown


def test_cancel_before_the_first_step_fails_without_running_the_agent():
    live = fresh()
    live.cancel_requested = True
    command = Stepper(sign=sign).activate(live, now=0.0)
    assert isinstance(command, Fail) and type(command.error) is Cancelled and live.machine is None


def test_a_spent_model_budget_fails_the_run_whatever_else_arrived():
    stepper = Stepper(sign=sign)
    live = fresh()
    stepper.activate(live, now=0.0)
    spent = ModelCallBudgetExceeded("r1", 1, "src")
    live.results[0] = (False, spent)
    command = stepper.activate(live, now=0.0)
    assert isinstance(command, Fail) and command.error is spent and live.machine is None


def test_a_refused_checkpoint_blocks_at_the_last_good_one():
    live = fresh()
    command = Stepper(sign=refuse).activate(live, now=0.0)
    assert isinstance(command, Block) and live.seq == 0 and "cannot cross an await" in str(command.finding)


def test_what_the_agent_reports_comes_back_with_the_command():
    stepper = Stepper(sign=sign)
    live = fresh(A.asker, A.N(3))
    command = stepper.activate(live, now=0.0)  # task.ui.notify and console.info, then ask
    assert isinstance(command, Checkpoint) and command.pending["kind"] == "ask"
    assert [(row[0], row[1], row[2]) for row in command.recorded.rows] == [(0, 0, "notify"), (0, 1, "log")]
    assert [e.kind for e in command.recorded.events] == ["notify", "log"]  # the shell reports them
    live.results[0] = (True, "no")  # the reply
    command = stepper.activate(live, now=0.0)
    assert isinstance(command, Complete) and command.value == A.Total(0, ["rejected: no"])
    assert [e.kind for e in command.recorded.events] == ["emit"]


def test_an_unknown_suspension_fails_with_ar102():
    live = fresh()
    stepper = Stepper(sign=sign)
    command = stepper.outcome(live, "not a request", stepper.activate(fresh(), 0.0).recorded)  # type: ignore[union-attr]
    assert isinstance(command, Fail) and "AR102" in str(command.error) and live.machine is None
