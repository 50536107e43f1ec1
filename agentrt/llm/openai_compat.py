"""``OpenAICompatExecutors``: executors for any OpenAI-compatible Chat Completions endpoint, over httpx.

This module only maps an :class:`~agentrt.llm.ExecutorRequest` onto one HTTP call
and the answer back.  It does not judge answers: the runtime validates them,
journals them and retries with feedback (``request.chat_messages()`` already
carries it), so a bad model answer is returned as is, never raised.  What *is*
handled here is the transport -- 429s, 5xx, timeouts, broken connections -- with
exponential backoff, because the runtime must never see a transient network
failure (see "Retries" in the design notes).

Structured output uses the envelope wire contract (:func:`~agentrt.llm.envelope_schema`):
the provider gets ``{"result": <schema>, "reasoning"?: str}`` as a root object, which
every provider accepts, and the executor returns the unwrapped ``result``.

What a provider says about the answer itself is not left for the runtime to guess:
``finish_reason`` is kept on the result; a refusal (``message.refusal``) raises
:class:`~agentrt.llm.ModelRefused`, ``content_filter`` raises
:class:`~agentrt.llm.ModelContentFiltered` and ``length`` raises
:class:`~agentrt.llm.ModelOutputTruncated` (a cut-off *text* answer may be let through
with ``on_length="return"``).  A stream must end with ``finish_reason`` or ``[DONE]``; one
that just stops is a failed attempt, never a complete answer.

Needs ``httpx`` (``pip install agentrt[openai]``); importing this module is the only thing that does.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NoReturn, TypeVar, cast  # Any: JSON from the provider, checked where it is read

import httpx
from httpx_sse import EventSource, SSEError

from agentrt.exceptions import (
    ModelContentFiltered,
    ModelOutputTruncated,
    ModelProviderError,
    ModelRefused,
)
from agentrt.llm._contract import (
    DecideResult,
    ExecutorRequest,
    GenerateResult,
    ModelToolCall,
    Usage,
    envelope_schema,
)
from agentrt.llm._openai_wire import (
    RETRY_STATUSES,
    _arguments,
    _describe,
    _flat_call,
    _loads,
    _provider_error,
    _ProviderError,
    _retry_after,
    _StreamError,
    _StreamState,
    _tool,
    _Transient,
)

__all__ = ["OpenAICompatExecutors"]

#: Request fields forwarded from a call's metadata to the provider.
FORWARDED_METADATA = ("temperature", "max_tokens", "top_p", "seed", "stop")

_T = TypeVar("_T")


class OpenAICompatExecutors:
    """``generate_text``, ``stream_text`` and ``decide`` against ``{base_url}/chat/completions``.

    Pass the instance itself as ``Runtime(executors=...)``.  Model refs on requests
    (``model="quick"``) are resolved by ``resolve_model(ref)`` if given, else through
    the ``models`` alias map (an unknown alias is an error, so a typo does not silently
    reach the provider), else sent as is; ``default_model`` applies when a request names
    none.  ``request.attempt_id`` (``RUN:SEQ.IDX#N``) is sent as ``Idempotency-Key``: the
    same for transport retries of one body and for a resume re-asking it, different for
    each retry with feedback (a different body).

    Transient failures (429, 500, 502, 503, 504, timeouts, transport errors, an error event
    inside a stream that names such a status or a server/overload/rate-limit type, a stream
    that stops without ``finish_reason`` or ``[DONE]``) are retried up to ``max_retries``
    times with exponential backoff and jitter, honouring ``retry-after-ms`` and
    ``Retry-After`` (seconds or an HTTP date); then :class:`~agentrt.llm.ModelProviderError`
    is raised, carrying the provider's ``error.message`` / ``type`` / ``code``.  A stream
    failure after chunks reached ``on_chunk`` is never retried (the consumer saw part of an
    answer).  ``on_length`` is the policy for ``finish_reason="length"`` on a plain text
    answer: ``"raise"`` (:class:`~agentrt.llm.ModelOutputTruncated`, the default) or
    ``"return"`` (the cut-off text, with ``finish_reason="length"`` on the result).
    ``sleep`` is the wait used between attempts (a seam for tests).  A ``client`` passed in
    is used as is (its timeout applies) and is not closed by :meth:`aclose`.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        models: Mapping[str, str] | None = None,
        resolve_model: Callable[[str], str] | None = None,
        default_model: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        on_length: str = "raise",
    ) -> None:
        if on_length not in ("raise", "return"):
            raise ValueError(
                f"OpenAICompatExecutors(on_length=...) is 'raise' or 'return', not {on_length!r}"
            )
        self.on_length = on_length
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self._api_key = api_key
        self.models = dict(models) if models is not None else None
        self.resolve_model = resolve_model
        self.default_model = default_model
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.headers = dict(headers or {})
        self._client = client
        self._own_client: httpx.AsyncClient | None = None
        self._sleep = sleep

    def __repr__(self) -> str:  # never show the key
        return f"OpenAICompatExecutors({self.base_url!r}, default_model={self.default_model!r})"

    # ----------------------------------------------------------------------- lifecycle

    async def aclose(self) -> None:
        """Close the HTTP client this instance created (a client passed in stays open)."""
        own, self._own_client = self._own_client, None
        if own is not None:
            self._client = None
            await own.aclose()

    async def __aenter__(self) -> OpenAICompatExecutors:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _http(self) -> httpx.AsyncClient:
        # Created lazily so that constructing executors (at import time, in a config module) opens nothing.
        if self._client is None:
            self._own_client = self._client = httpx.AsyncClient(timeout=self.timeout)
        return self._client

    # ----------------------------------------------------------------------- the executors

    async def generate_text(self, request: ExecutorRequest) -> GenerateResult:
        """One completion; text, tool calls, or (for a structured request) the unwrapped envelope."""
        body = self._body(request)
        data = await self._retrying(lambda attempt: self._post_once(request, body, attempt))
        choice = data["choices"][0]
        message = choice.get("message") or {}
        return self._result(
            request,
            content=message.get("content"),
            tool_calls=[_flat_call(c) for c in message.get("tool_calls") or () if isinstance(c, Mapping)],
            usage=data.get("usage"),
            raw=data,
            model=data.get("model") or body["model"],
            finish_reason=choice.get("finish_reason"),
            refusal=message.get("refusal"),
        )

    async def stream_text(self, request: ExecutorRequest, on_chunk: Callable[[str], None]) -> GenerateResult:
        """A streamed completion: ``on_chunk`` gets each content delta; the result is the whole answer.

        A failure before any chunk reached ``on_chunk`` is retried like any other; after that it
        is raised, since the consumer has already seen part of an answer a retry would not repeat.
        """
        body = self._body(request, stream=True, stream_options={"include_usage": True})
        state = await self._retrying(lambda attempt: self._stream_once(request, body, on_chunk, attempt))
        content = "".join(state.content)
        raw = {
            "content": content,
            "finish_reason": state.finish_reason,
            "usage": state.usage,
            "chunks": state.chunks,
        }
        calls = [state.tools[i] for i in sorted(state.tools)]
        return self._result(
            request,
            content=content,
            tool_calls=calls,
            usage=state.usage,
            raw=raw,
            model=state.model or body["model"],
            finish_reason=state.finish_reason,
            refusal="".join(state.refusal) or None,
        )

    async def decide(self, request: ExecutorRequest) -> DecideResult:
        """Each allowed event is offered as a function tool and one call is required; the call is the event.

        A model that answers in prose instead gets its text returned as the event, which the
        runtime refuses and retries with feedback (``render_decision_attempts``).  Parallel tool
        calls are turned off (``parallel_tool_calls: false``); a model that still makes several
        calls gets them all back as a list, which the runtime refuses the same way ("choose
        exactly one") rather than silently keeping the first.
        """
        tools = [
            {
                "type": "function",
                "function": {"name": e.type, "description": e.description, "parameters": e.schema},
            }
            for e in request.events
        ]
        body = self._body(request, tools=tools, tool_choice="required", parallel_tool_calls=False)
        data = await self._retrying(lambda attempt: self._post_once(request, body, attempt))
        choice = data["choices"][0]
        message = choice.get("message") or {}
        self._check_answer(
            request,
            message.get("content"),
            choice.get("finish_reason"),
            message.get("refusal"),
            usage=data.get("usage"),
        )
        calls = [_flat_call(c) for c in message.get("tool_calls") or () if isinstance(c, Mapping)]
        events = [
            {"type": c["name"], **{k: v for k, v in _arguments(c["arguments"]).items() if k != "type"}}
            for c in calls
        ]
        event: Any
        if len(events) == 1:
            event = events[0]
        elif events:
            event = events  # several choices at once: refused (with feedback) by the runtime
        else:
            event = message.get("content") or ""
        return DecideResult(event, Usage.of(data.get("usage")), raw=data, reasoning=None)

    # ----------------------------------------------------------------------- request building

    def model_for(self, request: ExecutorRequest) -> str:
        """The provider model name for ``request`` (see the class docstring for the resolution order)."""
        ref = request.model or self.default_model
        if ref is None:
            raise ValueError(
                f"{request.describe()} names no model and OpenAICompatExecutors has no default; pass "
                "OpenAICompatExecutors(..., default_model='NAME') or model='NAME' on the request"
            )
        if self.resolve_model is not None:
            return self.resolve_model(ref)
        if self.models is not None:
            try:
                return self.models[ref]
            except KeyError:
                known = ", ".join(repr(k) for k in self.models) or "none"
                raise ValueError(
                    f"{request.describe()} asks for model {ref!r}, which is not in the models map "
                    f"(aliases: {known}); add it to models= or pass resolve_model="
                ) from None
        return ref

    def _body(self, request: ExecutorRequest, **extra: Any) -> dict[str, Any]:
        """The request body: model, messages, forwarded metadata, envelope, tools, then ``extra`` (what the
        kind of call adds), then ``metadata["openai"]`` last so the host can override anything."""
        body: dict[str, Any] = {"model": self.model_for(request), "messages": request.chat_messages()}
        for key in FORWARDED_METADATA:
            if key in request.metadata:
                body[key] = request.metadata[key]
        if request.output_schema is not None:
            schema = envelope_schema(request.output_schema, reasoning=request.reasoning)
            # strict=False: strict mode rejects common schema features (defaults, open dicts); the
            # runtime validates the answer anyway.
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "envelope", "schema": schema, "strict": False},
            }
        if request.tools:
            body["tools"] = [_tool(t) for t in request.tools]
        body.update(extra)
        overrides = request.metadata.get("openai", {})
        if not isinstance(overrides, Mapping):
            raise TypeError(
                f"{request.describe()}: metadata['openai'] must be a dict of Chat Completions parameters, "
                f"not {type(overrides).__name__}"
            )
        body.update(overrides)
        # An override of None removes the parameter (for a server that rejects one agentrt sends).
        return {k: v for k, v in body.items() if v is not None or k not in overrides}

    def _headers(self, request: ExecutorRequest) -> dict[str, str]:
        headers = {"Idempotency-Key": request.attempt_id}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return {**headers, **self.headers}

    # ----------------------------------------------------------------------- transport

    async def _retrying(self, once: Callable[[int], Awaitable[_T]]) -> _T:
        """Run ``once(attempt)`` until it succeeds, raises a final error, or retries run out.

        Nothing is shielded: cancelling the caller cancels the HTTP request or the backoff wait.
        """
        attempt = 0
        while True:
            attempt += 1
            try:
                return await once(attempt)
            except _Transient as failure:
                if attempt > self.max_retries:
                    fields = failure.error.fields() if failure.error is not None else {}
                    # No chained cause: the run's error record shows the provider's error, not
                    # httpx's or agentrt's internals (the cause is in the message already).
                    raise ModelProviderError(
                        failure.status, failure.body, attempt, self.url, **fields
                    ) from None
                await self._sleep(self._backoff(attempt - 1, failure.retry_after))

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based): what the server asked for, else
        exponential backoff with jitter so that many clients do not retry in step."""
        if retry_after is not None:
            return min(self.backoff_max, retry_after)
        exponential: float = self.backoff_base * 2**retry  # int ** int is Any to mypy (2**-1 is a float)
        return min(self.backoff_max, exponential) * random.uniform(0.5, 1)

    async def _post_once(
        self, request: ExecutorRequest, body: dict[str, Any], attempt: int
    ) -> dict[str, Any]:
        try:
            response = await self._http().post(self.url, json=body, headers=self._headers(request))
        except httpx.TransportError as exc:  # includes httpx.TimeoutException
            raise _Transient(None, _describe(exc)) from exc
        if not response.is_success:
            self._fail(response, attempt)
        data = _loads(response.text)
        problem = _provider_error(data) if isinstance(data, dict) and "choices" not in data else None
        if problem is not None:  # an error object in a 200 answer (some gateways do this)
            self._raise_error(problem, response.text, 0, attempt)
        choices = data.get("choices") if isinstance(data, dict) else None
        if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
            raise ModelProviderError(
                response.status_code, f"not a chat completion: {response.text[:2000]}", attempt, self.url
            ) from None
        return cast("dict[str, Any]", data)  # the choices check above proved it a dict

    async def _stream_once(
        self, request: ExecutorRequest, body: dict[str, Any], on_chunk: Callable[[str], None], attempt: int
    ) -> _StreamState:
        state = _StreamState()
        try:
            async with self._http().stream(
                "POST", self.url, json=body, headers=self._headers(request)
            ) as response:
                if not response.is_success:
                    await response.aread()
                    self._fail(response, attempt)
                if "json" in response.headers.get("content-type", ""):
                    # A server that ignored stream=true: take the whole answer as one chunk.
                    await response.aread()
                    state.feed_completion(_loads(response.text), on_chunk)
                    return state
                async for event in EventSource(response).aiter_sse():
                    if event.data.strip() == "[DONE]":
                        state.done = True
                        break
                    if event.data:
                        state.feed(event.data, on_chunk)
        except _StreamError as exc:
            self._raise_error(exc.error, exc.body, state.emitted, attempt)
        except (httpx.TransportError, SSEError) as exc:
            if state.finish_reason is not None:
                return state  # the answer was complete; only the end of the body was lost
            self._broken(state, _describe(exc), attempt)
        if not state.done and state.finish_reason is None:
            self._broken(state, "the stream ended without a finish_reason or data: [DONE] (cut off)", attempt)
        return state

    def _broken(self, state: _StreamState, what: str, attempt: int) -> NoReturn:
        """A stream that failed: retried if nothing reached ``on_chunk`` yet, else a final error."""
        if state.emitted:
            raise ModelProviderError(
                None,
                f"the stream broke after {state.emitted} chunk(s): {what}; the partial answer was shown "
                "to observers and is not kept",
                attempt,
                self.url,
            ) from None
        raise _Transient(None, what)

    def _raise_error(self, error: _ProviderError, body: str, emitted: int, attempt: int) -> NoReturn:
        """The provider reported ``error`` (in a stream, or a 200 body): retried like the HTTP status it
        names (or its type) unless chunks already reached observers."""
        if error.retryable and not emitted:
            raise _Transient(error.status, body[:2000], None, error)
        where = f" after {emitted} streamed chunk(s)" if emitted else ""
        raise ModelProviderError(
            error.status,
            body[:2000],
            attempt,
            self.url,
            f"model provider at {self.url}: error in the answer{where} after {attempt} attempt(s): "
            f"{error.message[:1000]}"
            + "".join(
                f", {k} {v!r}" for k, v in (("type", error.type), ("code", error.code)) if v is not None
            ),
            **error.fields(),
        ) from None

    def _fail(self, response: httpx.Response, attempt: int) -> NoReturn:
        error = _provider_error(_loads(response.text))
        if response.status_code in RETRY_STATUSES:
            raise _Transient(response.status_code, response.text, _retry_after(response.headers), error)
        fields = error.fields() if error is not None else {}
        raise ModelProviderError(response.status_code, response.text, attempt, self.url, **fields) from None

    # ----------------------------------------------------------------------- answers

    def _result(
        self,
        request: ExecutorRequest,
        *,
        content: Any,
        tool_calls: list[dict[str, Any]],
        usage: Any,
        raw: Any,
        model: Any,
        finish_reason: Any = None,
        refusal: Any = None,
    ) -> GenerateResult:
        """Build the result; ``model`` is the one the provider says answered (else the one asked for).

        Raises what the answer says about itself (refusal, content filter, length; see the module
        docstring) before anything is parsed, so a refusal is never re-asked as "not JSON"."""
        text = content if isinstance(content, str) else ""
        reason = finish_reason if isinstance(finish_reason, str) else None
        self._check_answer(request, text, reason, refusal, cut_is_fatal=bool(tool_calls), usage=usage)
        output: Any = text
        reasoning = None
        if request.output_schema is not None:
            parsed = _loads(text)
            if isinstance(parsed, dict) and "result" in parsed:
                output = parsed["result"]
                reasoning = parsed.get("reasoning") if isinstance(parsed.get("reasoning"), str) else None
        calls = tuple(ModelToolCall(c["id"], c["name"], _arguments(c["arguments"])) for c in tool_calls)
        return GenerateResult(
            output=output,
            usage=Usage.of(usage),
            raw=raw,
            reasoning=reasoning,
            tool_calls=calls,
            model=model if isinstance(model, str) else None,
            finish_reason=reason,
        )

    def _check_answer(
        self,
        request: ExecutorRequest,
        text: Any,
        finish_reason: Any,
        refusal: Any,
        *,
        cut_is_fatal: bool = False,
        usage: Any = None,
    ) -> None:
        """Raise what the answer says about itself, carrying the usage the server reported for it."""
        text = text if isinstance(text, str) else ""
        spent = Usage.of(usage)
        if isinstance(refusal, str) and refusal:
            raise ModelRefused(request.src, refusal, usage=spent)
        if finish_reason == "content_filter":
            raise ModelContentFiltered(request.src, text, usage=spent)
        if finish_reason == "length" and (
            cut_is_fatal
            or self.on_length == "raise"
            or request.output_schema is not None
            or request.kind == "decide"
        ):
            raise ModelOutputTruncated(request.src, text, usage=spent)
