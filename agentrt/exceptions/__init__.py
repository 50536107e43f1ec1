"""The agentrt error tree: every exception agentrt raises, importable from this one module.

Every error names what went wrong, where, and how to fix it.  All of them derive
from :class:`AgentrtError`, so a host can catch agentrt's own failures in one place
without swallowing the agent's exceptions, which always propagate unchanged.
Where an error is also a builtin kind of failure, it subclasses that builtin too
(``SchemaError`` is a ``ValueError``, ``RunNotFound`` a ``LookupError``), as attrs does.

The tree: six families with a base a caller can catch (``except agentrt.RunError``), each
re-exported where its users look for it (``agentrt``, ``agentrt.llm``, ``agentrt.stores``,
``agentrt.inspection``)::

    AgentrtError
    ├── CheckpointError:  CannotCrossAwait, IncompatibleBlob, CorruptBlob(ValueError) > HistoryRefused,
    │                     UnsupportedSuspension, ForeignAwaitable, InternalInconsistency
    ├── AgentCodeError:   SchemaError(ValueError) > StateError, ToolError, StepBudgetExceeded,
    │                     AgentSpecError(LookupError), AdapterDiverged
    ├── RunError:         RunNotFound(LookupError), RunExists(ValueError), NotWaiting,
    │                     Cancelled > DeadlineExceeded, LeaseHeld, LeaseLost, RunFailed, RunBlocked,
    │                     CannotRetry
    ├── StoreError:       StoreLocked, StoreCorrupt > RowDamaged, StoreSchemaTooNew, StoreNotFound,
    │                     BlobKeyRejected(ValueError)
    ├── ModelError:       MissingExecutor, ScriptExhausted, StructuredOutputError(ValueError),
    │                     DecisionExhausted, ModelCallBudgetExceeded, TokenBudgetExceeded,
    │                     ModelProviderError, ToolLoopExhausted, MaxTurnsExceeded (llm_agent),
    │                     ModelAnswerError > ModelRefused, ModelOutputTruncated, ModelContentFiltered
    ├── TeamError:        ContractError(ValueError) > GateBlocked, TeamRunNotFound(LookupError),
    │                     BusLockTimeout(TimeoutError)
    └── InspectionError:  CheckpointNotFound(LookupError), ForkError(LookupError)

Errors that cross a checkpoint or the journal define ``__reduce__`` so they
pickle with their fields (keyword-only or computed messages would not).
"""

from __future__ import annotations

import datetime
from typing import Any  # Any: errors carry user values and pickle themselves

from agentrt.exceptions._base import (
    AgentCodeError,
    AgentrtError,
    CheckpointError,
    InspectionError,
    ModelError,
    RunError,
    TeamError,
)
from agentrt.exceptions._models import (
    DecisionExhausted,
    MaxTurnsExceeded,
    MissingExecutor,
    ModelAnswerError,
    ModelCallBudgetExceeded,
    ModelContentFiltered,
    ModelOutputTruncated,
    ModelProviderError,
    ModelRefused,
    ScriptExhausted,
    StructuredOutputError,
    TokenBudgetExceeded,
    ToolLoopExhausted,
    _rebuild_answer_error,
    _rebuild_provider_error,
)

__all__ = [
    "AdapterDiverged",
    "AgentCodeError",
    "AgentSpecError",
    "AgentrtError",
    "BlobKeyRejected",
    "BusLockTimeout",
    "Cancelled",
    "CannotCrossAwait",
    "CannotRetry",
    "CheckpointError",
    "CheckpointNotFound",
    "ContractError",
    "CorruptBlob",
    "DeadlineExceeded",
    "DecisionExhausted",
    "ForeignAwaitable",
    "ForkError",
    "GateBlocked",
    "HistoryRefused",
    "IncompatibleBlob",
    "InspectionError",
    "InternalInconsistency",
    "LeaseHeld",
    "LeaseLost",
    "MaxTurnsExceeded",
    "MissingExecutor",
    "ModelAnswerError",
    "ModelCallBudgetExceeded",
    "ModelContentFiltered",
    "ModelError",
    "ModelOutputTruncated",
    "ModelProviderError",
    "ModelRefused",
    "NotWaiting",
    "RowDamaged",
    "RunBlocked",
    "RunError",
    "RunExists",
    "RunFailed",
    "RunNotFound",
    "SchemaError",
    "ScriptExhausted",
    "StateError",
    "StepBudgetExceeded",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreNotFound",
    "StoreSchemaTooNew",
    "StructuredOutputError",
    "TeamError",
    "TeamRunNotFound",
    "TokenBudgetExceeded",
    "ToolError",
    "ToolLoopExhausted",
    "UnsupportedSuspension",
]


