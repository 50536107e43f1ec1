"""agentrt: durable plain ``async def`` agents, checkpointed at the frame level.

This module is the friendly surface; :mod:`agentrt.lowlevel` is the sharp one.
"""

from agentrt._codec import serializable as serializable
from agentrt._runtime import Runtime as Runtime
from agentrt._sdk import Agent as Agent
from agentrt._sdk import AgentSpecError as AgentSpecError
from agentrt._sdk import Cancelled as Cancelled
from agentrt._sdk import Fulfilled as Fulfilled
from agentrt._sdk import LeaseHeld as LeaseHeld
from agentrt._sdk import NotWaiting as NotWaiting
from agentrt._sdk import Progress as Progress
from agentrt._sdk import Rejected as Rejected
from agentrt._sdk import RunFailed as RunFailed
from agentrt._sdk import RunNotFound as RunNotFound
from agentrt._sdk import SchemaError as SchemaError
from agentrt._sdk import StepBudgetExceeded as StepBudgetExceeded
from agentrt._sdk import Task as Task
from agentrt._sdk import Tool as Tool
from agentrt._sdk import ToolError as ToolError
from agentrt._sdk import agent as agent
from agentrt._sdk import omit as omit
from agentrt._sdk import pick as pick
from agentrt._sdk import progress as progress
from agentrt._sdk import tool as tool
from agentrt._sdk import ui_tools as ui_tools
from agentrt._sdk.requests import ToolCall as ToolCall
from agentrt._sdk.stateful import ToolResult as ToolResult
from agentrt._sdk.stateful import ask as ask
from agentrt._sdk.stateful import call_tools as call_tools
from agentrt._sdk.stateful import output as output
from agentrt._upgrade import migrate as migrate
from agentrt.exceptions import AgentrtError as AgentrtError
from agentrt.exceptions import CannotCrossAwait as CannotCrossAwait
from agentrt.exceptions import CorruptBlob as CorruptBlob
from agentrt.exceptions import IncompatibleBlob as IncompatibleBlob
from agentrt.exceptions import UnsupportedSuspension as UnsupportedSuspension
from agentrt.llm.agent import llm_agent as llm_agent
from agentrt.lowlevel import Done as Done
from agentrt.lowlevel import Machine as Machine
from agentrt.lowlevel import suspend as suspend
from agentrt.stores import MemoryStore as MemoryStore
from agentrt.stores import SqliteStore as SqliteStore
from agentrt.stores import Store as Store
from agentrt.stores import StoreError as StoreError

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentSpecError",
    "AgentrtError",
    "Cancelled",
    "CannotCrossAwait",
    "CorruptBlob",
    "Done",
    "Fulfilled",
    "IncompatibleBlob",
    "LeaseHeld",
    "Machine",
    "MemoryStore",
    "NotWaiting",
    "Progress",
    "Rejected",
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
    "serializable",
    "suspend",
    "tool",
    "ui_tools",
]
