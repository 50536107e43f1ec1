"""agentrt: durable plain ``async def`` agents, checkpointed at the frame level.

This module is the friendly surface; :mod:`agentrt.lowlevel` is the sharp one.
"""

from typing import TYPE_CHECKING

from agentrt._lazy import lazy_exports

if TYPE_CHECKING:
    from agentrt._codec import reopenable as reopenable
    from agentrt._codec import serializable as serializable
    from agentrt._runtime import Runtime as Runtime
    from agentrt._sdk.agent import Agent as Agent
    from agentrt._sdk.agent import agent as agent
    from agentrt._sdk.requests import Fulfilled as Fulfilled
    from agentrt._sdk.requests import Progress as Progress
    from agentrt._sdk.requests import Rejected as Rejected
    from agentrt._sdk.requests import ToolCall as ToolCall
    from agentrt._sdk.requests import progress as progress
    from agentrt._sdk.stateful import ToolResult as ToolResult
    from agentrt._sdk.stateful import ask as ask
    from agentrt._sdk.stateful import call_tools as call_tools
    from agentrt._sdk.stateful import output as output
    from agentrt._sdk.task import Task as Task
    from agentrt._sdk.tools import Tool as Tool
    from agentrt._sdk.tools import omit as omit
    from agentrt._sdk.tools import pick as pick
    from agentrt._sdk.tools import tool as tool
    from agentrt._sdk.tools import ui_tools as ui_tools
    from agentrt._upgrade import migrate as migrate
    from agentrt._version import __version__ as __version__
    from agentrt.exceptions import AgentCodeError as AgentCodeError
    from agentrt.exceptions import AgentrtError as AgentrtError
    from agentrt.exceptions import AgentSpecError as AgentSpecError
    from agentrt.exceptions import Cancelled as Cancelled
    from agentrt.exceptions import CannotCrossAwait as CannotCrossAwait
    from agentrt.exceptions import CannotRetry as CannotRetry
    from agentrt.exceptions import CheckpointError as CheckpointError
    from agentrt.exceptions import CorruptBlob as CorruptBlob
    from agentrt.exceptions import DeadlineExceeded as DeadlineExceeded
    from agentrt.exceptions import IncompatibleBlob as IncompatibleBlob
    from agentrt.exceptions import InternalInconsistency as InternalInconsistency
    from agentrt.exceptions import LeaseHeld as LeaseHeld
    from agentrt.exceptions import ModelError as ModelError
    from agentrt.exceptions import NotWaiting as NotWaiting
    from agentrt.exceptions import RunBlocked as RunBlocked
    from agentrt.exceptions import RunError as RunError
    from agentrt.exceptions import RunFailed as RunFailed
    from agentrt.exceptions import RunNotFound as RunNotFound
    from agentrt.exceptions import SchemaError as SchemaError
    from agentrt.exceptions import StepBudgetExceeded as StepBudgetExceeded
    from agentrt.exceptions import StoreError as StoreError
    from agentrt.exceptions import ToolError as ToolError
    from agentrt.exceptions import UnsupportedSuspension as UnsupportedSuspension
    from agentrt.llm.agent import llm_agent as llm_agent
    from agentrt.lowlevel import Done as Done
    from agentrt.lowlevel import Machine as Machine
    from agentrt.lowlevel import suspend as suspend
    from agentrt.stores import MemoryStore as MemoryStore
    from agentrt.stores import SqliteStore as SqliteStore
    from agentrt.stores import Store as Store

# name -> the module that defines it, imported on first access (PEP 562; see agentrt._lazy)
_EXPORTS = {
    "__version__": "agentrt._version",
    "serializable": "agentrt._codec",
    "reopenable": "agentrt._codec",
    "Runtime": "agentrt._runtime",
    "Agent": "agentrt._sdk.agent",
    "Fulfilled": "agentrt._sdk.requests",
    "Progress": "agentrt._sdk.requests",
    "Rejected": "agentrt._sdk.requests",
    "Task": "agentrt._sdk.task",
    "Tool": "agentrt._sdk.tools",
    "agent": "agentrt._sdk.agent",
    "omit": "agentrt._sdk.tools",
    "pick": "agentrt._sdk.tools",
    "progress": "agentrt._sdk.requests",
    "tool": "agentrt._sdk.tools",
    "ui_tools": "agentrt._sdk.tools",
    "ToolCall": "agentrt._sdk.requests",
    "ToolResult": "agentrt._sdk.stateful",
    "ask": "agentrt._sdk.stateful",
    "call_tools": "agentrt._sdk.stateful",
    "output": "agentrt._sdk.stateful",
    "migrate": "agentrt._upgrade",
    "AgentrtError": "agentrt.exceptions",
    "RunError": "agentrt.exceptions",
    "ModelError": "agentrt.exceptions",
    "CheckpointError": "agentrt.exceptions",
    "AgentCodeError": "agentrt.exceptions",
    "AgentSpecError": "agentrt.exceptions",
    "Cancelled": "agentrt.exceptions",
    "CannotCrossAwait": "agentrt.exceptions",
    "CannotRetry": "agentrt.exceptions",
    "CorruptBlob": "agentrt.exceptions",
    "DeadlineExceeded": "agentrt.exceptions",
    "IncompatibleBlob": "agentrt.exceptions",
    "InternalInconsistency": "agentrt.exceptions",
    "LeaseHeld": "agentrt.exceptions",
    "NotWaiting": "agentrt.exceptions",
    "RunBlocked": "agentrt.exceptions",
    "RunFailed": "agentrt.exceptions",
    "RunNotFound": "agentrt.exceptions",
    "SchemaError": "agentrt.exceptions",
    "StepBudgetExceeded": "agentrt.exceptions",
    "StoreError": "agentrt.exceptions",
    "ToolError": "agentrt.exceptions",
    "UnsupportedSuspension": "agentrt.exceptions",
    "llm_agent": "agentrt.llm.agent",
    "Done": "agentrt.lowlevel",
    "Machine": "agentrt.lowlevel",
    "suspend": "agentrt.lowlevel",
    "MemoryStore": "agentrt.stores",
    "SqliteStore": "agentrt.stores",
    "Store": "agentrt.stores",
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "Agent",
    "AgentCodeError",
    "AgentSpecError",
    "AgentrtError",
    "Cancelled",
    "CannotCrossAwait",
    "CannotRetry",
    "CheckpointError",
    "CorruptBlob",
    "DeadlineExceeded",
    "Done",
    "Fulfilled",
    "IncompatibleBlob",
    "InternalInconsistency",
    "LeaseHeld",
    "Machine",
    "MemoryStore",
    "ModelError",
    "NotWaiting",
    "Progress",
    "Rejected",
    "RunBlocked",
    "RunError",
    "RunFailed",
    "RunNotFound",
    "Runtime",
    "SchemaError",
    "SqliteStore",
    "StepBudgetExceeded",
    "Store",
    "StoreError",
    "Task",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "UnsupportedSuspension",
    "agent",
    "ask",
    "call_tools",
    "llm_agent",
    "migrate",
    "omit",
    "output",
    "pick",
    "progress",
    "reopenable",
    "serializable",
    "suspend",
    "tool",
    "ui_tools",
]