class CannotCrossAwait(CheckpointError):
    """A value live at a suspension cannot be checkpointed.

    Raised by ``Machine.get()`` (and by the runtime at a checkpoint).  The
    attributes locate the value precisely; ``str(error)`` says all of it in one
    line plus the fix.
    """

    def __init__(
        self,
        *,
        code: str,
        variable: str | None,
        path: str,
        function: str | None,
        filename: str | None,
        lineno: int | None,
        type_name: str,
        fix: str,
    ) -> None:
        self.code = code
        self.variable = variable
        self.path = path
        self.function = function
        self.filename = filename
        self.lineno = lineno
        self.type_name = type_name
        self.fix = fix
        where = f"{filename}:{lineno}" if filename else "<unknown location>"
        inside = f" at {path}" if path and path != variable else ""
        if not variable:
            what = "a value"
        elif variable.startswith("<") and variable.endswith(">"):  # a described stack entry, not a name
            what = f"the {variable[1:-1]}"
            rest = path[len(variable) :].lstrip(".") if path and path.startswith(variable) else ""
            inside = f" (inside it: {rest})" if rest else inside
        else:
            what = f"variable {variable!r}"
        message = (
            f"{code}: {what}{inside} of type {type_name} in {function or '<unknown>'} "
            f"({where}) cannot cross this await. {fix}"
        )
        super().__init__(message)

    def __reduce__(self) -> tuple[object, tuple[dict[str, Any]]]:  # keyword-only __init__
        return (_rebuild_cannot_cross_await, (self.__dict__.copy(),))


def _rebuild_cannot_cross_await(fields: dict[str, Any]) -> CannotCrossAwait:
    names = ("code", "variable", "path", "function", "filename", "lineno", "type_name", "fix")
    return CannotCrossAwait(**{name: fields[name] for name in names})


class IncompatibleBlob(CheckpointError):
    """The blob was written by other code: Python minor, format version or code identity differ."""


class CorruptBlob(CheckpointError, ValueError):
    """The blob is truncated, tampered with or malformed.  Nothing in it was executed."""


class HistoryRefused(CorruptBlob):
    """A run's stored history is not what its store signed last: its newest checkpoint was deleted or
    swapped and its row rewound, a finished run was revived, or its signed head was edited or copied
    in (see ``agentrt._runtime.history``).  The run is blocked, nothing was run; the message says why."""


class UnsupportedSuspension(CheckpointError):
    """The suspended chain contains something the checkpoint engine cannot capture or resume."""


class InternalInconsistency(CheckpointError):
    """agentrt contradicted itself: a bug in agentrt, not in the agent or in the blob (AR199).

    Raised where the checkpoint engine finds its own analysis and the frame (or the code it
    synthesized) disagree.  The message names the agent function and line it was working
    on and the engine function that noticed, and asks for a bug report.
    """

    code = "AR199"

    def __init__(
        self,
        what: str,
        *,
        function: str | None = None,
        filename: str | None = None,
        lineno: int | None = None,
        engine_site: str | None = None,
    ) -> None:
        self.what = what
        self.function = function
        self.filename = filename
        self.lineno = lineno
        self.engine_site = engine_site
        where = f" in {function}" if function else ""
        if filename:
            where += f" ({filename}" + (f":{lineno})" if lineno is not None else ")")
        elif lineno is not None:
            where += f" (line {lineno})"
        noticed = f"; noticed by {engine_site}" if engine_site else ""
        super().__init__(
            f"AR199: internal inconsistency in agentrt's checkpoint engine{where}: {what}{noticed}. "
            "This is a bug in agentrt, not in your agent or your blob; please report it with this "
            "message and your Python version."
        )

    def __reduce__(self) -> tuple[object, ...]:
        fields = {k: getattr(self, k) for k in ("function", "filename", "lineno", "engine_site")}
        return (_rebuild_internal_inconsistency, (self.what, fields))


