"""The OpenAI chat-completions wire, read defensively: provider error bodies, retry hints, a streamed
answer put back together, tool and tool-call shapes, and JSON that a model fenced in a code block.
Used by :mod:`agentrt.llm.openai_compat`."""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from collections.abc import Callable, Mapping
from typing import Any  # Any: JSON from the provider, checked where it is read

import attrs
import httpx

#: Statuses worth retrying: rate limits and the gateway/overload family.  Any other 4xx is the
#: request's fault (bad key, bad model, bad body) and would fail the same way again.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

#: Error ``type`` names (in an error event inside a stream, which has no HTTP status) that mean
#: "try again later": OpenAI's and Anthropic-style gateways' spellings, vLLM/SGLang's exception names.
RETRY_ERROR_TYPES = frozenset(
    {
        "server_error",
        "rate_limit_error",
        "rate_limit_exceeded",
        "overloaded_error",
        "service_unavailable",
        "timeout",
        "internalservererror",
        "serviceunavailableerror",
        "internal_server_error",
    }
)

#: ``request.metadata`` keys forwarded as Chat Completions parameters of the same name.


@attrs.frozen
class _ProviderError:
    """The OpenAI-style error object of an answer: ``{"error": {"message", "type", "code"}}``."""

    message: str
    type: str | None
    code: str | int | None

    @property
    def status(self) -> int | None:
        """The HTTP status the error names in its ``code`` (vLLM and SGLang put it there), else None."""
        code = self.code
        if isinstance(code, str) and code.isdigit():
            code = int(code)
        return code if isinstance(code, int) and 100 <= code <= 599 else None

    @property
    def retryable(self) -> bool:
        status = self.status
        if status is not None:
            return status in RETRY_STATUSES
        return (self.type or "").lower() in RETRY_ERROR_TYPES or str(self.code).lower() in RETRY_ERROR_TYPES

    def fields(self) -> dict[str, Any]:
        return {"provider_message": self.message, "error_type": self.type, "error_code": self.code}


def _provider_error(data: Any) -> _ProviderError | None:
    """The error object in ``data`` (``{"error": {...}}``, ``{"object": "error", ...}`` or
    ``{"error": "text"}``), None if there is none."""
    if not isinstance(data, Mapping):
        return None
    inner: Any = data.get("error")
    if inner is None and data.get("object") == "error":
        inner = data
    if isinstance(inner, str) and inner:
        return _ProviderError(inner, None, None)
    if not isinstance(inner, Mapping):
        return None
    message = inner.get("message")
    kind = inner.get("type")
    code = inner.get("code")
    return _ProviderError(
        message if isinstance(message, str) else json.dumps(inner)[:2000],
        kind if isinstance(kind, str) else None,
        code if isinstance(code, (str, int)) and not isinstance(code, bool) else None,
    )


class _Transient(Exception):
    """One failed attempt that a retry may cure (internal to the retry loop)."""

    def __init__(
        self,
        status: int | None,
        body: str,
        retry_after: float | None = None,
        error: _ProviderError | None = None,
    ) -> None:
        super().__init__(body)
        self.status = status
        self.body = body
        self.retry_after = retry_after
        self.error = error


# --------------------------------------------------------------------------- helpers


class _StreamError(Exception):
    """The provider reported an error inside an SSE stream."""

    def __init__(self, error: _ProviderError, body: str) -> None:
        super().__init__(error.message)
        self.error = error
        self.body = body


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asked to wait: ``retry-after-ms`` (OpenAI, Azure), else ``Retry-After`` as
    seconds or an HTTP date; None when it asked nothing usable."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value)
    text = headers.get("retry-after")
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        value = when.timestamp() - time.time()
    return max(0.0, value) if math.isfinite(value) else None


