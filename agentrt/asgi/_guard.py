"""The edge of the HTTP API: what a request must be before any handler sees it (spec §7.3).

Why each rule is here:

- **Host.** A page on ``http://evil.example`` whose name is re-pointed at 127.0.0.1 (DNS
  rebinding) talks to a loopback server as its own origin; its requests still carry
  ``Host: evil.example``.  Only the names the server was told it is reached by are answered
  (by default the loopback names), so such a request gets 403 before anything is read.
- **Origin and Content-Type on state-changing requests.** A cross-origin ``<form>`` or a
  ``fetch`` with a ``text/plain`` body is a "simple" request: browsers send it without a CORS
  preflight.  Requiring ``Content-Type: application/json`` for a body, and an ``Origin`` that is
  absent (not a browser) or the server's own, refuses both, with or without a token.
- **Body size.** The body is counted as it streams in (and a ``Content-Length`` over the limit is
  refused before one byte is read), so a 300 MB upload costs at most the limit in memory.

The JSON depth and run-id rules need the parsed body; they live beside it (:func:`json_depth`,
:func:`run_id_problem`) and the handlers apply them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any  # Any: ASGI scope, receive and send

if TYPE_CHECKING:  # imported when used: agentrt.asgi._app says which extra is missing first
    from starlette.responses import JSONResponse

__all__ = [
    "LOOPBACK_HOSTS",
    "MAX_BODY_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_RUN_ID_CHARS",
    "EdgeGuard",
    "json_depth",
    "run_id_problem",
]

#: The names a token-less, loopback server answers to (each with any port).
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
#: The default request body limit (``--max-body``): 1 MiB.
MAX_BODY_BYTES = 1024 * 1024
#: How deeply a request's JSON may nest (arrays and objects); deeper answers 422, never a RecursionError.
MAX_JSON_DEPTH = 64
#: The longest run id a client may choose.
MAX_RUN_ID_CHARS = 128
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_:@-]*")
_STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def error_response(status: int, code: str, message: str) -> JSONResponse:
    """The API's error shape, ``{"error": {"code", "message"}}``."""
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def run_id_problem(run_id: object) -> str | None:
    """Why ``run_id`` cannot be a client-chosen run id, or None: ids are listed, logged and put in
    URLs, so they are short and plain (letters, digits and ``_ : @ -``, starting with a letter or
    digit; ``/`` would split a URL path).  No ``.``: a sub-run's id is its parent's id, ``.`` and a
    number, and a parent adopts a run that already has that id, so a client-chosen id with a dot
    could plant a result in another tenant's run."""
    if not isinstance(run_id, str) or not run_id:
        return "must be a non-empty string"
    if len(run_id) > MAX_RUN_ID_CHARS:
        return f"must be at most {MAX_RUN_ID_CHARS} characters (got {len(run_id)})"
    if not _RUN_ID.fullmatch(run_id):
        return (
            "may hold only letters, digits and _ : @ - (starting with a letter or digit; '.' is kept "
            "for sub-run ids)"
        )
    return None


def json_depth(raw: bytes) -> int:
    """How deeply the JSON text ``raw`` nests, counted without parsing it (so a 100k-deep body is
    measured in one linear pass instead of recursing in ``json.loads``).  Strings are skipped, so a
    bracket inside one does not count."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_JSON_STRING.sub(b'""', raw)):
        if match.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _split_host(host: str) -> str:
    """The name part of a ``Host`` value (``[::1]:8000`` -> ``[::1]``, ``a.b:80`` -> ``a.b``)."""
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if ":" in host else host


class EdgeGuard:
    """ASGI middleware applying the Host, Origin, Content-Type and body-size rules (see the module).

    ``allowed_hosts``: names (``example.com``; any port) or ``name:port`` pairs; ``"*"`` answers any
    ``Host`` (for a host that checks it itself).
    """

    def __init__(self, app: Any, allowed_hosts: Iterable[str], max_body_bytes: int) -> None:
        self.app = app
        hosts = {h.strip().lower() for h in allowed_hosts if h.strip()}
        self.any_host = "*" in hosts
        self.hosts = frozenset(hosts - {"*"})
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers") or []}
        host = headers.get(b"host", b"").decode("latin-1").strip().lower()
        refusal = self._host_refusal(host)
        if refusal is None and scope["method"] in _STATE_CHANGING:
            refusal = self._origin_refusal(headers, host) or self._type_refusal(headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if scope["method"] not in _STATE_CHANGING:
            await self.app(scope, receive, send)
            return
        body = await self._read_body(headers, receive)
        if not isinstance(body, bytes):
            await body(scope, receive, send)
            return
        if body and b"content-type" not in headers:
            await error_response(
                415,
                "unsupported_media_type",
                f"{scope['method']} {scope.get('path', '')}: a request body needs the header "
                "'Content-Type: application/json'",
            )(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _host_refusal(self, host: str) -> JSONResponse | None:
        if self.any_host or host in self.hosts or _split_host(host) in self.hosts:
            return None
        return error_response(
            403,
            "host_not_allowed",
            f"Host {host or '(none)'!r} is not a name this server answers to "
            f"(allowed: {', '.join(sorted(self.hosts)) or 'none'}); reach it by one of those, or start it "
            "with --allow-host HOST (create_app(allowed_hosts=[...])) for a proxy's name",
        )

    @staticmethod
    def _origin_refusal(headers: dict[bytes, bytes], host: str) -> JSONResponse | None:
        origin = headers.get(b"origin")
        if origin is None:
            return None
        text = origin.decode("latin-1").strip().lower()
        scheme, _, netloc = text.partition("://")
        if scheme in ("http", "https") and netloc.rstrip("/") == host:
            return None
        return error_response(
            403,
            "cross_origin",
            f"Origin {text!r} is not this server's own ({host!r}); state-changing requests are accepted "
            "only from the server's own page or from clients that send no Origin",
        )

    @staticmethod
    def _type_refusal(headers: dict[bytes, bytes]) -> JSONResponse | None:
        content_type = headers.get(b"content-type")
        if content_type is None:
            return None  # allowed only with an empty body (checked once the body is read)
        media = content_type.decode("latin-1").split(";", 1)[0].strip().lower()
        if media == "application/json":
            return None
        return error_response(
            415,
            "unsupported_media_type",
            f"Content-Type {media!r}: state-changing requests take 'Content-Type: application/json'",
        )

    async def _read_body(self, headers: dict[bytes, bytes], receive: Any) -> bytes | JSONResponse:
        too_big = error_response(
            413,
            "body_too_large",
            f"the request body is over {self.max_body_bytes} bytes, the limit of this server "
            "(agentrt serve --max-body BYTES, create_app(max_body_bytes=...))",
        )
        length = headers.get(b"content-length")
        if length is not None and length.strip().isdigit() and int(length) > self.max_body_bytes:
            return too_big
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return b"".join(chunks)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return too_big
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` that hands the already-read body to the app once, then defers to the server's
    (a disconnect while an event stream is open still reaches the app)."""
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return dict(await receive())

    return replay
