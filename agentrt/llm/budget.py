"""Budgets by wrapping executors: a token cap per run, a call cap per request site.

The runtime's own backstop is ``max_model_calls``; finer budgets wrap the
executors, as the executor contract suggests.  The token cap reads
``request.run_usage`` -- the run's usage as journaled in the store -- so it holds
across restarts and workers; the per-site call count is per process.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any  # Any: anything as_executors accepts; executors' results

from agentrt.exceptions import TokenBudgetExceeded
from agentrt.llm._contract import KINDS, ExecutorRequest, Executors, as_executors

__all__ = ["with_call_budget", "with_token_budget"]


def with_token_budget(executors: Any, max_total_tokens: int) -> Executors:
    """Refuse (with :class:`TokenBudgetExceeded`, raised at the agent's await) any request of a run that has
    already used ``max_total_tokens`` tokens.  Sub-agents are separate runs with their own count."""
    base = as_executors(executors)

    def check(request: ExecutorRequest) -> None:
        used = request.run_usage.total_tokens
        if used >= max_total_tokens:
            raise TokenBudgetExceeded(request.run_id, max_total_tokens, used, request.src)

    return _wrap(base, check)


def with_call_budget(executors: Any, max_calls_per_src: int) -> Executors:
    """Refuse the ``max_calls_per_src + 1``-th call of one request site (``src``) in this process."""
    base = as_executors(executors)
    calls: Counter[str] = Counter()
    lock = threading.Lock()

    def check(request: ExecutorRequest) -> None:
        with lock:
            calls[request.src] += 1
            n = calls[request.src]
        if n > max_calls_per_src:
            raise RuntimeError(
                f"budget exceeded for request site {request.src!r}: call {n} > {max_calls_per_src} "
                "(with_call_budget)"
            )

    return _wrap(base, check)


def _wrap(base: Executors, check: Callable[[ExecutorRequest], None]) -> Executors:
    """``base`` with ``check(request)`` run before each of its executors; what it raises reaches the agent."""

    def guarded(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def call(request: ExecutorRequest, *rest: Any) -> Any:  # rest: stream_text's on_chunk
            check(request)
            return await fn(request, *rest)

        return call

    return Executors(**{kind: guarded(fn) for kind in KINDS if (fn := getattr(base, kind)) is not None})
