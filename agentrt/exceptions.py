"""The agentrt error tree.

Every error names what went wrong, where, and how to fix it.  All of them derive
from :class:`AgentrtError`, so a host can catch agentrt's own failures in one place
without swallowing the agent's exceptions, which always propagate unchanged.
"""

from __future__ import annotations

from typing import Any


class AgentrtError(Exception):
    """Base class of every error raised by agentrt itself."""


class CannotCrossAwait(AgentrtError):
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


class IncompatibleBlob(AgentrtError):
    """The blob was written by other code: Python minor, format version or code identity differ."""


class CorruptBlob(AgentrtError, ValueError):
    """The blob is truncated, tampered with or malformed.  Nothing in it was executed."""


class UnsupportedSuspension(AgentrtError):
    """The suspended chain contains something the checkpoint engine cannot capture or resume."""


class InternalInconsistency(AgentrtError):
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


class ForeignAwaitable(AgentrtError):
    """The agent awaited something that is neither an agentrt request nor a Python coroutine (AR102)."""