def _rebuild_internal_inconsistency(what: str, fields: dict[str, Any]) -> InternalInconsistency:
    return InternalInconsistency(what, **fields)


class ForeignAwaitable(CheckpointError):
    """The agent awaited something that is neither an agentrt request nor a Python coroutine (AR102)."""


# ------------------------------------------------------------------ agents and runs


class SchemaError(AgentCodeError, ValueError):
    """A value does not match an agent's input or output schema.

    ``path`` locates the offending field (``input.labels[2].name``); ``problem``
    says what is wrong with it.
    """

    def __init__(self, path: str, problem: str, *, agent: str | None = None) -> None:
        self.path = path
        self.problem = problem
        self.agent = agent
        where = f" of agent {agent!r}" if agent else ""
        super().__init__(f"{path}{where}: {problem}")

    def __reduce__(self) -> Any:
        return (_rebuild_schema_error, (self.path, self.problem, self.agent))


def _rebuild_schema_error(path: str, problem: str, agent: str | None) -> SchemaError:
    return SchemaError(path, problem, agent=agent)


class StateError(SchemaError):
    """The state of a self-managed agent does not fit its class (when saved, or when read back)."""


class ToolError(AgentCodeError):
    """A tool raised an exception whose type cannot be rebuilt here.

    Carries the original ``type_name`` (``module.QualName``), ``message`` and the
    tool's ``traceback_text``; ``str()`` is ``"TypeName: message"``.
    """

    def __init__(self, type_name: str, message: str, traceback_text: str = "") -> None:
        self.type_name = type_name
        self.message = message
        self.traceback_text = traceback_text
        super().__init__(f"{type_name}: {message}")

    def __reduce__(self) -> Any:
        return (ToolError, (self.type_name, self.message, self.traceback_text))


class StepBudgetExceeded(AgentCodeError):
    """AR110: the agent computed too long between two suspensions."""

    code = "AR110"

    def __init__(
        self,
        function: str | None = None,
        filename: str | None = None,
        lineno: int | None = None,
        budget_seconds: float | None = None,
    ) -> None:
        self.function = function
        self.filename = filename
        self.lineno = lineno
        self.budget_seconds = budget_seconds
        where = f" in {function} ({filename}:{lineno})" if function else ""
        budget = f" for more than {budget_seconds:g} s" if budget_seconds is not None else ""
        super().__init__(
            f"AR110: Agent ran too many synchronous steps without yielding{where}: it computed{budget} "
            "between two awaits. Move heavy computation into a tool (sync tools run in a thread pool), "
            "or raise the limit with Runtime(step_budget_seconds=...) / agentrt run --step-budget."
        )

    def __reduce__(self) -> Any:
        return (StepBudgetExceeded, (self.function, self.filename, self.lineno, self.budget_seconds))


class AgentSpecError(AgentCodeError, LookupError):
    """``MODULE:ATTR`` (or ``FILE.py:ATTR``) does not name an agent.

    ``spec`` is the spec that failed and ``missing_module`` the module that could not be
    found (None when it was found but is not an agent, or failed to import).
    """

    spec: str | None = None
    missing_module: str | None = None


class RunNotFound(RunError, LookupError):
    """No run with this id in the store."""

    def __init__(self, run_id: str, store: str = "") -> None:
        self.run_id = run_id
        #: The store's location as the message names it ("" unknown): a command line names it again.
        self.store = store
        where = f" in {store}" if store else ""
        super().__init__(
            f"no run {run_id!r}{where}; list the runs with Runtime.runs() "
            "and check that the Runtime uses the store the run was started in"
        )

    def __reduce__(self) -> Any:
        return (RunNotFound, (self.run_id,))


class RunExists(RunError, ValueError):
    """A run with this id already exists."""


class NotWaiting(RunError):
    """A reply was sent to a run that is not waiting for one."""


class Cancelled(RunError):
    """The run was cancelled (``agentrt cancel ID``, ``Runtime.cancel``).

    Raised inside the agent at the await it is suspended on, so its ``finally`` blocks
    run (and may still await tools); if it propagates out of the agent, the run's
    status becomes ``cancelled``.  ``Runtime.wait`` raises it for a cancelled run.
    """

    def __init__(self, run_id: str, message: str | None = None) -> None:
        self.run_id = run_id
        super().__init__(message or f"run {run_id!r} was cancelled")

    def __reduce__(self) -> Any:
        return (Cancelled, (self.run_id, str(self)))


