"""Errors of model requests: what an agent meets at ``await task.llm...`` and what a host meets at bind
time (re-exported by :mod:`agentrt.exceptions`, where they are defined as far as pickle is concerned)."""

from __future__ import annotations

from typing import Any  # Any: errors carry user values and pickle themselves

from agentrt.exceptions._base import ModelError

__all__ = [
    "DecisionExhausted",
    "MaxTurnsExceeded",
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
    "ToolLoopExhausted",
]


class MissingExecutor(ModelError):
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
                f"{method} executor; pass Runtime(executors=Executors({method}=...))"
            )
        )

    def __reduce__(self) -> Any:
        return (MissingExecutor, (self.agent, self.method, self.where, str(self)))


class ScriptExhausted(ModelError):
    """A scripted executor has no answer left for a request (test scripts are finite on purpose)."""

    def __init__(self, src: str, method: str, message: str) -> None:
        self.src = src
        self.method = method
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (ScriptExhausted, (self.src, self.method, str(self)))


class StructuredOutputError(ModelError, ValueError):
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


class DecisionExhausted(ModelError):
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


class ModelCallBudgetExceeded(ModelError):
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


class TokenBudgetExceeded(ModelError):
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


class ModelProviderError(ModelError):
    """A model provider answered with an error that retries did not cure (or that retrying cannot cure).

    ``status`` is the HTTP status (None for a transport failure, or for an error event inside a
    stream that named no status), ``body`` the start of the provider's answer, ``attempts`` how
    many tries were made.  When the provider sent an OpenAI-style error object
    (``{"error": {"message", "type", "code"}}``), ``provider_message``, ``error_type`` and
    ``error_code`` carry it and the message quotes ``error.message`` rather than the raw body.
    """

    def __init__(
        self,
        status: int | None,
        body: str,
        attempts: int,
        url: str,
        message: str = "",
        *,
        provider_message: str | None = None,
        error_type: str | None = None,
        error_code: str | int | None = None,
    ) -> None:
        self.status = status
        self.body = body
        self.attempts = attempts
        self.url = url
        self.provider_message = provider_message
        self.error_type = error_type
        self.error_code = error_code
        if not message:
            what = f"HTTP {status}" if status is not None else "no response"
            if provider_message is not None:
                tags = ", ".join(
                    f"{k} {v!r}" for k, v in (("type", error_type), ("code", error_code)) if v is not None
                )
                detail = provider_message[:1000] + (f" ({tags})" if tags else "")
            else:
                detail = body[:500]
            message = f"model provider at {url}: {what} after {attempts} attempt(s): {detail}"
        super().__init__(message)

    #: A failed run's error record shows the agent's frames only (see ``record_fields``).
    hide_internal_frames = True

    def record_fields(self) -> dict[str, Any]:
        """What a failed run's error record adds: the provider's status and error object."""
        return {
            "provider": {
                "status": self.status,
                "message": self.provider_message,
                "type": self.error_type,
                "code": self.error_code,
                "attempts": self.attempts,
            }
        }

    def __reduce__(self) -> Any:
        return (
            _rebuild_provider_error,
            (
                self.status,
                self.body,
                self.attempts,
                self.url,
                str(self),
                self.provider_message,
                self.error_type,
                self.error_code,
            ),
        )


def _rebuild_provider_error(
    status: int | None,
    body: str,
    attempts: int,
    url: str,
    message: str,
    provider_message: str | None = None,
    error_type: str | None = None,
    error_code: str | int | None = None,
) -> ModelProviderError:
    return ModelProviderError(
        status,
        body,
        attempts,
        url,
        message,
        provider_message=provider_message,
        error_type=error_type,
        error_code=error_code,
    )


