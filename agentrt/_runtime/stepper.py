"""Stepping a run: given its state and what arrived, decide what happens next -- pure.

The driver (:mod:`agentrt._runtime.driver`) is the I/O shell around this module, as temporalio's
worker is around ``_WorkflowInstance.activate()``: it asks :meth:`Stepper.activate` what to do
with a run, does it (store writes, dispatch, waiting), and asks again.  Nothing here touches the
store, the event loop or an observer; the machine is stepped here (the agent's own code runs),
and the outcome comes back as one :data:`Command`:

- :class:`Checkpoint` -- the run suspended on a request: save this signed blob (then dispatch);
- :class:`Complete` / :class:`Fail` -- the run ended: record its output or its error;
- :class:`Block` -- the run cannot go on here (a checkpoint refused): keep it at its last one;
- :class:`CancelCalls` -- a cancel is due while calls are in flight: stop them first;
- :class:`Dispatch` -- the pending request is not answered: start what it needs;
- :class:`Wait` -- calls are in flight: wait for one (or for a wake-up from outside);
- :class:`Park` -- nothing in flight and not answered: the run leaves memory until woken.

Each thing that can arrive is applied by one ``_apply_<kind>`` method (start, answer, cancel,
park); :meth:`Stepper.outcome` turns what the machine returned into a command, with an
``else: raise`` for a shape it does not know.  ``tests/runtime/test_stepper.py`` drives it with
plain values and a real machine, without a store or an event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any  # Any: the agent's values, results and exceptions

import attrs

from agentrt._codec import code_requirement
from agentrt._runtime.blocking import refusal_finding
from agentrt._runtime.budget import BudgetInterrupt, Watchdog, innermost_agent_frame
from agentrt._runtime.pending import REQUESTS, parked_on, summarize, verdict
from agentrt._runtime.state import START, LiveRun
from agentrt._sdk.requests import Ask, ToolCall
from agentrt._sdk.schema import jsonable_or_repr, to_jsonable
from agentrt._sdk.task import Event, StepRecorder, recording
from agentrt.exceptions import (
    Cancelled,
    DeadlineExceeded,
    ModelCallBudgetExceeded,
    SchemaError,
    StepBudgetExceeded,
)
from agentrt.lowlevel import Done, Machine
from agentrt.stores import blob_digest
from agentrt.stores.base import EventRow

__all__ = [
    "CANCEL_CALLS",
    "WAIT",
    "Block",
    "CancelCalls",
    "Checkpoint",
    "Command",
    "Complete",
    "Dispatch",
    "Fail",
    "Park",
    "Signer",
    "Stepper",
    "Wait",
]

#: Signs the machine's checkpoint: ``(machine, run_id, seq, chain digest) -> blob``.
Signer = Callable[[Machine, str, int, bytes], bytes]


@attrs.frozen
class Recorded:
    """What the agent reported during a step (``task.emit``, logs): rows to store, events to observe."""

    rows: list[EventRow]
    events: list[Event]


NOTHING = Recorded([], [])


@attrs.frozen
class Checkpoint:
    """Save ``blob`` as the run's checkpoint ``live.seq`` (the state is already advanced to it)."""

    blob: bytes
    pending: dict[str, Any]
    code_required: str | None
    recorded: Recorded


@attrs.frozen
class Complete:
    """The run returned ``value`` (``output``: its JSON form)."""

    value: Any
    output: Any
    recorded: Recorded


@attrs.frozen
class Fail:
    """The run ended with ``error`` (``Cancelled``: status ``cancelled``, else ``failed``)."""

    error: BaseException
    recorded: Recorded


@attrs.frozen
class Block:
    """The run cannot go on here: blocked at its last good checkpoint with ``finding``."""

    finding: dict[str, Any]
    recorded: Recorded


@attrs.frozen
class CancelCalls:
    """Cancel the calls in flight (a cancel or the deadline is due), then activate again."""


