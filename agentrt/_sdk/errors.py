"""Errors of the agent SDK and the runtime that a user meets (all :class:`AgentrtError`)."""

from __future__ import annotations

from typing import Any

from agentrt.exceptions import AgentrtError

__all__ = [
    "AgentSpecError",
    "Cancelled",
    "LeaseHeld",
    "NotWaiting",
    "RunExists",
    "RunFailed",
    "RunNotFound",
    "SchemaError",
    "StepBudgetExceeded",
    "ToolError",
]


class SchemaError(AgentrtError, ValueError):
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


class ToolError(AgentrtError):
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


class StepBudgetExceeded(AgentrtError):
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


class AgentSpecError(AgentrtError, LookupError):
    """``MODULE:ATTR`` (or ``FILE.py:ATTR``) does not name an agent."""


class RunNotFound(AgentrtError, LookupError):
    """No run with this id in the store."""

    def __init__(self, run_id: str, store: str = "") -> None:
        self.run_id = run_id
        where = f" in {store}" if store else ""
        super().__init__(
            f"no run {run_id!r}{where}; list the runs with Runtime.runs() "
            "and check that the Runtime uses the store the run was started in"
        )

    def __reduce__(self) -> Any:
        return (RunNotFound, (self.run_id,))


class RunExists(AgentrtError, ValueError):
    """A run with this id already exists."""


class NotWaiting(AgentrtError):
    """A reply was sent to a run that is not waiting for one."""


class Cancelled(AgentrtError):
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


class LeaseHeld(AgentrtError):
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


class RunFailed(AgentrtError):
    """The run failed and its original exception cannot be rebuilt here.

    ``error`` is the stored error record: ``type``, ``message``, ``code``, ``traceback``.
    """

    def __init__(self, run_id: str, error: dict[str, Any]) -> None:
        self.run_id = run_id
        self.error = error
        super().__init__(f"run {run_id!r} failed: {error.get('type')}: {error.get('message')}")

    def __reduce__(self) -> Any:
        return (RunFailed, (self.run_id, self.error))
