"""Model requests and the executors that answer them.

Agents ask (``await task.llm.generate_text(...)``, ``stream_text``, ``decide``);
hosts answer with :class:`Executors` bound to the runtime
(``Runtime(executors=...)``).  Shipped executors: :class:`ScriptedExecutors` for
tests, and ``agentrt.llm.openai_compat.OpenAICompatExecutors`` for any
OpenAI-compatible Chat Completions endpoint (needs ``agentrt[openai]``).
"""

from typing import TYPE_CHECKING

from agentrt._lazy import lazy_exports

if TYPE_CHECKING:
    from agentrt.llm._contract import Attempt as Attempt
    from agentrt.llm._contract import DecideResult as DecideResult
    from agentrt.llm._contract import EventSpec as EventSpec
    from agentrt.llm._contract import ExecutorRequest as ExecutorRequest
    from agentrt.llm._contract import Executors as Executors
    from agentrt.llm._contract import GenerateResult as GenerateResult
    from agentrt.llm._contract import ModelToolCall as ModelToolCall
    from agentrt.llm._contract import Usage as Usage
    from agentrt.llm._contract import as_executors as as_executors
    from agentrt.llm._contract import envelope_schema as envelope_schema
    from agentrt.llm._contract import feedback_messages as feedback_messages
    from agentrt.llm._contract import render_decision_attempts as render_decision_attempts
    from agentrt.llm.budget import with_call_budget as with_call_budget
    from agentrt.llm.budget import with_token_budget as with_token_budget
    from agentrt.llm.errors import DecisionExhausted as DecisionExhausted
    from agentrt.llm.errors import MissingExecutor as MissingExecutor
    from agentrt.llm.errors import ModelAnswerError as ModelAnswerError
    from agentrt.llm.errors import ModelCallBudgetExceeded as ModelCallBudgetExceeded
    from agentrt.llm.errors import ModelContentFiltered as ModelContentFiltered
    from agentrt.llm.errors import ModelOutputTruncated as ModelOutputTruncated
    from agentrt.llm.errors import ModelProviderError as ModelProviderError
    from agentrt.llm.errors import ModelRefused as ModelRefused
    from agentrt.llm.errors import ScriptExhausted as ScriptExhausted
    from agentrt.llm.errors import StructuredOutputError as StructuredOutputError
    from agentrt.llm.errors import TokenBudgetExceeded as TokenBudgetExceeded
    from agentrt.llm.loop import ToolLoopExhausted as ToolLoopExhausted
    from agentrt.llm.loop import generate_with_tools as generate_with_tools
    from agentrt.llm.requests import LLM as LLM
    from agentrt.llm.requests import ModelCall as ModelCall
    from agentrt.llm.requests import TextResult as TextResult
    from agentrt.llm.scripted import Scripted as Scripted
    from agentrt.llm.scripted import ScriptedExecutors as ScriptedExecutors

# name -> the module that defines it, imported on first access (PEP 562; see agentrt._lazy)
_EXPORTS = {
    "Attempt": "agentrt.llm._contract",
    "DecideResult": "agentrt.llm._contract",
    "EventSpec": "agentrt.llm._contract",
    "ExecutorRequest": "agentrt.llm._contract",
    "Executors": "agentrt.llm._contract",
    "GenerateResult": "agentrt.llm._contract",
    "ModelToolCall": "agentrt.llm._contract",
    "Usage": "agentrt.llm._contract",
    "as_executors": "agentrt.llm._contract",
    "envelope_schema": "agentrt.llm._contract",
    "feedback_messages": "agentrt.llm._contract",
    "render_decision_attempts": "agentrt.llm._contract",
    "DecisionExhausted": "agentrt.llm.errors",
    "MissingExecutor": "agentrt.llm.errors",
    "ModelAnswerError": "agentrt.llm.errors",
    "ModelCallBudgetExceeded": "agentrt.llm.errors",
    "ModelContentFiltered": "agentrt.llm.errors",
    "ModelOutputTruncated": "agentrt.llm.errors",
    "ModelProviderError": "agentrt.llm.errors",
    "ModelRefused": "agentrt.llm.errors",
    "ScriptExhausted": "agentrt.llm.errors",
    "StructuredOutputError": "agentrt.llm.errors",
    "TokenBudgetExceeded": "agentrt.llm.errors",
    "with_call_budget": "agentrt.llm.budget",
    "with_token_budget": "agentrt.llm.budget",
    "ToolLoopExhausted": "agentrt.llm.loop",
    "generate_with_tools": "agentrt.llm.loop",
    "LLM": "agentrt.llm.requests",
    "ModelCall": "agentrt.llm.requests",
    "TextResult": "agentrt.llm.requests",
    "Scripted": "agentrt.llm.scripted",
    "ScriptedExecutors": "agentrt.llm.scripted",
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "LLM",
    "Attempt",
    "DecideResult",
    "DecisionExhausted",
    "EventSpec",
    "ExecutorRequest",
    "Executors",
    "GenerateResult",
    "MissingExecutor",
    "ModelAnswerError",
    "ModelCall",
    "ModelCallBudgetExceeded",
    "ModelContentFiltered",
    "ModelOutputTruncated",
    "ModelProviderError",
    "ModelRefused",
    "ModelToolCall",
    "ScriptExhausted",
    "Scripted",
    "ScriptedExecutors",
    "StructuredOutputError",
    "TextResult",
    "TokenBudgetExceeded",
    "ToolLoopExhausted",
    "Usage",
    "as_executors",
    "envelope_schema",
    "feedback_messages",
    "generate_with_tools",
    "render_decision_attempts",
    "with_call_budget",
    "with_token_budget",
]
