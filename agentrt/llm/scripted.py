"""``ScriptedExecutors``: deterministic executors for tests -- no model, no network.

Answers are queued per request site (``src``: the ``src=`` the agent gave, else
its function's qualname), first in, first out; the ``"*"`` queue answers any
site whose own queue is empty.  A dry queue raises :class:`ScriptExhausted`
naming the request, so a test that asks more than it scripted fails loudly.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any  # Any: scripted answers are whatever the test supplies

import attrs

from agentrt.exceptions import ScriptExhausted
from agentrt.llm._contract import DecideResult, ExecutorRequest, GenerateResult, Usage

__all__ = ["Scripted", "ScriptedExecutors"]

ANY_SITE = "*"


@attrs.frozen
class Scripted:
    """One scripted answer: ``output`` (text or structured data) or, for ``decide``, the event;
    ``usage`` as the model would report it; ``chunks`` for ``stream_text`` (default: the output split
    into words); ``error`` to raise instead of answering."""

    output: Any = None
    usage: Usage | Mapping[str, int] | None = None
    chunks: tuple[str, ...] | None = None
    error: BaseException | None = None
    tool_calls: tuple[Any, ...] = ()


class ScriptedExecutors:
    """``generate_text``, ``stream_text`` and ``decide`` that answer from a script.

    ``script`` maps a site (``src``) to its answers: plain values, :class:`Scripted`
    entries, exceptions (raised), or callables ``(request) -> answer``.
    ``calls`` records every request received, in order.
    """

    def __init__(self, script: Mapping[str, Iterable[Any]] | None = None) -> None:
        self._queues: dict[str, deque[Any]] = {k: deque(v) for k, v in (script or {}).items()}
        self._lock = threading.Lock()
        self.calls: list[ExecutorRequest] = []

    def add(self, src: str, *answers: Any) -> ScriptedExecutors:
        """Queue more answers for ``src`` (``"*"``: any site)."""
        with self._lock:
            self._queues.setdefault(src, deque()).extend(answers)
        return self

    def remaining(self, src: str | None = None) -> int:
        with self._lock:
            if src is not None:
                return len(self._queues.get(src, ()))
            return sum(len(q) for q in self._queues.values())

    def _next(self, request: ExecutorRequest) -> Scripted:
        with self._lock:
            self.calls.append(request)
            for site in (request.src, ANY_SITE):
                queue = self._queues.get(site)
                if queue:
                    entry = queue.popleft()
                    break
            else:
                sites = ", ".join(repr(s) for s, q in self._queues.items() if q) or "none"
                raise ScriptExhausted(
                    request.src,
                    request.kind,
                    f"the scripted executor has no answer left for {request.describe()} "
                    f"(run {request.run_id}); add one with ScriptedExecutors({{{request.src!r}: [...]}}) "
                    f"or .add({request.src!r}, ...); "
                    f"sites with answers left: {sites}",
                )
        if isinstance(entry, Callable) and not isinstance(entry, type):  # type: ignore[arg-type]  # collections.abc.Callable as an isinstance target
            entry = entry(request)
        if isinstance(entry, BaseException):
            raise entry
        if not isinstance(entry, Scripted):
            entry = Scripted(output=entry)
        if entry.error is not None:
            raise entry.error
        return entry

    async def generate_text(self, request: ExecutorRequest) -> GenerateResult:
        entry = self._next(request)
        return GenerateResult(
            output=entry.output, usage=Usage.of(entry.usage), raw=entry, tool_calls=entry.tool_calls
        )

    async def stream_text(self, request: ExecutorRequest, on_chunk: Callable[[str], None]) -> GenerateResult:
        entry = self._next(request)
        chunks = entry.chunks
        if chunks is None:
            text = entry.output if isinstance(entry.output, str) else None
            chunks = tuple(_words(text)) if text is not None else ()
        for chunk in chunks:
            on_chunk(chunk)
        output = entry.output if entry.output is not None else "".join(chunks)
        return GenerateResult(
            output=output, usage=Usage.of(entry.usage), raw=entry, tool_calls=entry.tool_calls
        )

    async def decide(self, request: ExecutorRequest) -> DecideResult:
        entry = self._next(request)
        return DecideResult(event=entry.output, usage=Usage.of(entry.usage), raw=entry)


def _words(text: str) -> list[str]:
    """``"a b c"`` -> ``["a", " b", " c"]``: chunks that concatenate back to the text."""
    parts = text.split(" ")
    return [parts[0], *(" " + p for p in parts[1:])] if text else []
