"""``task.llm`` model requests: moved to :mod:`agentrt._sdk.llm` (the agent SDK), re-exported here.

Kept so ``from agentrt.llm.requests import ...`` (and blobs that name these
classes here) keep working.
"""

from agentrt._sdk.llm import DEFAULT_MAX_ATTEMPTS as DEFAULT_MAX_ATTEMPTS
from agentrt._sdk.llm import LLM as LLM
from agentrt._sdk.llm import ModelCall as ModelCall
from agentrt._sdk.llm import TextResult as TextResult
from agentrt._sdk.llm import event_type_name as event_type_name

__all__ = ["LLM", "ModelCall", "TextResult", "event_type_name"]
