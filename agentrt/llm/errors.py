"""Errors of model requests: what an agent meets at ``await task.llm...`` and what a host meets at bind time.

Each carries the request's ``src`` (its site: the ``src=`` given, else the
calling function) so a message always says which request it is about.
"""

from __future__ import annotations

from typing import Any

from agentrt.exceptions import AgentrtError

__all__ = [
    "DecisionExhausted",
    "MissingExecutor",
    "ModelCallBudgetExceeded",
    "ModelProviderError",
    "ScriptExhausted",
    "StructuredOutputError",
    "TokenBudgetExceeded",
]


class MissingExecutor(AgentrtError):
    """An agent makes a model request of a kind (``generate_text``, ``stream_text``, ``decide``) that the
    runtime has no executor for.

    Raised by ``Runtime.start`` / ``resume`` before the run starts when the need is
    visible in the agent's code (``agent``, ``method``, ``where`` name it), and at the
    ``await`` when it was not (a request made through an indirection).
    """

    def __init__(self, agent: str, method: str, where: str, message: str = "") -> None:
        self.agent = agent
        self.method = method
        self.where = where
        super().__init__(
            message
            or (
                f"agent {agent!r} calls task.llm.{method}(...) at {where}, but this runtime has no "
                f"{method} executor; pass Runtime(executors=Executors({method}=...)) "
                f"(or --executors MODULE:ATTR on the command line)"
            )
        )

    def __reduce__(self) -> Any:
        return (MissingExecutor, (self.agent, self.method, self.where, str(self)))


class ScriptExhausted(AgentrtError):
    """A scripted executor has no answer left for a request (test scripts are finite on purpose)."""

    def __init__(self, src: str, method: str, message: str) -> None:
        self.src = src
        self.method = method
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (ScriptExhausted, (self.src, self.method, str(self)))


class StructuredOutputError(AgentrtError, ValueError):
    """The model's answers did not match the declared ``output=`` class in ``attempts`` tries.

    ``attempts`` lists ``{"output": <what came back>, "error": <why it was refused>}``.
    """

    def __init__(self, src: str, output_type: str, attempts: list[dict[str, Any]], message: str = "") -> None:
        self.src = src
        self.output_type = output_type
        self.attempts = attempts
        last = attempts[-1]["error"] if attempts else "no answer"
        super().__init__(
            message
            or (
                f"request {src!r}: the model's answer did not match {output_type} after "
                f"{len(attempts)} attempt(s); last problem: {last}. Simplify the output class, "
                "raise max_attempts=, or use a stronger model"
            )
        )

    def __reduce__(self) -> Any:
        return (StructuredOutputError, (self.src, self.output_type, self.attempts, str(self)))


class DecisionExhausted(AgentrtError):
    """``task.llm.decide`` got no valid event in ``max_attempts`` tries.

    ``attempts`` lists ``{"output": <what the model chose>, "error": <why it was refused>}``;
    ``events`` names the allowed event types.
    """

    def __init__(
        self, src: str, events: list[str], attempts: list[dict[str, Any]], message: str = ""
    ) -> None:
        self.src = src
        self.events = events
        self.attempts = attempts
        last = attempts[-1]["error"] if attempts else "no answer"
        super().__init__(
            message
            or (
                f"decision {src!r}: no valid choice among {', '.join(events)} after {len(attempts)} "
                f"attempt(s); last problem: {last}. Catch DecisionExhausted to fall back, or raise "
                "max_attempts="
            )
        )

    def __reduce__(self) -> Any:
        return (DecisionExhausted, (self.src, self.events, self.attempts, str(self)))


class ModelCallBudgetExceeded(AgentrtError):
    """The run asked for more model calls than ``max_model_calls`` allows; the run fails.

    ``cause`` is ``"max-model-calls"`` (also in the failed run's error record).
    """

    cause = "max-model-calls"

    def __init__(self, run_id: str, limit: int, src: str, message: str = "") -> None:
        self.run_id = run_id
        self.limit = limit
        self.src = src
        super().__init__(
            message
            or (
                f"run {run_id!r} reached max_model_calls={limit} at request {src!r} "
                "(cause: max-model-calls); "
                "an agent loop that never ends is the usual reason. Raise the limit with "
                "Runtime(max_model_calls=N) or agent(..., max_model_calls=N) if the run really needs more"
            )
        )

    def __reduce__(self) -> Any:
        return (ModelCallBudgetExceeded, (self.run_id, self.limit, self.src, str(self)))


class TokenBudgetExceeded(AgentrtError):
    """A ``with_token_budget`` wrapper refused a request: the run has used ``used`` of ``limit`` tokens."""

    cause = "max-tokens"

    def __init__(self, run_id: str, limit: int, used: int, src: str, message: str = "") -> None:
        self.run_id = run_id
        self.limit = limit
        self.used = used
        self.src = src
        super().__init__(
            message
            or (
                f"run {run_id!r} has used {used} tokens of its budget of {limit}; request {src!r} "
                "was not sent (cause: max-tokens). Raise the budget of with_token_budget(...)"
            )
        )

    def __reduce__(self) -> Any:
        return (TokenBudgetExceeded, (self.run_id, self.limit, self.used, self.src, str(self)))


class ModelProviderError(AgentrtError):
    """A model provider answered with an error that retries did not cure (or that retrying cannot cure).

    ``status`` is the HTTP status (None for a transport failure), ``body`` the
    start of the provider's answer, ``attempts`` how many tries were made.
    """

    def __init__(self, status: int | None, body: str, attempts: int, url: str, message: str = "") -> None:
        self.status = status
        self.body = body
        self.attempts = attempts
        self.url = url
        what = f"HTTP {status}" if status is not None else "no response"
        super().__init__(
            message or f"model provider at {url}: {what} after {attempts} attempt(s): {body[:500]}"
        )

    def __reduce__(self) -> Any:
        return (ModelProviderError, (self.status, self.body, self.attempts, self.url, str(self)))
