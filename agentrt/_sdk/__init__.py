"""The agent SDK: ``tool``, ``Task``, requests and schemas (re-exported by :mod:`agentrt`).

``agentrt._sdk.agent`` is the submodule; the ``agent(...)`` function is ``agentrt.agent``.
Everything is imported on first access (PEP 562, :mod:`agentrt._lazy`).
"""

from typing import TYPE_CHECKING

from agentrt._lazy import lazy_exports

if TYPE_CHECKING:
    from agentrt._sdk.agent import Agent as Agent
    from agentrt._sdk.agent import agent_spec as agent_spec
    from agentrt._sdk.agent import load_agent as load_agent
    from agentrt._sdk.requests import Ask as Ask
    from agentrt._sdk.requests import ChildRun as ChildRun
    from agentrt._sdk.requests import Fulfilled as Fulfilled
    from agentrt._sdk.requests import Gather as Gather
    from agentrt._sdk.requests import Progress as Progress
    from agentrt._sdk.requests import Rejected as Rejected
    from agentrt._sdk.requests import Sleep as Sleep
    from agentrt._sdk.requests import ToolCall as ToolCall
    from agentrt._sdk.requests import progress as progress
    from agentrt._sdk.task import Task as Task
    from agentrt._sdk.tools import Tool as Tool
    from agentrt._sdk.tools import omit as omit
    from agentrt._sdk.tools import pick as pick
    from agentrt._sdk.tools import tool as tool
    from agentrt._sdk.tools import ui_tools as ui_tools
    from agentrt.exceptions import AgentSpecError as AgentSpecError
    from agentrt.exceptions import LeaseHeld as LeaseHeld
    from agentrt.exceptions import NotWaiting as NotWaiting
    from agentrt.exceptions import RunExists as RunExists
    from agentrt.exceptions import RunFailed as RunFailed
    from agentrt.exceptions import RunNotFound as RunNotFound
    from agentrt.exceptions import SchemaError as SchemaError
    from agentrt.exceptions import StepBudgetExceeded as StepBudgetExceeded
    from agentrt.exceptions import ToolError as ToolError

# name -> the module that defines it, imported on first access (PEP 562; see agentrt._lazy)
_EXPORTS = {
    "Agent": "agentrt._sdk.agent",
    "agent_spec": "agentrt._sdk.agent",
    "load_agent": "agentrt._sdk.agent",
    "Ask": "agentrt._sdk.requests",
    "ChildRun": "agentrt._sdk.requests",
    "Fulfilled": "agentrt._sdk.requests",
    "Gather": "agentrt._sdk.requests",
    "Progress": "agentrt._sdk.requests",
    "Rejected": "agentrt._sdk.requests",
    "Sleep": "agentrt._sdk.requests",
    "ToolCall": "agentrt._sdk.requests",
    "progress": "agentrt._sdk.requests",
    "Task": "agentrt._sdk.task",
    "Tool": "agentrt._sdk.tools",
    "omit": "agentrt._sdk.tools",
    "pick": "agentrt._sdk.tools",
    "tool": "agentrt._sdk.tools",
    "ui_tools": "agentrt._sdk.tools",
    "AgentSpecError": "agentrt.exceptions",
    "LeaseHeld": "agentrt.exceptions",
    "NotWaiting": "agentrt.exceptions",
    "RunExists": "agentrt.exceptions",
    "RunFailed": "agentrt.exceptions",
    "RunNotFound": "agentrt.exceptions",
    "SchemaError": "agentrt.exceptions",
    "StepBudgetExceeded": "agentrt.exceptions",
    "ToolError": "agentrt.exceptions",
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
