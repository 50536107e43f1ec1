"""Errors of the agent SDK and the runtime that a user meets; defined in :mod:`agentrt.exceptions`.

Kept so ``from agentrt._sdk.errors import ...`` (and blobs that name these
classes here) keep working.
"""

from agentrt.exceptions import AgentSpecError as AgentSpecError
from agentrt.exceptions import Cancelled as Cancelled
from agentrt.exceptions import LeaseHeld as LeaseHeld
from agentrt.exceptions import NotWaiting as NotWaiting
from agentrt.exceptions import RunExists as RunExists
from agentrt.exceptions import RunFailed as RunFailed
from agentrt.exceptions import RunNotFound as RunNotFound
from agentrt.exceptions import SchemaError as SchemaError
from agentrt.exceptions import StepBudgetExceeded as StepBudgetExceeded
from agentrt.exceptions import ToolError as ToolError

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