@attrs.frozen
class Dispatch:
    """Start what the pending request needs; ``direct``: it is one tool call the driver makes itself."""

    direct: bool


@attrs.frozen
class Wait:
    """Wait until a call in flight finishes or something arrives from outside."""


@attrs.frozen
class Park:
    """Store the run as waiting on ``waiting_on`` (woken at ``wake_at``) and drop it from memory."""

    waiting_on: str
    wake_at: float | None
    data: dict[str, Any]


CANCEL_CALLS = CancelCalls()
WAIT = Wait()

Command = Checkpoint | Complete | Fail | Block | CancelCalls | Dispatch | Wait | Park


class Stepper:
    """Decides, for one run at a time, what the shell does next (see the module docstring)."""

    def __init__(
        self, *, sign: Signer, watchdog: Watchdog | None = None, step_budget_seconds: float | None = None
    ) -> None:
        self.sign = sign
        self.watchdog = watchdog
        self.step_budget_seconds = step_budget_seconds

    # ------------------------------------------------------------------ the two questions

    def activate(self, live: LiveRun, now: float) -> Command:
        """What to do with ``live`` now (``now``: ``time.time()``)."""
        if live.deadline is not None and not live.cancel_thrown and now >= live.deadline:
            live.cancel_requested = True
        if live.cancel_requested and not live.cancel_thrown:
            if live.inflight:
                return CANCEL_CALLS
            return self._apply_cancel(live, now)
        if live.payload is START:
            return self._apply_start(live)
        ready = verdict(live.payload, live.results)
        if ready is not None:
            return self._apply_answer(live, ready.ok, ready.value)
        return Dispatch(direct=self.calls_directly(live))

    def after_dispatch(self, live: LiveRun) -> Command:
        """What to do once the pending request's work is started: go on if it is answered already
        (calls that did not wait), else wait for the calls in flight, else park."""
        ready = verdict(live.payload, live.results)
        if ready is not None:
            return self._apply_answer(live, ready.ok, ready.value)
        if live.inflight:
            return WAIT
        return self._apply_park(live)

    @staticmethod
    def calls_directly(live: LiveRun) -> bool:
        """Whether the run waits on one tool call that its driver may make itself: no gather, no
        deadline to throw while it runs, not answered or started yet."""
        return (
            type(live.payload) is ToolCall
            and live.deadline is None
            and 0 not in live.results
            and 0 not in live.inflight
        )

    # ------------------------------------------------------------------ what arrived

    def _apply_start(self, live: LiveRun) -> Command:
        """A run never stepped: run the agent up to its first request."""
        return self.step(live, True, None)

    def _apply_answer(self, live: LiveRun, ok: bool, value: Any) -> Command:
        """The pending request is answered: deliver the value (or throw the error)."""
        return self.step(live, ok, value)

    def _apply_cancel(self, live: LiveRun, now: float) -> Command:
        """Throw :class:`Cancelled` (or :class:`DeadlineExceeded`) at the pending await, once."""
        live.cancel_thrown = True
        error: Cancelled = Cancelled(live.run_id)
        if live.deadline is not None and now >= live.deadline:
            error = DeadlineExceeded(live.run_id, live.deadline)
        if live.payload is START:  # never stepped: nothing to unwind
            assert live.machine is not None
            live.machine.discard()
            live.machine = None
            return Fail(error, NOTHING)
        return self.step(live, False, error)

    def _apply_park(self, live: LiveRun) -> Park:
        """Nothing in flight and not answered: what the run waits on, and when a timer wakes it."""
        waiting_on, wake_at = parked_on(live.payload, live.results)
        if live.deadline is not None and not live.cancel_thrown:  # a worker wakes it to cancel it
            wake_at = live.deadline if wake_at is None else min(wake_at, live.deadline)
        data: dict[str, Any] = {"waiting_on": waiting_on, "seq": live.seq}
        if waiting_on == "reply":
            data["prompt"] = jsonable_or_repr(live.payload.prompt) if isinstance(live.payload, Ask) else None
        if wake_at is not None:
            data["wake_at"] = wake_at
        return Park(waiting_on, wake_at, data)

    # ------------------------------------------------------------------ stepping the machine

    def step(self, live: LiveRun, ok: bool, arg: Any) -> Command:
        """Step the machine once (``step(arg)`` if ``ok``, else ``throw(arg)``)."""
        machine = live.machine
        assert machine is not None, "a live run being stepped has a machine"
        if isinstance(arg, ModelCallBudgetExceeded):  # fails the run; the agent does not get to catch it
            machine.discard()
            live.machine = None
            return Fail(arg, NOTHING)
        recorder = StepRecorder(live.run_id)
        watchdog = self.watchdog
        how = machine.step if ok else machine.throw
        try:
            with recording(recorder):
                if watchdog is not None:
                    watchdog.arm()
                    try:
                        out = how(arg)
                    finally:
                        watchdog.disarm()
                else:
                    out = how(arg)
        except BudgetInterrupt as interrupt:
            function, filename, lineno = innermost_agent_frame(interrupt.__traceback__)
            error = StepBudgetExceeded(function, filename, lineno, self.step_budget_seconds)
            error.__traceback__ = interrupt.__traceback__
            live.machine = None
            return Fail(error, self._recorded(live, recorder))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            live.machine = None
            return Fail(exc, self._recorded(live, recorder))
        return self.outcome(live, out, self._recorded(live, recorder))

    def outcome(self, live: LiveRun, out: object, recorded: Recorded) -> Command:
        """The command for what the machine returned: its end, or the request it suspended with."""
        if isinstance(out, Done):
            return self._apply_done(live, out.value, recorded)
        elif isinstance(out, REQUESTS):
            return self._apply_request(live, out, recorded)
        else:
            live.machine = None
            not_a_request = TypeError(
                f"AR102: agent {live.agent.name!r} suspended with {out!r}, which is not an agentrt request; "
                "await task.tools.NAME(...), task.llm.generate_text(...), task.gather([...]), "
                "task.ui.ask(...) "
                "or task.sleep(...) instead "
                "of calling agentrt.suspend directly"
            )
            return Fail(not_a_request, recorded)

    def _apply_done(self, live: LiveRun, value: Any, recorded: Recorded) -> Command:
        agent = live.agent
        live.machine = None
        try:
            if not isinstance(value, agent.output):
                value = agent.convert_output(value)
            output = to_jsonable(value)
        except (SchemaError, TypeError) as exc:
            if not isinstance(exc, SchemaError):
                exc = SchemaError("output", f"is not JSON data: {exc}", agent=agent.name)
            return Fail(exc, recorded)
        return Complete(value, output, recorded)

    def _apply_request(self, live: LiveRun, request: object, recorded: Recorded) -> Command:
        """The run suspended on ``request``: its next checkpoint, signed, or blocked if it is refused."""
        machine = live.machine
        assert machine is not None
        live.seq += 1
        live.payload = request
        live.results = {}
        try:
            blob = self.sign(machine, live.run_id, live.seq, live.checkpoint_digest)
        except Exception as exc:  # CannotCrossAwait and friends: blocked at the last good checkpoint
            live.seq -= 1
            return Block(refusal_finding(exc), recorded)
        code = live.code_required = code_requirement(blob)
        live.checkpoint_digest = blob_digest(blob)
        return Checkpoint(blob, summarize(request), code, recorded)

    @staticmethod
    def _recorded(live: LiveRun, recorder: StepRecorder) -> Recorded:
        if not recorder.events:
            return NOTHING
        rows: list[EventRow] = [
            (live.seq, n, event.kind, event.level, event.data) for n, event in enumerate(recorder.events)
        ]
        return Recorded(rows, list(recorder.events))