class DeadlineExceeded(Cancelled):
    """The run passed its deadline (``Runtime.start(..., deadline=...)``, ``agentrt submit --deadline``).

    A :class:`Cancelled`: raised inside the agent at the await it is suspended on (its ``finally``
    blocks run), and the run's status becomes ``cancelled``, with this error.
    """

    def __init__(self, run_id: str, deadline: float, message: str | None = None) -> None:
        self.deadline = deadline
        when = datetime.datetime.fromtimestamp(deadline, datetime.UTC).isoformat(timespec="seconds")
        super().__init__(
            run_id,
            message
            or f"run {run_id!r} passed its deadline ({when}) and was cancelled; give it more time with "
            "Runtime.start(..., deadline=SECONDS) or `agentrt submit --deadline SECONDS`",
        )

    def __reduce__(self) -> Any:
        return (DeadlineExceeded, (self.run_id, self.deadline, str(self)))


class LeaseHeld(RunError):
    """Another live process is driving this run."""

    def __init__(self, run_id: str, owner: str, expires_in_seconds: float) -> None:
        self.run_id = run_id
        self.owner = owner
        self.expires_in_seconds = expires_in_seconds
        super().__init__(
            f"run {run_id!r} is being driven by another process ({owner}); "
            f"its lease expires in {max(expires_in_seconds, 0):.1f} s unless renewed. "
            "Wait for that process to finish, or stop it and resume again."
        )

    def __reduce__(self) -> Any:
        return (LeaseHeld, (self.run_id, self.owner, self.expires_in_seconds))


class RunFailed(RunError):
    """The run failed and its original exception cannot be rebuilt here.

    ``error`` is the stored error record: ``type``, ``message``, ``code``, ``traceback``.
    """

    def __init__(self, run_id: str, error: dict[str, Any]) -> None:
        self.run_id = run_id
        self.error = error
        super().__init__(f"run {run_id!r} failed: {error.get('type')}: {error.get('message')}")

    def __reduce__(self) -> Any:
        return (RunFailed, (self.run_id, self.error))


class RunBlocked(RunError):
    """The run is ``blocked``: a checkpoint was refused, or the code loaded here cannot restore it.

    Not a failure: the run keeps its last good checkpoint.  ``finding`` is ``RunRecord.blocked``
    (``code``, ``message``, ``function``, ``lineno``, ``variable``).  ``Runtime.wait`` raises it.
    """

    def __init__(self, run_id: str, finding: dict[str, Any]) -> None:
        self.run_id = run_id
        self.finding = finding
        super().__init__(
            f"run {run_id!r} is blocked: {str(finding.get('message')).rstrip('.')}. It keeps its last "
            "good checkpoint; "
            "fix the code, then Runtime.resume(run_id) (agentrt resume) continues it, or "
            "Runtime.retry(run_id) (agentrt retry) restarts it from a checkpoint"
        )

    def __reduce__(self) -> Any:
        return (RunBlocked, (self.run_id, self.finding))


class CannotRetry(RunError):
    """``Runtime.retry`` was asked for a run it cannot restart (not failed nor blocked, a sub-run whose
    parent already has its outcome, a checkpoint that cannot be restored here).  ``run_id`` names it."""

    def __init__(self, run_id: str, message: str) -> None:
        self.run_id = run_id
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (CannotRetry, (self.run_id, str(self)))


# ------------------------------------------------------------------ stores


class StoreError(AgentrtError):
    """The store cannot be used (locked, corrupt, from a newer agentrt, unreachable)."""


class StoreLocked(StoreError):
    """Another process holds the store's write lock for longer than the busy timeout."""


class StoreCorrupt(StoreError):
    """The store file is not a valid agentrt store."""


class RowDamaged(StoreCorrupt):
    """A column of a run's row cannot be read (bad JSON, a wrong type): written by something other
    than agentrt.  ``run_id`` and ``column`` name it; the runtime blocks the run with this finding
    instead of driving it on defaults (or stopping its worker)."""

    def __init__(self, message: str, run_id: str, column: str) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.column = column


class StoreSchemaTooNew(StoreError):
    """The store was written by a newer agentrt (its schema version is higher than ours)."""


