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
    from agentrt._sdk.llm import LLM as LLM
    from agentrt._sdk.llm import ModelCall as ModelCall
    from agentrt._sdk.llm import TextResult as TextResult
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
    from agentrt.exceptions import ToolLoopExhausted as ToolLoopExhausted
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
    from agentrt.llm._host import Outcome as Outcome
    from agentrt.llm._host import build_request as build_request
    from agentrt.llm._host import execute as execute_request
    from agentrt.llm._needs import missing as unserved_requests
    from agentrt.llm.budget import with_call_budget as with_call_budget
    from agentrt.llm.budget import with_token_budget as with_token_budget
    from agentrt.llm.loop import generate_with_tools as generate_with_tools
    from agentrt.llm.scripted import Scripted as Scripted
    from agentrt.llm.scripted import ScriptedExecutors as ScriptedExecutors

# name -> the module that defines it, imported on first access (PEP 562; see agentrt._lazy)
_EXPORTS = {
    "Outcome": "agentrt.llm._host",
    "build_request": "agentrt.llm._host",
    "execute_request": "agentrt.llm._host:execute",
    "unserved_requests": "agentrt.llm._needs:missing",
    "LLM": "agentrt._sdk.llm",
    "ModelCall": "agentrt._sdk.llm",
    "TextResult": "agentrt._sdk.llm",
    "with_call_budget": "agentrt.llm.budget",
    "with_token_budget": "agentrt.llm.budget",
    "ToolLoopExhausted": "agentrt.exceptions",
    "generate_with_tools": "agentrt.llm.loop",
    "Scripted": "agentrt.llm.scripted",
    "ScriptedExecutors": "agentrt.llm.scripted",
    "DecisionExhausted": "agentrt.exceptions",
    "MissingExecutor": "agentrt.exceptions",
    "ModelAnswerError": "agentrt.exceptions",
    "ModelCallBudgetExceeded": "agentrt.exceptions",
    "ModelContentFiltered": "agentrt.exceptions",
    "ModelOutputTruncated": "agentrt.exceptions",
    "ModelProviderError": "agentrt.exceptions",
    "ModelRefused": "agentrt.exceptions",
    "ScriptExhausted": "agentrt.exceptions",
    "StructuredOutputError": "agentrt.exceptions",
    "TokenBudgetExceeded": "agentrt.exceptions",
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
    "Outcome",
    "ScriptExhausted",
    "Scripted",
    "ScriptedExecutors",
    "StructuredOutputError",
    "TextResult",
    "TokenBudgetExceeded",
    "ToolLoopExhausted",
    "Usage",
    "as_executors",
    "build_request",
    "envelope_schema",
    "execute_request",
    "feedback_messages",
    "generate_with_tools",
    "render_decision_attempts",
    "unserved_requests",
    "with_call_budget",
    "with_token_budget",
]
