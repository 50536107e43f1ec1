"""A framework's own loop, run in the host, with every model call, tool call and approval journaled.

The frameworks the adapters wrap (pydantic-ai, the OpenAI Agents SDK) run their loop across
several asyncio tasks: pydantic-graph runs each node in an anyio task group with cancel scopes and
memory streams, the Agents SDK runs tools and guardrails with ``asyncio.gather``/``create_task``.
A suspended framework run is therefore never one coroutine chain, which is what a checkpoint
holds.  So the framework's loop runs here, in the host, as a *session*: an asyncio task of the
process that drives the run.  The framework reaches a *seam* where it calls its model, a tool, or
waits for a person; each seam is one durable step of an ordinary agentrt agent
(:func:`durable_agent`) whose checkpointed coroutine holds the journal of every seam so far.

- Live, one step answers one seam: the session is blocked at seam ``k``; the step lets it make
  that call (the framework's own model, provider and tool function, with its live run context),
  waits until it blocks at seam ``k + 1`` (or ends) and returns both; agentrt journals the result.
- After a crash (or in another worker) there is no session: the next step starts one and hands it
  the journal.  The framework runs again from its start, every journaled seam answered from the
  journal (no model or tool call is made again), up to the seam in flight at the crash, which is
  made again: at-least-once, like any agentrt tool call.  A seam whose kind or name differs from
  the journal's (the code changed under the run, or it is not deterministic) stops the run with
  :class:`~agentrt.exceptions.AdapterDiverged`.

Nothing here imports a framework: the adapters hand in a *program* (``async (session) -> value``)
that runs the framework and calls :meth:`Session.seam` at each call.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any  # Any: seams carry the framework's own values (messages, tool results)

import attrs

from agentrt._codec import serializable
from agentrt._sdk.agent import Agent, agent
from agentrt._sdk.task import Task
from agentrt._sdk.tools import tool, ui_tools
from agentrt.exceptions import AdapterDiverged

__all__ = ["Journal", "Outcome", "Record", "Seam", "Session", "Sessions", "Step", "durable_agent"]

#: The seam kinds a program reaches; ``done`` and ``failed`` end it.
SEAM_KINDS = ("model", "tool", "ask", "done", "failed")


@serializable
@attrs.frozen
class Outcome:
    """What a seam's call gave: its value, or the exception it raised (raised again on replay)."""

    ok: bool
    value: Any

    def unwrap(self) -> Any:
        if self.ok:
            return self.value
        raise self.value


@serializable
@attrs.frozen
class Seam:
    """Where the framework waits: ``kind`` (see ``SEAM_KINDS``), ``name`` (tool or model name), ``detail``
    (tool arguments, an ask's prompt), ``value`` (``done``: the program's result; ``failed``: its error)."""

    kind: str
    name: str = ""
    detail: Any = None
    value: Any = None

    def __repr__(self) -> str:
        return f"<seam {self.kind} {self.name}>".replace(" >", ">")


@serializable
@attrs.frozen
class Record:
    """One journaled seam: where the framework was and what it got."""

    seam: Seam
    outcome: Outcome


@serializable
@attrs.frozen
class Step:
    """What one durable step returns: the outcome of the seam it answered (None for the first step),
    the seam the framework reached next, and the events the framework streamed on the way (JSON
    values, put on the run's durable event stream by :func:`run_framework`)."""

    outcome: Outcome | None
    next: Seam
    events: tuple[Any, ...] = ()


@serializable
class Journal:
    """The seams of a run so far (:class:`Record` values), in the run's checkpointed frame.

    Not a bare list, though it is used as one: it goes to every step as an argument, and the
    runtime shows a pending call's arguments (``agentrt show``, the event stream); this one shows
    as ``<journal of N calls>``, not as every model response of the run again at every step.
    """

    __slots__ = ("records",)

    def __init__(self, records: Sequence[Record] = ()) -> None:
        self.records = list(records)

    def append(self, record: Record) -> None:
        self.records.append(record)

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        return f"<journal of {len(self.records)} calls>"

    def __getstate__(self) -> dict[str, Any]:
        return {"records": self.records}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.records = state["records"]


_PERFORM = object()  # what a step hands a model or tool seam: make the call


