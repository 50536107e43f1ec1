"""Model requests and the executors that answer them.

Agents ask (``await task.llm.generate_text(...)``, ``stream_text``, ``decide``);
hosts answer with :class:`Executors` bound to the runtime
(``Runtime(executors=...)``).  Shipped executors: :class:`ScriptedExecutors` for
tests, and ``agentrt.llm.openai_compat.OpenAICompatExecutors`` for any
OpenAI-compatible Chat Completions endpoint (needs ``agentrt[openai]``).
"""

from agentrt.llm._contract import (
    Attempt,
    DecideResult,
    EventSpec,
    ExecutorRequest,
    Executors,
    GenerateResult,
    ModelToolCall,
    Usage,
    as_executors,
    envelope_schema,
    feedback_messages,
    render_decision_attempts,
)
from agentrt.llm.budget import with_call_budget, with_token_budget
from agentrt.llm.errors import (
    DecisionExhausted,
    MissingExecutor,
    ModelAnswerError,
    ModelCallBudgetExceeded,
    ModelContentFiltered,
    ModelOutputTruncated,
    ModelProviderError,
    ModelRefused,
    ScriptExhausted,
    StructuredOutputError,
    TokenBudgetExceeded,
)
from agentrt.llm.loop import ToolLoopExhausted, generate_with_tools
from agentrt.llm.requests import LLM, ModelCall, TextResult
from agentrt.llm.scripted import Scripted, ScriptedExecutors

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