class ModelAnswerError(ModelError):
    """The model answered, but the answer cannot stand as a result: refused, cut off, or filtered.

    Not retried (asking the same again gets the same answer) and not journaled as a result:
    the agent meets it at its ``await`` and may catch it.  ``src`` names the request,
    ``finish_reason`` is what the provider said, ``text`` what the model produced (for a
    refusal, the refusal itself), ``usage`` what the server reported for the answer (the runtime
    counts it in the run's usage: a refused answer is still paid for), or None.
    """

    finish_reason_default = ""
    hide_internal_frames = True

    def record_fields(self) -> dict[str, Any]:
        return {"provider": {"finish_reason": self.finish_reason, "text": self.text[:2000]}}

    def __init__(
        self,
        src: str,
        text: str,
        finish_reason: str | None = None,
        message: str = "",
        *,
        usage: Any = None,  # an agentrt.llm.Usage: not imported, this module imports nothing of agentrt
    ) -> None:
        self.src = src
        self.text = text
        self.finish_reason = finish_reason if finish_reason is not None else self.finish_reason_default
        self.usage = usage
        super().__init__(message or self._message())

    def _message(self) -> str:
        return f"request {self.src!r}: the model's answer ended with finish_reason={self.finish_reason!r}"

    def __reduce__(self) -> Any:
        return (
            _rebuild_answer_error,
            (type(self), self.src, self.text, self.finish_reason, str(self), self.usage),
        )


def _rebuild_answer_error(
    cls: type[ModelAnswerError], src: str, text: str, finish_reason: str, message: str, usage: Any
) -> ModelAnswerError:
    """Unpickle a :class:`ModelAnswerError` (``usage`` is keyword-only)."""
    return cls(src, text, finish_reason, message, usage=usage)


class ModelRefused(ModelAnswerError):
    """The model refused the request (``message.refusal``); ``text`` is the refusal, verbatim."""

    finish_reason_default = "refusal"

    def _message(self) -> str:
        return (
            f"request {self.src!r}: the model refused: {self.text[:500]!r}. Rephrase the request, or catch "
            "ModelRefused to take another path"
        )


class ModelOutputTruncated(ModelAnswerError):
    """The answer stopped at the token limit (``finish_reason="length"``); ``text`` is the partial answer.

    Raised for structured requests and tool calls always (a cut answer cannot be valid), and for
    text requests unless the executor was built with ``on_length="return"``.
    """

    finish_reason_default = "length"

    def _message(self) -> str:
        return (
            f"request {self.src!r}: the answer was cut off at the token limit (finish_reason='length') after "
            f"{len(self.text)} character(s); raise metadata={{'max_tokens': N}}, ask for a shorter answer, "
            "or build the executor with on_length='return' to accept cut-off text"
        )


class ModelContentFiltered(ModelAnswerError):
    """The provider's content filter stopped the answer (``finish_reason="content_filter"``)."""

    finish_reason_default = "content_filter"

    def _message(self) -> str:
        return (
            f"request {self.src!r}: the provider's content filter stopped the answer "
            f"(finish_reason='content_filter') after {len(self.text)} character(s); rephrase the request"
        )


class ToolLoopExhausted(ModelError):
    """The model still asked for tools after ``max_steps`` model calls; ``messages`` is the conversation."""

    def __init__(self, src: str, max_steps: int, messages: list[dict[str, Any]], message: str = "") -> None:
        self.src = src
        self.max_steps = max_steps
        self.messages = messages
        super().__init__(
            message
            or (
                f"generate_with_tools {src!r}: the model still asked for tools after {max_steps} model "
                "call(s); raise max_steps=, or narrow the tools it is offered"
            )
        )

    def __reduce__(self) -> Any:
        return (ToolLoopExhausted, (self.src, self.max_steps, self.messages, str(self)))


class MaxTurnsExceeded(ModelError):
    """An ``llm_agent`` used ``max_turns`` model turns without finishing; ``messages`` is the conversation."""

    cause = "max-turns"

    def __init__(self, agent: str, max_turns: int, messages: list[dict[str, Any]], message: str = "") -> None:
        self.agent = agent
        self.max_turns = max_turns
        self.messages = messages
        super().__init__(
            message
            or (
                f"llm_agent {agent!r} did not finish in max_turns={max_turns} model turn(s) "
                "(cause: max-turns); raise llm_agent(..., max_turns=N), narrow the tools, or make the "
                "system prompt say when to stop"
            )
        )

    def __reduce__(self) -> Any:
        return (MaxTurnsExceeded, (self.agent, self.max_turns, self.messages, str(self)))


# ------------------------------------------------------------------ teams