class Session:
    """A framework run in this process, blocked at a seam or ended (see the module docstring)."""

    def __init__(
        self,
        run_id: str,
        program: Callable[[Session], Awaitable[Any]],
        journal: Sequence[Record],
        replaying: bool = False,
    ) -> None:
        self.run_id = run_id  # the agentrt run's id: stable ids for the framework's own runs
        self.loop = asyncio.get_running_loop()
        self.journal = list(journal)
        self.replaying = replaying  # started again after a crash (or elsewhere), not by the run's first step
        self.reached = 0  # how many seams the framework has reached
        self.outcomes: dict[int, Outcome] = {}
        self.ended = False
        self.diverged: AdapterDiverged | None = None
        self._events: list[Any] = []
        self._waiting: tuple[int, asyncio.Future[Any]] | None = None
        self._announced: asyncio.Queue[Seam] = asyncio.Queue()
        self.task = self.loop.create_task(self._main(program))

    async def _main(self, program: Callable[[Session], Awaitable[Any]]) -> None:
        try:
            value = await program(self)
        except asyncio.CancelledError:
            self.ended = True
            raise
        except Exception as exc:
            self.ended = True
            self._announced.put_nowait(Seam("failed", value=exc))
        else:
            self.ended = True
            self._announced.put_nowait(Seam("done", value=value))

    async def seam(
        self, kind: str, name: str, detail: Any, call: Callable[[], Awaitable[Any]] | None = None
    ) -> Any:
        """Called by the framework's model, tool or approval hook: the journaled answer of this seam when
        there is one, else wait for a step, make ``call`` (``None``: the step gives the value) and return."""
        k = self.reached
        self.reached += 1
        if k < len(self.journal):
            record = self.journal[k]
            if (record.seam.kind, record.seam.name, record.seam.detail) != (kind, name, detail):
                # remembered: a framework may swallow it (the Agents SDK turns a tool's error into text)
                self.diverged = AdapterDiverged(
                    f"seam {k} of this run was {record.seam.kind} {record.seam.name!r} "
                    f"({record.seam.detail!r}) when journaled, and is {kind} {name!r} ({detail!r}) now: the "
                    "agent's code (or what it decides on) changed under the run; finish it with the code "
                    "it started with, or start a new run"
                )
                raise self.diverged
            return record.outcome.unwrap()
        gate: asyncio.Future[Any] = self.loop.create_future()
        self._waiting = (k, gate)
        self._announced.put_nowait(Seam(kind, name, detail))
        given = await gate
        if given is _PERFORM and call is not None:
            try:
                outcome = Outcome(True, await call())
            except Exception as exc:
                outcome = Outcome(False, exc)
        else:
            outcome = Outcome(True, given)
        self.outcomes[k] = outcome
        return outcome.unwrap()

    @property
    def live(self) -> bool:
        """Whether the framework is past its journal: what it does now was not done before the crash
        (in a session started again, what came before seam ``k`` went out with the step that reached it)."""
        return not self.replaying or self.reached > len(self.journal)

    def record_event(self, event: Any) -> None:
        """An event the framework streamed (a JSON value), for the run's durable event stream.  While the
        framework replays its journal the events are dropped: they went on the stream when journaled."""
        if self.live:
            self._events.append(event)

    def take_events(self) -> tuple[Any, ...]:
        events, self._events = tuple(self._events), []
        return events

    def waits_at(self, k: int) -> bool:
        return self._waiting is not None and self._waiting[0] == k and not self._waiting[1].done()

    async def next_seam(self) -> Seam:
        return await self._announced.get()

    async def answer(self, k: int, given: Any) -> Step:
        """Let the seam ``k`` the framework waits at go on (make its call, or take ``given``); the step."""
        assert self._waiting is not None and self._waiting[0] == k
        self._waiting[1].set_result(given)
        nxt = await self.next_seam()
        return Step(self.outcomes.pop(k), nxt, self.take_events())

    def close(self) -> None:
        if not self.task.done():
            self.task.cancel()