class StoreNotFound(StoreError):
    """No agentrt store where one was to be read: the path does not exist, or holds something else.

    Raised when a store is opened read-only (``open_store(..., read_only=True)``, the
    commands that only look); opening a store for writing creates it instead.
    """


class BlobKeyRejected(StoreError, ValueError):
    """A blob key (``AGENTRT_BLOB_KEY`` or a key file) that cannot be trusted: too short, a pattern,
    or a key file another user could have planted or can read (a symlink, not the user's own, not 0600).

    Raised instead of signing with the key, since a guessable key lets anyone forge a checkpoint.
    """


class LeaseLost(RunError):
    """This process no longer holds the lease of a run it was driving (another process took it over)."""


# ------------------------------------------------------------------ model calls


class ContractError(TeamError, ValueError):
    """A value broke a rule of one of the reference's wire contracts.

    ``key`` names the offending key (or ``None`` for the whole value) and ``rule`` the rule it
    broke, in the words of the reference's tables; ``where`` says which contract or file.
    """

    def __init__(self, where: str, key: str | None, rule: str) -> None:
        self.where = where
        self.key = key
        self.rule = rule
        at = f"{where}: key {key!r}" if key is not None else where
        super().__init__(f"{at}: {rule}")


class GateBlocked(ContractError):
    """The team decision gate refused to open (missing, stale or restructuring decision, or a
    stale or tampered decision trail)."""


class TeamRunNotFound(TeamError, LookupError):
    """No team run of this id in the project: ``.agentrt/runs/<run>/handoffs/`` is not there.

    A ``LookupError``, so the command line exits with its "not found" status (2), as for an
    unknown run in the store, not with 3 (store trouble)."""

    def __init__(self, run_id: str, project: str, looked_in: str) -> None:
        self.run_id = run_id
        self.project = project
        self.looked_in = looked_in
        super().__init__(
            f"no team run {run_id!r} in project {project}: {looked_in} is not there; check the run id "
            "(`agentrt runs` lists the runs) and --project (the directory the team was planned in)"
        )

    def __reduce__(self) -> Any:
        return (TeamRunNotFound, (self.run_id, self.project, self.looked_in))


class BusLockTimeout(TeamError, TimeoutError):
    """``Bus.publish`` could not take ``bus/.lock`` in time; nothing was published (fails closed)."""

    def __init__(self, lock_path: str, timeout_seconds: float) -> None:
        self.lock_path = lock_path
        self.timeout_seconds = timeout_seconds
        super().__init__(
            f"artifact bus: could not lock {lock_path} within {timeout_seconds:g}s, so nothing was "
            "published (the bus fails closed); another publisher holds it: retry, or raise "
            "Bus(run_dir, lock_timeout=...)"
        )


# ------------------------------------------------------------------ inspection


class CheckpointNotFound(InspectionError, LookupError):
    """The run has no checkpoint with that sequence number (never written, or no longer kept)."""


class ForkError(InspectionError, LookupError):
    """The run cannot be forked at that checkpoint (it is not kept, or the agent cannot be loaded)."""


# ------------------------------------------------------------------ adapters


class AdapterDiverged(AgentCodeError):
    """A framework run an adapter resumed from its journal reached a different call than the journal's.

    ``agentrt.adapters`` replays a framework's loop (pydantic-ai, the OpenAI Agents SDK) over the
    journaled answers of its model and tool calls after a crash; the loop must reach the same calls
    in the same order.  The message names the call number, what was journaled and what came now.
    """


# The classes (and the functions their pickles call) of _base and _models are agentrt.exceptions's:
# a pickle, a journal record and a message name them there, wherever their source lives.
for _defined_here in (
    AgentrtError,
    CheckpointError,
    AgentCodeError,
    RunError,
    ModelError,
    TeamError,
    InspectionError,
    MissingExecutor,
    ScriptExhausted,
    StructuredOutputError,
    DecisionExhausted,
    ModelCallBudgetExceeded,
    TokenBudgetExceeded,
    ModelProviderError,
    _rebuild_provider_error,
    ModelAnswerError,
    _rebuild_answer_error,
    ModelRefused,
    ModelOutputTruncated,
    ModelContentFiltered,
    ToolLoopExhausted,
    MaxTurnsExceeded,
):
    _defined_here.__module__ = __name__
del _defined_here
