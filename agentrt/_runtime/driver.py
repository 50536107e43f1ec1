"""The I/O shell around the stepper: one asyncio task per run that has work in this process.

Per run, a *driver* steps the run's :class:`~agentrt.lowlevel.Machine` from suspension to
suspension.  It asks :class:`~agentrt._runtime.stepper.Stepper` what to do and does it: at each
suspension it checkpoints first (write-ahead: the blob and the pending request are in the store
before anything is dispatched), then dispatches the request (:mod:`agentrt._runtime.dispatch`).
Each result is journaled (run, seq, idx) as it arrives, and only then delivered.

After a crash, a run restarts from its newest checkpoint: results already journaled are delivered
from the journal; requests without a result are dispatched again (at-least-once), with the same
idempotency key ``RUN:SEQ``.  A run that waits for a reply, a timer or a child run leaves memory:
its driver ends, the machine is dropped, and the run costs one row until something wakes it.

Every write of a driver carries the lease epoch it was claimed under, so a driver that lost its run
(paused past its lease) can never write (:class:`LeaseLost`).  Every store call goes through
:class:`~agentrt._runtime.storeio.StoreIO`: none blocks the event loop, so the round trips of the
runs of one process overlap.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from typing import Any  # Any: the agent's values and results

from agentrt._runtime.agents import AgentRegistry
from agentrt._runtime.blocking import BlockedSweep, refusal_finding, unrestorable_finding
from agentrt._runtime.dispatch import Dispatcher
from agentrt._runtime.encoding import (
    decode_error,
    decode_result,
    encode_error,
    encode_result,
    error_record,
    seal_for,
)
from agentrt._runtime.history import check_chain, check_history
from agentrt._runtime.leases import Leases
from agentrt._runtime.observation import Observation
from agentrt._runtime.pending import answered_in_store, waits_outside
from agentrt._runtime.requirements import CodeJudge
from agentrt._runtime.state import START, LiveRun
from agentrt._runtime.stepper import (
    Block,
    CancelCalls,
    Checkpoint,
    Command,
    Complete,
    Dispatch,
    Fail,
    Park,
    Recorded,
    Stepper,
    Wait,
)
from agentrt._runtime.storeio import StoreIO
from agentrt._sdk.agent import Agent
from agentrt.exceptions import Cancelled, CorruptBlob, IncompatibleBlob, LeaseHeld, RowDamaged, RunFailed
from agentrt.llm import Executors
from agentrt.lowlevel import Machine
from agentrt.stores import blob_digest
from agentrt.stores.base import LeaseLost, RunRecord, Store

__all__ = ["SLICE_SECONDS", "Driver"]

#: How long a driver goes on stepping without giving the event loop a turn, when the calls of its
#: steps never wait (async tools that return at once, inline tools: dispatched eagerly, see
#: ``dispatch.start_task``).  Past it the driver yields once, so other runs, the lease renewer and
#: stream subscribers are never held up longer than this plus one step.
SLICE_SECONDS = 0.002


class Driver:
    """Drives the runs of one runtime: their drivers, their in-memory state, their outcomes."""

    def __init__(
        self,
        *,
        store: Store,
        io: StoreIO,
        leases: Leases,
        observation: Observation,
        stepper: Stepper,
        agents: AgentRegistry,
        judge: CodeJudge,
        agent_limits: Mapping[str, int],
        touch: Callable[[], None],
        executors: Executors,
        max_model_calls: int,
        max_workers: int,
        poll_seconds: float,
    ) -> None:
        self.store = store
        self.io = io
        self.leases = leases
        self.observation = observation
        self.stepper = stepper
        self.agents = agents
        self.judge = judge
        self.agent_limits = agent_limits
        self.touch = touch
        self.dispatcher = Dispatcher(
            self, executors=executors, max_model_calls=max_model_calls, max_workers=max_workers
        )
        #: The blocked runs this process blocked or tried (a worker tries each at most once).
        self.blocked_sweep = BlockedSweep(poll_seconds)
        self.lives: dict[str, LiveRun] = {}
        self.drivers: dict[str, asyncio.Task[None]] = {}
        self.driver_errors: dict[str, BaseException] = {}
        self._readopt: dict[str, tuple[RunRecord, Agent]] = {}  # claimed again while a stale driver ran
        self._background: set[asyncio.Task[Any]] = set()
        self._scheduling: dict[str, asyncio.Future[None]] = {}  # run id -> its schedule() under way
        self._soon: set[str] = set()  # runs schedule_soon() was asked to start
        self._parking: set[str] = set()  # runs whose driver is storing them as waiting
        self._woken: set[str] = set()  # ... and got a result meanwhile
        self.closed = False

    # ------------------------------------------------------------------ what the dispatcher needs

    @property
    def owner(self) -> str:
        return self.leases.owner

    def register_agent(self, agent: Agent, spec: str | None = None) -> str:
        return self.agents.register(agent, spec)

    def failure(self, rec: RunRecord) -> BaseException:
        """The exception a failed run ended with (rebuilt from its blob where possible)."""
        if rec.error_blob:
            try:
                return decode_error(rec.error_blob, seal_for(self.store, "error", rec.run_id, None))
            except Exception:
                pass
        if rec.status == "cancelled":
            return Cancelled(rec.run_id)
        return RunFailed(rec.run_id, rec.error or {})

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run ``coro`` as a task of this driver (a timer's delivery, a local wake-up); ``close``
        cancels what is left.  An error goes to the loop's exception handler, as a callback's does."""
        loop = asyncio.get_running_loop()
        task = loop.create_task(coro)
        self._background.add(task)

        def done(task: asyncio.Task[Any]) -> None:
            self._background.discard(task)
            if not task.cancelled() and task.exception() is not None:
                loop.call_exception_handler(
                    {"message": "agentrt: a delivery failed", "exception": task.exception(), "task": task}
                )

        task.add_done_callback(done)

    # ------------------------------------------------------------------ scheduling

    @contextlib.asynccontextmanager
    async def exclusive(self, run_id: str) -> AsyncIterator[None]:
        """Hold ``run_id`` for one scheduling decision at a time: a ``schedule`` of it (a wake-up, the
        worker's look at blocked runs) waits until the holder (``retry``, ``resume``...) is done and
        then sees what it did, as when these calls could not interleave."""
        while run_id in self._scheduling:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._scheduling[run_id])
        busy = self._scheduling[run_id] = asyncio.get_running_loop().create_future()
        try:
            yield
        finally:
            del self._scheduling[run_id]
            busy.set_result(None)

    def schedule_soon(self, run_id: str) -> None:
        """:meth:`schedule` from code that cannot wait (counted in :attr:`driving` at once)."""
        self._soon.add(run_id)

        async def schedule() -> None:
            try:
                await self.schedule(run_id)
            finally:
                self._soon.discard(run_id)

        self.spawn(schedule())

    @property
    def idle(self) -> bool:
        """Whether nothing is driven, started, delivered or timed here (what ``settle`` waits for)."""
        return not (self.drivers or self._background or self._soon or self.dispatcher.timers_armed)

    @property
    def driving(self) -> int:
        """How many runs are driven here, or being started (their lease being taken)."""
        return len(self.drivers.keys() | self._soon) if self._soon else len(self.drivers)

    async def schedule(self, run_id: str, *, explicit: bool = False) -> None:
        """Make sure a driver runs for ``run_id`` (taking its lease); wake it if it already runs.

        ``explicit``: the caller asked for this run, so a lease held elsewhere is an error to report.
        """
        async with self.exclusive(run_id):
            await self.schedule_held(run_id, explicit=explicit)

    async def schedule_held(self, run_id: str, *, explicit: bool = False) -> None:
        """:meth:`schedule`, for a caller that holds :meth:`exclusive` on ``run_id``."""
        if self.closed:
            return
        if run_id in self.drivers:
            live = self.lives.get(run_id)
            if live is not None and live.wakeup is not None:
                live.wakeup.set()
            return
        await self._take(run_id, explicit)

    async def _take(self, run_id: str, explicit: bool) -> None:
        """Take the lease on ``run_id`` and start its driver (see :meth:`schedule`)."""
        if self.agent_limits and not explicit:
            stored = await self.io(self.store.get_run, run_id)
            if stored is not None and stored.agent in self.agent_limits:
                self.touch()  # a limited agent's runs are taken by claims only (they count the fleet)
                return
        try:
            rec = await self.io(self.leases.acquire, run_id)
        except LeaseHeld:
            if explicit:
                raise
            return
        if rec.finished:
            await self.io(self.leases.release, run_id)
            return
        try:
            agent = self.agents.agent_of(rec)
        except BaseException:
            await self.io(self.leases.release, run_id)
            raise
        self.adopt(rec, agent, explicit=explicit)

    def adopt(self, rec: RunRecord, agent: Agent, *, explicit: bool = False) -> None:
        """Start a driver for ``rec``, whose lease this runtime holds at ``rec.epoch``."""
        run_id = rec.run_id
        live = self.lives.get(run_id)
        if run_id in self.drivers:
            if live is not None and live.epoch != rec.epoch:
                # Our lease lapsed (this process was paused) and we claimed the run again: the driver
                # still running holds the old epoch, so its next write is fenced off.  Its in-memory
                # state may be behind the store: start afresh from the store once it has stopped.
                self._readopt[run_id] = (rec, agent)
            return
        if live is None:
            live = self.lives[run_id] = LiveRun(run_id, agent)
        live.epoch = rec.epoch
        live.explicit = live.explicit or explicit
        live.cancel_requested = live.cancel_requested or rec.cancel_requested
        live.deadline = rec.deadline
        task = asyncio.get_running_loop().create_task(self._drive(live), name=f"agentrt-run-{run_id}")
        self.drivers[run_id] = task

    async def deliver(self, run_id: str, seq: int, idx: int, ok: bool, blob: bytes) -> None:
        """Journal a result that arrived from outside a driver (child run, timer) and wake the run."""
        if not await self.io(self.store.put_result, run_id, seq, idx, ok, blob):
            return
        if run_id in self._parking:  # its driver is storing it as waiting: it looks again once out
            self._woken.add(run_id)
        live = self.lives.get(run_id)
        if live is not None and live.seq == seq and idx not in live.results:
            live.results[idx] = decode_result(self.store, run_id, seq, idx, ok, blob)
        elif live is None and not await self.io(self._answered, run_id, seq):
            return  # parked and still waiting on other members: leave it out of memory
        await self.schedule(run_id)

    def _answered(self, run_id: str, seq: int) -> bool:
        """Whether a parked run's pending request (at ``seq``) now has what it needs to go on
        (store reads: made through the I/O seam)."""
        rec = self.store.get_run(run_id)
        if rec is None or rec.finished or rec.seq != seq:
            return rec is not None and not rec.finished
        oks = [ok for ok, _blob in self.store.get_results(run_id, seq).values()]
        return answered_in_store(rec.pending, oks)

    async def _notify_parent(self, run_id: str, ok: bool, value: Any) -> None:
        rec = await self.io(self.store.get_run, run_id)
        if rec is None or rec.parent_id is None or rec.parent_seq is None:
            return
        idx = rec.parent_idx or 0
        parent, seq = rec.parent_id, rec.parent_seq
        try:
            blob = encode_result(self.store, parent, seq, idx, ok, value)
        except Exception as exc:
            ok, blob = False, encode_result(self.store, parent, seq, idx, False, exc)
        await self.deliver(parent, seq, idx, ok, blob)

    # ------------------------------------------------------------------ the driver

    async def _drive(self, live: LiveRun) -> None:
        """The step loop of one run: ask the stepper, do what it says, until the run ends or parks."""
        run_id = live.run_id
        try:
            if live.machine is None and not await self._loaded(live):
                return
            slice_end = time.monotonic() + SLICE_SECONDS
            stepper = self.stepper
            command: Command | None = None
            while True:
                if command is None:  # never between a decision and its doing: nothing may land between
                    if time.monotonic() >= slice_end:  # steps whose calls never waited: let the loop run
                        await asyncio.sleep(0)
                        slice_end = time.monotonic() + SLICE_SECONDS
                    if live.lease_lost is not None:
                        raise live.lease_lost
                    command = stepper.activate(live, time.time())
                if type(command) is Dispatch:
                    if command.direct:  # the common step: one tool call
                        await self.dispatcher.call(live)
                    else:
                        await self.dispatcher.dispatch(live)
                    command = stepper.after_dispatch(live)
                    continue
                if type(command) is Wait:
                    await self._wait_inflight(live)
                    slice_end = time.monotonic() + SLICE_SECONDS
                elif type(command) is CancelCalls:
                    for task in live.inflight.values():
                        task.cancel()
                    live.inflight.clear()
                elif type(command) is Checkpoint:
                    await self._checkpoint(live, command)
                elif not await self._end(live, command):
                    return
                command = None
        except LeaseLost as exc:
            self.observation.emit("lease_lost", run_id, message=str(exc))
            self._evict(live)
        except RowDamaged as exc:  # its row, not the host, is wrong: blocked with the finding, kept
            try:
                self._refuse(live, refusal_finding(exc), exc)
            except Exception:  # the store cannot even record that: as any failure of the host
                self._evict(live)
        except asyncio.CancelledError:
            await self._stop(live)
            raise
        except Exception as exc:  # a failure of the host (store, codec): the run stays resumable
            self.driver_errors[run_id] = exc
            self.observation.emit("driver_error", run_id, error=f"{type(exc).__name__}: {exc}")
            # The lease is kept until it expires: a worker retries the run after lease_seconds
            # instead of claiming it again at once, in a loop, while the cause persists.
            self._evict(live)
        finally:
            self.drivers.pop(run_id, None)
            self._parking.discard(run_id)
            woken = run_id in self._woken
            self._woken.discard(run_id)
            again = self._readopt.pop(run_id, None)
            if again is not None and not self.closed:
                self.lives.pop(run_id, None)
                self.adopt(*again)
            elif woken and not self.closed:
                self.schedule_soon(run_id)
            self.touch()

    async def _end(self, live: LiveRun, command: Command) -> bool:
        """Carry out a command that may end the driver; False: it did (the run ended, parked, blocked)."""
        if type(command) is Complete:
            await self._finish_completed(live, command)
        elif type(command) is Fail:
            await self._finish_failed(live, command.error, command.recorded)
        elif type(command) is Block:
            await self._block(live, command.finding, command.recorded)
        elif type(command) is Park:
            await self._park(live, command)
        else:
            raise TypeError(f"the stepper returned {command!r}, which the driver does not know")
        return False

    async def _loaded(self, live: LiveRun) -> bool:
        """Load the run's machine; False: it cannot be driven here (blocked or released)."""
        try:
            await self._load(live)
        except CorruptBlob as exc:  # a replayed blob or a rolled-back history: blocked, kept
            self._refuse(live, refusal_finding(exc), exc)
            return False
        except IncompatibleBlob as exc:
            if live.code_required is None and not live.explicit:
                raise  # a claim of a run with no recorded requirement: its lease lapses (no hot loop)
            if live.explicit:  # asked for here: blocked and reported (a worker with its code goes on)
                if live.code_required is not None:
                    self.judge.note_lacking(live.code_required, str(exc))
                self._refuse(live, unrestorable_finding(exc, live.seq), exc)
            else:
                await self._release_unrestorable(live, exc)
            return False
        return True

    async def _wait_inflight(self, live: LiveRun) -> None:
        """Wait until a call in flight finishes, or (for a run that also waits outside) a wake-up."""
        if len(live.inflight) == 1 and live.deadline is None and not waits_outside(live.payload):
            # One call and nothing else to wait for (the common step): await its task itself, which
            # costs one loop turn less than asyncio.wait.  Cancelling the driver cancels the call,
            # as _evict would.  The task catches what the call raises; an error of the host (the
            # store failing to journal) comes out here and stops the driver, the run resumable.
            (task,) = live.inflight.values()
            await task
            return
        waiters: list[asyncio.Future[Any]] = list(live.inflight.values())
        wake: asyncio.Task[Any] | None = None
        if waits_outside(live.payload):
            live.wakeup = asyncio.Event()
            wake = asyncio.ensure_future(live.wakeup.wait())
            waiters.append(wake)
        timeout = None  # until the deadline, where the stepper throws DeadlineExceeded
        if live.deadline is not None and not live.cancel_thrown:
            timeout = max(live.deadline - time.time(), 0.0)
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if wake is not None:
                wake.cancel()
            live.wakeup = None

    async def _release_unrestorable(self, live: LiveRun, exc: IncompatibleBlob) -> None:
        """A run claimed (or woken here) whose checkpoint this process cannot restore: not a failure
        of the run nor of this process.  Its lease is given back at once and its code requirement
        remembered, so this worker's claims pass over it and one that carries its code takes it."""
        if live.code_required is not None:
            self.judge.note_lacking(live.code_required, str(exc))
        self.observation.emit("released", live.run_id, reason=str(exc), code_required=live.code_required)
        self._evict(live)
        await self.io(self.leases.release, live.run_id)

    def _evict(self, live: LiveRun) -> None:
        """Drop the run from memory, its lease kept (it lapses: see the callers)."""
        for task in live.inflight.values():
            task.cancel()
        live.inflight.clear()
        live.unjournaled = []
        self.lives.pop(live.run_id, None)

    async def _stop(self, live: LiveRun) -> None:
        """The driver is cancelled (close, cancel): drop the run from memory, journal what was answered
        and give its lease back -- off the loop, and the cancelled task waits for it."""
        for task in live.inflight.values():
            task.cancel()
        live.inflight.clear()
        entries, live.unjournaled = live.unjournaled, []
        self.lives.pop(live.run_id, None)

        def keep_and_release() -> None:
            if entries:  # stopping (close, cancel): keep what was answered
                with contextlib.suppress(Exception):
                    self._journal(live.run_id, live.epoch, entries)
            self.leases.release(live.run_id)

        done = asyncio.ensure_future(self.io(keep_and_release))
        while not done.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(done)
        with contextlib.suppress(Exception):
            done.result()

    def restore_checkpoint(self, run_id: str, seq: int, blob: bytes) -> Machine:
        """The run's machine from its checkpoint: signed with the store's key, of this run and sequence."""
        seal = seal_for(self.store, "checkpoint", run_id, seq)
        return Machine.set_bound(blob, seal.ring, seal.requirement())

    async def _load(self, live: LiveRun) -> None:
        """Rebuild the run's machine from its newest checkpoint (or from its input)."""
        io, store = self.io, self.store
        rec = await io(store.get_run, live.run_id)
        if rec is None:
            from agentrt.exceptions import RunNotFound

            raise RunNotFound(live.run_id, store.location)
        if rec.damaged is not None:  # a defaulted input or usage must not drive the run on
            column, why = rec.damaged
            raise RowDamaged(
                f"run {live.run_id}: its stored row is damaged (column {column}: {why}), so it is not "
                f"driven; repair the column in {store.location} (`agentrt show {live.run_id}` "
                "names it), then resume it",
                live.run_id,
                column,
            )
        live.usage = dict(rec.usage)
        live.cancel_requested = live.cancel_requested or rec.cancel_requested
        live.deadline = rec.deadline
        checkpoint = await io(store.latest_checkpoint, live.run_id)
        if checkpoint is None:
            await io(check_history, store, rec, None)
            live.checkpoint_digest = b""
            value = live.agent.convert_input(rec.input)
            live.machine = Machine(live.agent.run, value, live.agent.make_task(live.run_id))
            live.seq = 0
            live.payload = START
            live.results = {}
            return
        seq, blob = checkpoint
        live.code_required = rec.code_required
        live.seq = seq  # named by the finding if it cannot be restored here
        live.machine = self.restore_checkpoint(live.run_id, seq, blob)  # the blob's own checks first
        await io(check_history, store, rec, checkpoint)  # then: is it the newest this store signed?
        await io(check_chain, store, live.run_id, seq, blob)
        live.checkpoint_digest = blob_digest(blob)
        live.payload = live.machine.pending
        live.results = {}
        for idx, (ok, data) in (await io(store.get_results, live.run_id, seq)).items():
            live.results[idx] = decode_result(store, live.run_id, seq, idx, ok, data)

    # ------------------------------------------------------------------ carrying out the commands

    def _report(self, live: LiveRun, recorded: Recorded) -> None:
        """Hand what the agent reported during its step to the observers (before it is stored)."""
        for event in recorded.events:
            self.observation.emit(event.kind, live.run_id, **{**event.data, "level": event.level})
            if event.kind == "emit":
                self.observation.emitted(event.data.get("type"), event.obj)

    async def _checkpoint(self, live: LiveRun, command: Checkpoint) -> None:
        self._report(live, command.recorded)
        # journal= only when there is one: the store then declares Capability.JOURNAL_WITH_CHECKPOINT,
        # and a store without that capability never sees the keyword
        journal: dict[str, Any] = {}
        if live.unjournaled:
            journal["journal"], live.unjournaled = live.unjournaled, []
        await self.io.save_checkpoint(
            live.run_id,
            self.owner,
            live.seq,
            command.blob,
            command.pending,
            command.recorded.rows,
            epoch=live.epoch,
            code_required=command.code_required,
            **journal,
        )
        self.observation.emit(
            "checkpoint", live.run_id, seq=live.seq, size_bytes=len(command.blob), request=command.pending
        )

    async def _journal_deferred(self, live: LiveRun) -> None:
        """Journal the results whose entry was to ride on the next checkpoint, when there is none."""
        entries, live.unjournaled = live.unjournaled, []
        if entries:
            await self.io(self._journal, live.run_id, live.epoch, entries)

    def _journal(self, run_id: str, epoch: int, entries: list[tuple[int, int, bool, bytes]]) -> None:
        for seq, idx, ok, blob in entries:
            self.store.put_result(run_id, seq, idx, ok, blob, None, owner=self.owner, epoch=epoch)

    async def _finish_completed(self, live: LiveRun, command: Complete) -> None:
        self._report(live, command.recorded)
        await self._journal_deferred(live)
        live.machine = None
        if await self.io(
            self.store.finish_run,
            live.run_id,
            self.owner,
            "completed",
            output=command.output,
            events=command.recorded.rows,
            epoch=live.epoch,
        ):
            self.observation.emit("completed", live.run_id, output=command.output)
        self.lives.pop(live.run_id, None)
        await self.io(self.leases.release, live.run_id)
        self.touch()
        await self._notify_parent(live.run_id, True, command.value)

    async def _finish_failed(self, live: LiveRun, exc: BaseException, recorded: Recorded) -> None:
        self._report(live, recorded)
        await self._journal_deferred(live)
        live.machine = None
        record = error_record(exc)
        try:
            blob = encode_error(exc, seal_for(self.store, "error", live.run_id, None))
        except Exception:
            blob = None
        status = "cancelled" if isinstance(exc, Cancelled) else "failed"
        if await self.io(
            self.store.finish_run,
            live.run_id,
            self.owner,
            status,
            error=record,
            error_blob=blob,
            events=recorded.rows,
            epoch=live.epoch,
        ):
            self.observation.emit(status, live.run_id, error=record)
        self.lives.pop(live.run_id, None)
        await self.io(self.leases.release, live.run_id)
        self.touch()
        await self._notify_parent(live.run_id, False, exc)

    async def _block(self, live: LiveRun, finding: dict[str, Any], recorded: Recorded) -> None:
        """The run cannot go on here (see :mod:`agentrt._runtime.blocking`): record it ``blocked`` at
        its last good checkpoint, with the results it holds journaled, and drop it from memory."""
        self._report(live, recorded)
        for task in live.inflight.values():  # none is expected: a step waits for what it needs
            task.cancel()
        live.inflight.clear()
        await self._journal_deferred(live)
        if live.machine is not None:
            live.machine.discard()  # no finally / __exit__ runs: the run goes on from its checkpoint
        live.machine = None
        if await self.io(
            self.store.block_run, live.run_id, self.owner, finding, recorded.rows, epoch=live.epoch
        ):
            self.observation.emit("blocked", live.run_id, seq=live.seq, blocked=finding)
        self.blocked_sweep.note(live.run_id, live.code_required)
        self.lives.pop(live.run_id, None)
        await self.io(self.leases.release, live.run_id)
        self.touch()

    def _refuse(self, live: LiveRun, finding: dict[str, Any], exc: BaseException) -> None:
        """A run that cannot be loaded or driven here (its blob, history or row is wrong): blocked with
        ``finding``, and ``exc`` kept as its driver error -- in one step of the loop, on purpose: a
        reader sees the row blocked and the error together.  The one path that writes on the loop
        (an error, not a step: no run's progress waits on it)."""
        self.driver_errors[live.run_id] = exc
        for task in live.inflight.values():
            task.cancel()
        live.inflight.clear()
        if live.unjournaled:
            entries, live.unjournaled = live.unjournaled, []
            self._journal(live.run_id, live.epoch, entries)
        if live.machine is not None:
            live.machine.discard()
        live.machine = None
        if self.store.block_run(live.run_id, self.owner, finding, [], epoch=live.epoch):
            self.observation.emit("blocked", live.run_id, seq=live.seq, blocked=finding)
        self.blocked_sweep.note(live.run_id, live.code_required)
        self.lives.pop(live.run_id, None)
        self.leases.release(live.run_id)
        self.touch()

    async def _park(self, live: LiveRun, command: Park) -> None:
        """The run waits on something that is not a tool call: store it, drop it from memory.  A result
        delivered while this is written (the writes are off the loop) wakes it again once it is out."""
        self._parking.add(live.run_id)
        await self._journal_deferred(live)
        await self.io(
            self.store.set_waiting,
            live.run_id,
            self.owner,
            command.waiting_on,
            command.wake_at,
            [],
            epoch=live.epoch,
        )
        self.observation.emit("waiting", live.run_id, **command.data)
        live.machine = None
        live.results = {}
        self.lives.pop(live.run_id, None)
        await self.io(self.leases.release, live.run_id)

    # ------------------------------------------------------------------ stopping

    async def close(self) -> None:
        """Cancel every driver and call in flight (runs stay resumable from their last checkpoint)."""
        self.closed = True
        tasks: list[asyncio.Future[Any]] = [*self.drivers.values(), *self._background]
        for live in self.lives.values():
            tasks.extend(live.inflight.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for run_id in list(self.lives):
            await self.io(self.leases.release, run_id)
        self.lives.clear()
        self.dispatcher.close()