class Sessions:
    """The live sessions of one durable agent in this process, by run id."""

    def __init__(self, program: Callable[[Any, Session], Awaitable[Any]]) -> None:
        self._program = program
        self._live: dict[str, Session] = {}

    def _fresh(self, run: str, request: Any, journal: Sequence[Record], replaying: bool) -> Session:
        old = self._live.pop(run, None)
        if old is not None:
            old.close()

        async def program(session: Session) -> Any:
            return await self._program(request, session)

        session = self._live[run] = Session(run, program, journal, replaying)
        return session

    async def start(self, run: str, request: Any) -> Step:
        session = self._fresh(run, request, (), replaying=False)
        reached = await session.next_seam()
        return self._settle(run, Step(None, reached, session.take_events()))

    async def answer(self, run: str, request: Any, journal: Journal, given: Any) -> Step:
        k = len(journal)
        session = self._live.get(run)
        if session is None or session.loop is not asyncio.get_running_loop() or not session.waits_at(k):
            session = self._fresh(run, request, journal.records, replaying=True)  # after a crash
            reached = await session.next_seam()
            if session.diverged is not None:
                session.close()
                self._live.pop(run, None)
                raise session.diverged
            if session.ended or not session.waits_at(k):
                why = (
                    f" ({type(reached.value).__name__}: {reached.value})" if reached.kind == "failed" else ""
                )
                raise AdapterDiverged(
                    f"replaying {k} journaled seams of run {run!r}, the agent reached {reached!r}{why} "
                    f"instead of waiting at seam {k}: its code (or what it decides on) changed under the run"
                )
        return self._settle(run, await session.answer(k, given))

    def _settle(self, run: str, step: Step) -> Step:
        if step.next.kind in ("done", "failed"):
            self._live.pop(run, None)
        if step.next.kind == "failed":
            # The step fails with the framework's error: the runtime journals it as any tool error (the
            # original where it can be rebuilt, else its type, message and traceback), and the run fails.
            raise step.next.value
        return step


_TOOLS = ("framework_start", "framework_model", "framework_tool", "framework_answer")


async def run_framework(input: Any, task: Task) -> Any:
    """The run of every adapter's agent: the framework's loop, one journaled step per seam.

    Its frame is what agentrt checkpoints: the input and the journal of every seam so far (the
    framework's own values: messages, tool results, exceptions), nothing of the framework's frames.
    """
    journal = Journal()
    step = await task.tools.framework_start(run=task.run_id, request=input)
    for event in step.events:  # recorded with this step of the run: on the stream once, crash or not
        task.emit(event)
    seam = step.next
    while seam.kind != "done":  # a framework that failed made its step fail
        if seam.kind == "ask":
            reply = await task.ui.ask(seam.detail)
            step = await task.tools.framework_answer(
                run=task.run_id, request=input, journal=journal, given=reply
            )
        elif seam.kind == "model":
            step = await task.tools.framework_model(run=task.run_id, request=input, journal=journal)
        else:
            step = await task.tools.framework_tool(run=task.run_id, request=input, journal=journal)
        journal.append(Record(seam, step.outcome))
        for event in step.events:
            task.emit(event)
        seam = step.next
    return seam.value


def durable_agent(
    *,
    name: str,
    description: str,
    input: type,
    output: type,
    program: Callable[[Any, Session], Awaitable[Any]],
    module: str,
) -> Agent:
    """An agentrt agent whose run drives ``program`` (a framework run) seam by seam, each seam a step.

    ``program(input, session)`` runs in the host and returns the ``output`` instance.  The agent's
    tools are ``framework_start``, ``framework_model``, ``framework_tool`` and ``framework_answer``
    (host functions named by what their step answers, so a trace reads as the framework's calls) and
    the ui tools (approvals are asks).  ``module`` is where the agent is defined (``MODULE:ATTR``).
    """
    sessions = Sessions(program)

    async def start(run: str, request: Any) -> Step:
        return await sessions.start(run, request)

    # ``journal: Any``: a tool's annotations become its JSON Schema, and a Journal has none (only
    # run_framework calls these tools)
    async def call(run: str, request: Any, journal: Any) -> Step:
        return await sessions.answer(run, request, journal, _PERFORM)

    async def answer(run: str, request: Any, journal: Any, given: Any) -> Step:
        return await sessions.answer(run, request, journal, given)

    hosts = [
        tool(name=_TOOLS[0])(start),
        tool(name=_TOOLS[1])(call),
        tool(name=_TOOLS[2])(call),
        tool(name=_TOOLS[3])(answer),
    ]
    made = agent(
        input=input,
        output=output,
        run=run_framework,
        tools=[*hosts, *ui_tools],
        name=name,
        description=description,
    )
    # A partial of the one module-level coroutine function (as llm_agent does): the checkpointed frame
    # is run_framework's, found by reference; agent_spec() looks for the agent in the run's module.
    bound: Any = functools.partial(run_framework)
    bound.__module__ = module
    bound.__name__ = bound.__qualname__ = name
    bound.__wrapped__ = run_framework
    bound.__doc__ = description
    return attrs.evolve(made, run=bound)
