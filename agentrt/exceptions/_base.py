"""The root of agentrt's errors and the families a caller catches (re-exported by agentrt.exceptions)."""

from __future__ import annotations

__all__ = [
    "AgentCodeError",
    "AgentrtError",
    "CheckpointError",
    "InspectionError",
    "ModelError",
    "RunError",
    "TeamError",
]


class AgentrtError(Exception):
    """Base class of every error raised by agentrt itself."""


# ------------------------------------------------------------------ the families a caller catches


class CheckpointError(AgentrtError):
    """A checkpoint could not be taken or a blob restored: what the agent holds, or the blob itself."""


class AgentCodeError(AgentrtError):
    """The agent's code or declarations do not fit what agentrt needs (schema, tool, budget, spec)."""


class RunError(AgentrtError):
    """A run is not in a state that allows what was asked (missing, exists, not waiting, leased...)."""


class ModelError(AgentrtError):
    """A model request could not be answered as declared (no executor, provider error, bad answer, budget)."""


class TeamError(AgentrtError):
    """A team's contract, gate, bus or run refused what was asked."""


class InspectionError(AgentrtError):
    """``agentrt dump / diff / fork`` could not find or build what was asked."""


# ------------------------------------------------------------------ checkpoints and blobs