@attrs.define
class _StreamState:
    """What a stream delivered so far; ``emitted`` counts the chunks given to ``on_chunk``."""

    content: list[str] = attrs.field(factory=list)
    refusal: list[str] = attrs.field(factory=list)
    tools: dict[int, dict[str, str]] = attrs.field(factory=dict)
    usage: Any = None
    finish_reason: str | None = None
    model: str | None = None
    chunks: int = 0
    emitted: int = 0
    done: bool = False  # data: [DONE] arrived

    def feed(self, data: str, on_chunk: Callable[[str], None]) -> None:
        try:
            chunk = json.loads(data)
        except ValueError:
            return  # not a chunk (a provider's keep-alive or comment in a data field)
        if not isinstance(chunk, dict):
            return
        problem = _provider_error(chunk)
        if problem is not None:  # vLLM, SGLang: data: {"error": {...}} inside a 200 stream
            raise _StreamError(problem, data)
        self.chunks += 1
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        self.model = chunk.get("model") or self.model
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                self.content.append(text)
                self.emitted += 1
                on_chunk(text)
            if isinstance(delta.get("refusal"), str):
                self.refusal.append(delta["refusal"])
            for call in delta.get("tool_calls") or ():
                self._feed_tool(call)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def _feed_tool(self, call: Mapping[str, Any]) -> None:
        """Tool calls arrive in pieces keyed by index: the id and name once, the arguments in fragments."""
        index = call.get("index", len(self.tools))
        slot = self.tools.setdefault(index, {"id": "", "name": "", "arguments": ""})
        if call.get("id"):
            slot["id"] = str(call["id"])
        function = call.get("function") or {}
        if function.get("name") and not slot["name"]:
            slot["name"] = str(function["name"])
        if isinstance(function.get("arguments"), str):
            slot["arguments"] += function["arguments"]

    def feed_completion(self, data: Any, on_chunk: Callable[[str], None]) -> None:
        problem = _provider_error(data) if isinstance(data, dict) and "choices" not in data else None
        if problem is not None:
            raise _StreamError(problem, json.dumps(data)[:2000])
        choices = data.get("choices") if isinstance(data, dict) else None
        if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
            what = f"not a chat completion: {json.dumps(data)[:2000]}"
            raise _StreamError(_ProviderError(what, None, None), what)
        message = choices[0].get("message") or {}
        self.chunks, self.usage, self.model = 1, data.get("usage"), data.get("model")
        self.finish_reason = choices[0].get("finish_reason") or "stop"  # a whole answer is complete
        self.done = True
        if isinstance(message.get("refusal"), str):
            self.refusal.append(message["refusal"])
        for n, call in enumerate(message.get("tool_calls") or ()):
            self.tools[n] = _flat_call(call)
        text = message.get("content")
        if isinstance(text, str) and text:
            self.content.append(text)
            self.emitted += 1
            on_chunk(text)


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A request tool ``{"name", "description", "parameters"}`` as a Chat Completions function tool."""
    if tool.get("type") == "function" and "function" in tool:
        return dict(tool)
    function: dict[str, Any] = {"name": tool["name"]}
    if tool.get("description"):
        function["description"] = tool["description"]
    function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
    return {"type": "function", "function": function}


def _flat_call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    return {
        "id": str(call.get("id") or ""),
        "name": str(function.get("name") or ""),
        "arguments": function.get("arguments"),
    }


def _arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict; text that is not a JSON object is kept as ``{"_raw": text}`` for the
    agent (or the runtime's validation) to judge, rather than failing the call here."""
    if isinstance(value, dict):
        return value
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}
    parsed = _loads(value) if isinstance(value, str) else None
    return (
        parsed
        if isinstance(parsed, dict)
        else {"_raw": value if isinstance(value, str) else json.dumps(value)}
    )


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _loads(text: str) -> Any:
    """JSON from a model's text, tolerating a Markdown code fence around it; None if it is not JSON."""
    for candidate in (text, *(m.group(1) for m in [_FENCE.match(text)] if m)):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
