"""Errors of model requests: what an agent meets at ``await task.llm...`` and what a host meets at bind time.

Defined in :mod:`agentrt.exceptions` with every other error; re-exported here.

Each carries the request's ``src`` (its site: the ``src=`` given, else the
calling function) so a message always says which request it is about.
"""

from agentrt.exceptions import DecisionExhausted as DecisionExhausted
from agentrt.exceptions import MissingExecutor as MissingExecutor
from agentrt.exceptions import ModelAnswerError as ModelAnswerError
from agentrt.exceptions import ModelCallBudgetExceeded as ModelCallBudgetExceeded
from agentrt.exceptions import ModelContentFiltered as ModelContentFiltered
from agentrt.exceptions import ModelOutputTruncated as ModelOutputTruncated
from agentrt.exceptions import ModelProviderError as ModelProviderError
from agentrt.exceptions import ModelRefused as ModelRefused
from agentrt.exceptions import ScriptExhausted as ScriptExhausted
from agentrt.exceptions import StructuredOutputError as StructuredOutputError
from agentrt.exceptions import TokenBudgetExceeded as TokenBudgetExceeded

__all__ = [
    "DecisionExhausted",
    "MissingExecutor",
    "ModelAnswerError",
    "ModelCallBudgetExceeded",
    "ModelContentFiltered",
    "ModelOutputTruncated",
    "ModelProviderError",
    "ModelRefused",
    "ScriptExhausted",
    "StructuredOutputError",
    "TokenBudgetExceeded",
]
