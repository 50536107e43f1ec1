"""``FakeOpenAIServer``: a local stand-in for an OpenAI-compatible Chat Completions server.

It exists so that the HTTP executor (:mod:`agentrt.llm.openai_compat`) can be
tested -- retries, timeouts, SSE streams that break, cancellation -- against a
real socket, and so that the demo runs without an API key.  Standard library
only: it must work wherever agentrt's tests run, with no extra dependency.

Answers come from a FIFO of scripted responses (:meth:`FakeOpenAIServer.enqueue`
with :func:`reply`, :func:`stream`, :func:`error`, :func:`delay`); the shapes cover what
real servers send beyond the happy path: a refusal (``reply(refusal=...)``), any
``finish_reason``, a stream that stops without ``finish_reason`` or ``[DONE]``
(``stream(end="cut")``), an error event inside a 200 stream as vLLM and SGLang send it
(``stream(error={...})``), ``retry-after-ms`` and HTTP-date ``Retry-After`` headers
(``error(headers=...)``), several tool calls in one answer.  When the queue
is empty a ``responder(body) -> response`` callable answers.  The default one,
:func:`default_responder`, is deterministic: a minimal valid envelope for a
``response_format`` JSON schema, a call of the first tool when a tool call is
required, else ``"Summary: "`` and the first words of the last user message.

Run ``python -m agentrt.testing.openai_server [--port N]`` to serve by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple  # Any: request and answer bodies are JSON

import attrs

__all__ = [
    "FakeOpenAIServer",
    "ReceivedRequest",
    "Response",
    "default_responder",
    "delay",
    "error",
    "minimal_instance",
    "reply",
    "stream",
]


class ReceivedRequest(NamedTuple):
    """One request the server received; header names are lower-cased (HTTP header names are not case
    sensitive, so tests can look them up one way)."""

    path: str
    headers: dict[str, str]
    body: Any


# --------------------------------------------------------------------------- scripted responses


@attrs.frozen
class _Reply:
    content: str | None
    tool_calls: tuple[dict[str, Any], ...]
    usage: Mapping[str, int] | None
    finish_reason: str
    refusal: str | None = None


@attrs.frozen
class _Stream:
    chunks: tuple[str, ...]
    usage: Mapping[str, int] | None
    tool_calls: tuple[dict[str, Any], ...]
    fail_after: int | None
    finish_reason: str = "stop"
    end: str = "done"
    error: Mapping[str, Any] | None = None
    refusal: str | None = None


@attrs.frozen
class _Error:
    status: int
    body: str
    retry_after: float | str | None
    headers: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class _Delay:
    seconds: float
    then: Response | None = None


Response = _Reply | _Stream | _Error | _Delay
Responder = Callable[[Any], "Response | str"]


def reply(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    usage: Mapping[str, int] | None = None,
    finish_reason: str = "stop",
    refusal: str | None = None,
) -> Response:
    """A chat completion: JSON, or SSE in a few chunks (usage in the last) when the request streams.

    ``tool_calls`` items are ``{"name", "arguments" (dict or JSON text), "id"?}`` or already in
    OpenAI's ``{"id", "type": "function", "function": {...}}`` shape.  ``usage`` (OpenAI spelling)
    defaults to word counts of the request and the answer.  ``refusal`` is sent as OpenAI sends
    a refusal: ``message.refusal`` with ``content: null`` (``delta.refusal`` pieces when streamed).
    """
    calls = tuple(_tool_call(c, n) for n, c in enumerate(tool_calls or ()))
    return _Reply(content, calls, usage, finish_reason, refusal)


def stream(
    chunks: list[str],
    usage: Mapping[str, int] | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    fail_after: int | None = None,
    *,
    finish_reason: str = "stop",
    end: str = "done",
    error: Mapping[str, Any] | None = None,
) -> Response:
    """An SSE stream with one content delta per item of ``chunks`` (served even to a non-streaming request).

    ``fail_after=n`` drops the connection after ``n`` SSE events (the first ``n`` chunks), mid-body,
    so the client sees a broken stream rather than a short one.  ``end`` says how a whole stream
    ends: ``"done"`` (finish_reason, usage, ``data: [DONE]``), ``"no-done"`` (finish_reason and
    usage, no ``[DONE]``: llama.cpp-style servers), or ``"cut"`` (after the content, the body just
    closes cleanly -- no finish_reason, no ``[DONE]``).  ``error`` is sent after the chunks as
    ``data: {"error": error}`` and the stream closes (vLLM and SGLang report failures this way,
    inside a 200).
    """
    if end not in ("done", "no-done", "cut"):
        raise ValueError(f"stream(end=...) is 'done', 'no-done' or 'cut', not {end!r}")
    calls = tuple(_tool_call(c, n) for n, c in enumerate(tool_calls or ()))
    return _Stream(tuple(chunks), usage, calls, fail_after, finish_reason, end, error)


def error(
    status: int,
    body: str | Mapping[str, Any] | None = None,
    retry_after: float | str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """An HTTP error answer; ``retry_after`` is sent as the ``Retry-After`` header (a number of
    seconds or an HTTP date), ``headers`` as given (``{"retry-after-ms": "1500"}``)."""
    if body is None:
        body = {"error": {"message": f"scripted error {status}", "type": "fake_error", "code": status}}
    text = body if isinstance(body, str) else json.dumps(body)
    return _Error(status, text, retry_after, tuple((headers or {}).items()))


def delay(seconds: float, then: Response | None = None) -> Response:
    """Wait ``seconds`` before answering with ``then`` (default: the responder's answer).

    For client timeouts and cancellation; :meth:`FakeOpenAIServer.stop` cuts the wait short.
    """
    return _Delay(seconds, then)


def _tool_call(call: Mapping[str, Any], n: int) -> dict[str, Any]:
    if "function" in call:
        return dict(call)
    args = call.get("arguments", {})
    return {
        "id": call.get("id", f"call_{n}"),
        "type": "function",
        "function": {"name": call["name"], "arguments": args if isinstance(args, str) else json.dumps(args)},
    }


# --------------------------------------------------------------------------- the default responder


def _words(text: str) -> list[str]:
    return text.split()


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return ""


def _last_user_text(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def _prompt_words(body: Mapping[str, Any]) -> int:
    return sum(
        len(_words(_text_of(m.get("content")))) for m in body.get("messages") or [] if isinstance(m, Mapping)
    )


_FORMATS = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "email": "user@example.com",
    "uri": "https://example.com/",
}


def minimal_instance(schema: Any, text: str = "text", *, _root: Any = None, _depth: int = 0) -> Any:
    """A small value valid against ``schema`` (the subset agentrt emits, plus local ``$ref``\\s).

    Strings are ``text`` (fit to min/max length), numbers their minimum or 0, arrays one item (or
    ``minItems``), objects every property filled in, enums and unions their first (non-null) option.
    """
    root = schema if _root is None else _root
    if not isinstance(schema, Mapping) or _depth > 32:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        return minimal_instance(target, text, _root=root, _depth=_depth + 1)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if options:
            pick = next(
                (o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")), options[0]
            )
            return minimal_instance(pick, text, _root=root, _depth=_depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            if isinstance(part, Mapping):
                merged.update(part)
        return minimal_instance(merged, text, _root=root, _depth=_depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "string":
        value = _FORMATS.get(schema.get("format", ""), text)
        value = value.ljust(int(schema.get("minLength", 0)), "x")
        return value[: schema["maxLength"]] if "maxLength" in schema else value
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        if low is None:
            return 0
        value = low + 1 if "exclusiveMinimum" in schema and "minimum" not in schema else low
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if kind == "array":
        prefix = schema.get("prefixItems")
        if prefix:
            return [minimal_instance(p, text, _root=root, _depth=_depth + 1) for p in prefix]
        item = minimal_instance(schema.get("items", {"type": "string"}), text, _root=root, _depth=_depth + 1)
        return [item] * max(1, int(schema.get("minItems", 1)))
    if kind == "object":
        return {
            name: minimal_instance(prop, text, _root=root, _depth=_depth + 1)
            for name, prop in (schema.get("properties") or {}).items()
        }
    return None


def default_responder(body: Any) -> Response:
    """Answer deterministically from the request alone (see the module docstring)."""
    body = body if isinstance(body, Mapping) else {}
    user = _last_user_text(body)
    fmt = body.get("response_format")
    tools = body.get("tools") or []
    if tools and body.get("tool_choice") is not None:
        wanted = body["tool_choice"]
        name = wanted.get("function", {}).get("name") if isinstance(wanted, Mapping) else None
        if wanted == "required" or name:
            functions = [t.get("function", {}) for t in tools if isinstance(t, Mapping)]
            chosen = next((f for f in functions if f.get("name") == name), functions[0])
            words = " ".join(_words(user)[:3]) or "text"
            args = minimal_instance(chosen.get("parameters") or {"type": "object"}, words)
            return reply(
                tool_calls=[{"name": chosen.get("name", "tool"), "arguments": args}],
                finish_reason="tool_calls",
            )
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or {}
        words = " ".join(_words(user)[:3]) or "text"
        value = minimal_instance(schema, words)
        if not (isinstance(value, dict) and "result" in value):
            value = {"result": value}
        return reply(json.dumps(value))
    return reply("Summary: " + " ".join(_words(user)[:20]))


# --------------------------------------------------------------------------- serving


def _usage(body: Any, answer_text: str, given: Mapping[str, int] | None) -> dict[str, int]:
    if given is not None:
        return dict(given)
    prompt = _prompt_words(body) if isinstance(body, Mapping) else 0
    completion = len(_words(answer_text))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _answer_text(content: str | None, tool_calls: tuple[dict[str, Any], ...]) -> str:
    args = " ".join(str(c.get("function", {}).get("arguments", "")) for c in tool_calls)
    return f"{content or ''} {args}"


def _split(content: str, parts: int = 3) -> list[str]:
    """``content`` in up to ``parts`` pieces along word boundaries; the pieces join back exactly."""
    tokens = re.findall(r"\s*\S+\s*|\s+", content)
    if len(tokens) <= 1:
        return [content] if content else []
    size = -(-len(tokens) // parts)
    return ["".join(tokens[i : i + size]) for i in range(0, len(tokens), size)]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and chunked transfer for SSE
    # Small writes (headers, then body) would otherwise wait ~40 ms for the client's delayed ACK.
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests and the demo own stderr
        pass

    def do_GET(self) -> None:
        self._record(None)
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route GET {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            self._record(raw.decode("utf-8", "replace"))
            self._json(
                400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}}
            )
            return
        self._record(body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route POST {self.path}", "type": "not_found"}})
            return
        response = self.server.fake._next_response(body)
        try:
            self._serve(response, body)
        except (BrokenPipeError, ConnectionResetError):  # the client went away (timeout, cancellation)
            self.close_connection = True

    def _record(self, body: Any) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.fake._record(ReceivedRequest(self.path, headers, body))

    def _serve(self, response: Response, body: Any) -> None:
        fake = self.server.fake
        while isinstance(response, _Delay):
            if fake._stopping.wait(response.seconds):
                self.close_connection = True
                return
            response = response.then if response.then is not None else fake._respond(body)
        if isinstance(response, _Error):
            headers = {} if response.retry_after is None else {"Retry-After": str(response.retry_after)}
            headers.update(response.headers)
            self._send(response.status, response.body.encode(), "application/json", headers)
        elif isinstance(response, _Stream):
            self._sse(response, body)
        elif isinstance(body, Mapping) and body.get("stream"):
            self._sse(
                _Stream(
                    tuple(_split(response.content or "")),
                    response.usage,
                    response.tool_calls,
                    None,
                    response.finish_reason,
                    refusal=response.refusal,
                ),
                body,
            )
        else:
            reason = response.finish_reason
            if response.tool_calls and reason == "stop":  # as OpenAI reports an answer with tool calls
                reason = "tool_calls"
            message: dict[str, Any] = {"role": "assistant", "content": response.content}
            if response.refusal is not None:
                message["refusal"] = response.refusal
            if response.tool_calls:
                message["tool_calls"] = list(response.tool_calls)
            self._json(
                200,
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": _model(body),
                    "choices": [{"index": 0, "message": message, "finish_reason": reason}],
                    "usage": _usage(
                        body, _answer_text(response.content, response.tool_calls), response.usage
                    ),
                },
            )

    def _sse(self, spec: _Stream, body: Any) -> None:
        """Serve an SSE stream with chunked transfer encoding, so that a drop is visible to the client."""
        chunks, tool_calls, usage, fail_after = spec.chunks, spec.tool_calls, spec.usage, spec.fail_after
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time())}
        base["model"] = _model(body)

        def events() -> Iterator[dict[str, Any]]:
            for n, text in enumerate(chunks):
                delta: dict[str, Any] = {"content": text}
                if n == 0:
                    delta["role"] = "assistant"
                yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            if spec.refusal is not None:
                for n, part in enumerate(_split(spec.refusal)):
                    delta = {"refusal": part, "content": None}
                    if n == 0 and not chunks:
                        delta["role"] = "assistant"
                    yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            if spec.error is not None:
                yield {"error": dict(spec.error)}
                return
            if spec.end == "cut":
                return
            for index, call in enumerate(tool_calls):
                function = call.get("function", {})
                arguments = str(function.get("arguments", ""))
                half = len(arguments) // 2
                first = {"index": index, "id": call.get("id"), "type": "function"}
                first["function"] = {"name": function.get("name"), "arguments": arguments[:half]}
                for piece in (first, {"index": index, "function": {"arguments": arguments[half:]}}):
                    yield {
                        **base,
                        "choices": [{"index": 0, "delta": {"tool_calls": [piece]}, "finish_reason": None}],
                    }
            reason = "tool_calls" if tool_calls and spec.finish_reason == "stop" else spec.finish_reason
            yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}
            answer = _answer_text("".join(chunks), tool_calls)
            yield {**base, "choices": [], "usage": _usage(body, answer, usage)}

        for n, event in enumerate(events()):
            if fail_after is not None and n >= fail_after:
                self.close_connection = True  # no terminating chunk: the body is cut off
                return
            self._chunk(f"data: {json.dumps(event)}\n\n".encode())
        if spec.end == "done" and spec.error is None:
            self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def _send(
        self, status: int, data: bytes, content_type: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _model(body: Any) -> str:
    return str(body.get("model") or "fake-model") if isinstance(body, Mapping) else "fake-model"


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], OSError):  # a client that hung up is not the server's problem
            return
        super().handle_error(request, client_address)


class FakeOpenAIServer:
    """A local OpenAI-compatible ``/v1/chat/completions`` server in a daemon thread.

    Use it as a context manager (or :meth:`start` / :meth:`stop`); :attr:`url` is the base URL to give
    an OpenAI-compatible client (``http://127.0.0.1:PORT/v1``); :attr:`requests` records what arrived.
    Thread-safe: handlers run in their own threads.
    """

    reply = staticmethod(reply)
    stream = staticmethod(stream)
    error = staticmethod(error)
    delay = staticmethod(delay)

    def __init__(self, responder: Responder | None = None, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.responder: Responder = responder or default_responder
        self.host = host
        self.port = port
        self.requests: list[ReceivedRequest] = []
        self._queue: deque[Response] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not running; call start() or use it as a context manager")
        return f"http://{self.host}:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAIServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer((self.host, self.port), _Handler)
        httpd.fake = self
        self._httpd = httpd
        # A short poll interval: stop() (every test's teardown) waits up to one interval.
        self._thread = threading.Thread(
            target=httpd.serve_forever, args=(0.02,), name="FakeOpenAIServer", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; delayed answers still waiting are dropped."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def enqueue(self, *responses: Response) -> None:
        """Queue scripted responses, answered first in, first out, before the responder is asked."""
        with self._lock:
            self._queue.extend(responses)

    @property
    def pending(self) -> int:
        """How many scripted responses are still queued."""
        with self._lock:
            return len(self._queue)

    def _record(self, request: ReceivedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_response(self, body: Any) -> Response:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self._respond(body)

    def _respond(self, body: Any) -> Response:
        answer = self.responder(body)
        return reply(answer) if isinstance(answer, str) else answer


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted, printing the base URL (for running the demo by hand)."""
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible Chat Completions server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free port)")
    args = parser.parse_args(argv)
    with FakeOpenAIServer(host=args.host, port=args.port) as server:
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
