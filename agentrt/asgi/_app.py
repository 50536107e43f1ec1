"""``create_app``: the Starlette app behind ``agentrt serve`` (see :mod:`agentrt.asgi`).

Why each piece is the way it is:

- Only the agents given to ``create_app`` can be started: a request names one by
  ``MODULE:ATTR`` (or its ``agent(...)`` name) and that string is only a key into
  this table, never imported.
- A reply is journaled in the store (``Runtime.reply``) before the 202 goes out,
  and the journal takes one reply per question, so a second one gets 409.
- The event stream reads the store's per-run stream (``Runtime.subscribe``), so
  the SSE ``id`` is the run's durable event id and a reconnect resumes exactly.
- With a tenant hook, every run created here is recorded with its tenant in the
  transaction that creates it (after validation, so a refused request leaves
  nothing behind); a sub-run belongs to its root's tenant; a run created
  elsewhere (CLI, embedding code) belongs to none.  A run of another tenant (or
  of none) answers exactly as an unknown id does: 404 on every id-addressed
  route, and ``409 run_exists`` for ``POST /runs`` with a taken id whoever holds it.
- The edge rules (Host, Origin, Content-Type, body size) are in ``_guard``; the
  JSON depth and run-id rules are applied here, as 413/415/422, never a 500.  A
  500 carries only a correlation id; the exception goes to the log under it.
"""

from __future__ import annotations

import contextlib
import hmac
import inspect
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from importlib import resources
from typing import Any  # Any: JSON bodies; ASGI scope, receive and send

import attrs

from agentrt._runtime.runtime import Runtime
from agentrt._runtime.stream import END_KINDS, MAX_EVENT_ID
from agentrt._sdk.agent import Agent, agent_spec, load_agent
from agentrt.asgi._guard import (
    LOOPBACK_HOSTS,
    MAX_BODY_BYTES,
    MAX_JSON_DEPTH,
    EdgeGuard,
    json_depth,
    run_id_problem,
)
from agentrt.exceptions import (
    AgentrtError,
    CannotRetry,
    CheckpointNotFound,
    LeaseHeld,
    MissingExecutor,
    NotWaiting,
    RunExists,
    RunNotFound,
    SchemaError,
)
from agentrt.stores.base import RunRecord

try:
    from sse_starlette.sse import EventSourceResponse
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"agentrt.asgi needs the 'serve' extra ({exc.name} is not installed): pip install 'agentrt[serve]'"
    ) from exc

__all__ = ["STATUSES", "create_app"]

log = logging.getLogger("agentrt.asgi")

#: Run statuses a ``GET /runs?status=`` may ask for (spec §6.1).
STATUSES = ("queued", "running", "waiting", "blocked", "completed", "failed", "cancelled")
#: Paths served without a token: the page and its assets hold no run data; the page asks for the token.
PUBLIC_PATHS = ("/", "/static/")

#: The answer to every API request when the app's lifespan never ran and the host never entered
#: the runtime: nothing would drive, recover or time out a run, so nothing is accepted.
NOT_STARTED = (
    "the runtime behind this agentrt app was never started, so no run would be driven or recovered: "
    "the app's lifespan did not run (Starlette runs only the outer app's lifespan, so an app mounted "
    "with Mount(...) gets none); start it in the host's lifespan with `async with runtime:` "
    "(docs/embedding.md, 'Mounting the app in a host service')"
)

#: How long ``POST /runs/ID/reply`` waits for the run to leave the question it answered.
REPLY_SETTLE_SECONDS = 2.0

TenantHook = Callable[[Request], "str | Awaitable[str | None] | None"]


class ApiError(Exception):
    """An error answer: ``{"error": {"code": code, "message": message}}`` with ``status``."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def _allowed_agents(agents: Iterable[Agent | str]) -> dict[str, Agent]:
    """Agents by every key a request may use: ``MODULE:ATTR`` and the agent's own name."""
    table: dict[str, Agent] = {}
    for item in agents:
        agent = load_agent(item) if isinstance(item, str) else item
        if not isinstance(agent, Agent):
            raise TypeError(
                f"create_app(agents=[...]) takes agent(...) values or 'MODULE:ATTR', got {item!r}"
            )
        spec = item if isinstance(item, str) else agent_spec(agent)
        if spec:
            table[spec] = agent
            canonical = agent_spec(agent)
            if canonical:
                table[canonical] = agent
        table.setdefault(agent.name, agent)
    return table


class _Api:
    """The handlers, sharing the runtime, the allowed agents and the tenant hook."""

    def __init__(
        self,
        runtime: Runtime,
        agents: dict[str, Agent],
        tenant: TenantHook | None,
        ping_seconds: float,
        has_token: bool,
    ) -> None:
        self.has_token = has_token
        self.rt = runtime
        self.agents = agents
        self.tenant_hook = tenant
        self.ping_seconds = ping_seconds

    # -- helpers

    async def tenant_of(self, request: Request) -> str | None:
        if self.tenant_hook is None:
            return None
        value = self.tenant_hook(request)
        if inspect.isawaitable(value):
            value = await value
        if value is None:
            raise ApiError(403, "no_tenant", "this request maps to no tenant; it may not see any run")
        if not isinstance(value, str):
            raise TypeError(f"the tenant hook must return a str or None, got {value!r}")
        return value

    def root_of(self, rec: RunRecord) -> str:
        """The id of the top-level run of ``rec`` (sub-agent runs belong to their root's tenant)."""
        from agentrt.stores.views import root_of

        return root_of(self.rt.store, rec).run_id  # bounded, and stops at a cycle

    def belongs(self, rec: RunRecord, mine: set[str]) -> bool:
        """Whether ``rec`` is one of a tenant's runs (``mine``: its top-level runs) or a sub-run of one."""
        return rec.run_id in mine or (rec.parent_id is not None and self.root_of(rec) in mine)

    async def visible_run(self, request: Request) -> RunRecord:
        run_id = request.path_params["run_id"]
        tenant = await self.tenant_of(request)
        rec = self.rt.store.get_run(run_id)
        if rec is not None and tenant is not None and self.rt.store.get_tenant(self.root_of(rec)) != tenant:
            rec = None
        if rec is None:
            raise ApiError(404, "unknown_run", f"no run {run_id!r}; GET /runs lists the runs you can see")
        return rec

    @staticmethod
    async def json_body(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if json_depth(raw) > MAX_JSON_DEPTH:
            raise ApiError(
                422, "too_deep", f"the request body nests deeper than {MAX_JSON_DEPTH} arrays/objects"
            )
        try:
            body = json.loads(raw) if raw.strip() else None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ApiError(400, "bad_json", f"the request body is not valid JSON: {exc}") from None
        except (ValueError, RecursionError):  # e.g. an integer over Python's 4300-digit limit
            raise ApiError(
                422, "invalid_body", "the request body holds a value too large to read (a number's digits)"
            ) from None
        if not isinstance(body, dict):
            raise ApiError(422, "invalid_body", "the request body must be a JSON object")
        return body

    # -- handlers

    async def start(self, request: Request) -> Response:
        body = await self.json_body(request)
        name = body.get("agent")
        if not isinstance(name, str) or not name:
            raise ApiError(422, "invalid_field", "field 'agent': required, the name of an allowed agent")
        agent = self.agents.get(name)
        if agent is None:
            allowed = ", ".join(sorted(self.agents)) or "none"
            raise ApiError(
                404,
                "unknown_agent",
                f"field 'agent': {name!r} is not an agent this server starts (allowed: {allowed}); "
                "only the agents given to agentrt serve --import or create_app(agents=[...]) can be "
                "started over HTTP",
            )
        run_id = body.get("run_id")
        problem = None if run_id is None else run_id_problem(run_id)
        if problem is not None:
            raise ApiError(422, "invalid_field", f"field 'run_id': {problem}")
        tenant = await self.tenant_of(request)
        run_id = run_id or uuid.uuid4().hex[:12]
        # The tenant is recorded by the store in the transaction that creates the run, after the input
        # is validated: a refused request leaves no row that could claim someone else's later run.
        # A taken id answers 409 whoever holds it (its owner, another tenant, the CLI): the answer
        # says only that the id is taken, never whose it is or what it holds.
        try:
            await self.rt.start(agent, body.get("input", {}), run_id=run_id, tenant=tenant)
        except SchemaError as exc:
            raise ApiError(422, "invalid_input", f"field '{exc.path}': {exc.problem}") from None
        except RunExists:
            raise ApiError(
                409,
                "run_exists",
                f"field 'run_id': the id {run_id!r} is taken; choose another, or omit run_id for a "
                "server-chosen one",
            ) from None
        except MissingExecutor as exc:
            raise ApiError(500, "missing_executor", str(exc)) from None
        rec = self.rt.status(run_id)
        return JSONResponse({"run_id": run_id, "status": rec.status}, status_code=201)

    async def list_runs(self, request: Request) -> Response:
        from agentrt.stores.views import listing_object

        status = request.query_params.get("status") or None
        if status is not None and status not in STATUSES:
            raise ApiError(422, "invalid_field", f"query 'status': must be one of {', '.join(STATUSES)}")
        limit_text = request.query_params.get("limit")
        limit = None
        if limit_text:
            if not _is_int64_text(limit_text):
                raise ApiError(422, "invalid_field", "query 'limit': must be an integer from 0 to 2**63-1")
            limit = int(limit_text) or None
        tenant = await self.tenant_of(request)
        runs = self.rt.runs(status=status, limit=None if tenant is not None else limit)
        if tenant is not None:
            mine = self.rt.store.tenant_runs(tenant)
            runs = [r for r in runs if self.belongs(r, mine)]
            runs = runs[:limit] if limit else runs
        return JSONResponse({"runs": [listing_object(r) for r in runs]})

    async def list_agents(self, request: Request) -> Response:
        """The agents ``POST /runs`` starts, each once, with the JSON schema of its input (the page
        builds its start form from it)."""
        await self.tenant_of(request)  # a request that maps to no tenant sees nothing here either
        keys: dict[int, list[str]] = {}  # every key of one agent (MODULE:ATTR, its name), by agent
        for key, agent in self.agents.items():
            keys.setdefault(id(agent), []).append(key)
        seen: dict[int, dict[str, Any]] = {}
        for key, agent in self.agents.items():
            if id(agent) in seen:
                continue
            # spec: a value POST /runs takes, MODULE:ATTR where there is one (the name otherwise)
            spec = agent_spec(agent) or next((k for k in keys[id(agent)] if ":" in k), key)
            seen[id(agent)] = {
                "name": agent.name,
                "spec": spec,
                "description": agent.description or "",
                "input_schema": agent.input_json_schema(),
            }
        return JSONResponse({"agents": sorted(seen.values(), key=lambda a: str(a["name"]))})

    async def workers(self, request: Request) -> Response:
        """The fleet, as ``agentrt workers --json`` prints it; with tenants, only the caller's runs
        are named (the runs each worker holds, the stranded runs)."""
        from agentrt.stores.fleet import fleet_object, read_fleet

        tenant = await self.tenant_of(request)
        fleet = read_fleet(self.rt.store)
        if tenant is not None:
            mine = self.rt.store.tenant_runs(tenant)

            def visible(run_id: str) -> bool:
                rec = self.rt.store.get_run(run_id)
                return rec is not None and self.belongs(rec, mine)

            fleet = attrs.evolve(
                fleet,
                holding={owner: tuple(filter(visible, ids)) for owner, ids in fleet.holding.items()},
                stranded=tuple(s for s in fleet.stranded if self.belongs(s.run, mine)),
            )
        return JSONResponse(fleet_object(fleet))

    async def show(self, request: Request) -> Response:
        from agentrt.stores.views import show_object

        rec = await self.visible_run(request)
        return JSONResponse(show_object(self.rt.store, rec, events=200))

    async def reply(self, request: Request) -> Response:
        rec = await self.visible_run(request)
        body = await self.json_body(request)
        if "value" not in body:
            raise ApiError(422, "invalid_field", "field 'value': required, the answer to the run's question")
        from agentrt._runtime.replied import status_after_reply

        try:
            target = await self.rt.reply(rec.run_id, body["value"])
        except NotWaiting as exc:
            raise ApiError(409, "not_waiting", str(exc)) from None
        except LeaseHeld as exc:
            raise ApiError(409, "lease_held", str(exc)) from None
        # The status the reply led to (running, the next question, done), not the `waiting` the
        # row shows until this server's driver takes the reply, a moment later.
        question = rec.seq if target == rec.run_id else None
        after, _taken = await status_after_reply(self.rt, rec.run_id, question, REPLY_SETTLE_SECONDS)
        answer: dict[str, Any] = {"run_id": rec.run_id, "status": after.status}
        if target != rec.run_id:
            answer["replied_to"] = target
        return JSONResponse(answer, status_code=202)

    async def cancel(self, request: Request) -> Response:
        rec = await self.visible_run(request)
        if rec.finished:
            raise ApiError(409, "finished", f"run {rec.run_id!r} is {rec.status}; there is nothing to cancel")
        cancelled = await self.rt.cancel(rec.run_id)
        answer: dict[str, Any] = {"run_id": rec.run_id, "status": self.rt.status(rec.run_id).status}
        answer["runs"] = cancelled
        return JSONResponse(answer, status_code=202)

    async def retry(self, request: Request) -> Response:
        """``POST /runs/{run_id}/retry``: only a run of the caller's tenant and of an agent served here."""
        from agentrt._runtime.retry import HTTP_WORDS

        rec = await self.visible_run(request)
        body = await self.json_body(request) if (await request.body()).strip() else {}
        from_seq = body.get("from_seq")
        if from_seq is not None and (
            isinstance(from_seq, bool) or not isinstance(from_seq, int) or not 1 <= from_seq < 2**63
        ):
            raise ApiError(
                422, "invalid_field", "field 'from_seq': must be a checkpoint number (an integer >= 1)"
            )
        served = {agent_spec(a) or name for name, a in self.agents.items()} | set(self.agents)
        if rec.agent not in served:
            raise ApiError(
                409,
                "agent_not_served",
                f"run {rec.run_id!r} is a run of {rec.agent!r}, which this server does not serve; start the "
                "server with --import for its module (or agents=[...]) to retry it here",
            )
        try:
            await self.rt.retry(rec.run_id, from_seq, words=HTTP_WORDS)
        except CannotRetry as exc:
            raise ApiError(409, "not_retryable", str(exc)) from None
        except CheckpointNotFound as exc:
            raise ApiError(422, "invalid_field", f"field 'from_seq': {exc}") from None
        except LeaseHeld as exc:
            raise ApiError(409, "lease_held", str(exc)) from None
        except MissingExecutor as exc:
            raise ApiError(500, "missing_executor", str(exc)) from None
        return JSONResponse(
            {"run_id": rec.run_id, "status": self.rt.status(rec.run_id).status}, status_code=202
        )

    async def team(self, request: Request) -> Response:
        """``GET /runs/{run_id}/team``: a team run as its lanes (from the store; empty lanes for a run
        that is not a team)."""
        from agentrt.stores.views import team_object

        rec = await self.visible_run(request)
        return JSONResponse(team_object(self.rt.store, rec.run_id))

    async def dump(self, request: Request) -> Response:
        from agentrt.inspection import dump_run, to_json

        rec = await self.visible_run(request)
        allow = sorted({a.run.__module__ for a in self.agents.values()})
        try:
            dump = dump_run(self.rt.store, rec.run_id, None, allow)
        except AgentrtError as exc:
            raise ApiError(409, "no_checkpoint", str(exc)) from None
        return JSONResponse(to_json(dump))

    async def events(self, request: Request) -> Response:
        after_text = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
        after_text = after_text.strip()
        if not _is_int64_text(after_text):
            raise ApiError(
                422,
                "invalid_field",
                "Last-Event-ID / query 'after': must be an event id (an integer from 0 to 2**63-1)",
            )
        after = int(after_text)
        rec = await self.visible_run(request)
        return EventSourceResponse(
            self._sse(rec.run_id, after),
            ping=self.ping_seconds,
            sep="\n",  # one-byte line ends: no client can see half of a CR LF split across reads
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def _sse(self, run_id: str, after: int) -> AsyncIterator[dict[str, Any]]:
        from agentrt.stores.views import result_object

        async for event in self.rt.subscribe(run_id, after):
            if event.kind in END_KINDS and not self.rt.events(run_id, event.id, 1):  # (a retry goes on)
                final = result_object(self.rt.status(run_id))
                yield {"id": str(event.id), "event": "end", "data": json.dumps(final)}
                return
            data = {"id": event.id, "kind": event.kind, "at": event.created_at, "data": event.data}
            yield {"id": str(event.id), "event": event.kind, "data": json.dumps(data)}
        # The run ended without a stored end event (its process died while finishing it): say so anyway.
        yield {"event": "end", "data": json.dumps(result_object(self.rt.status(run_id)))}

    async def page(self, request: Request) -> Response:
        return FileResponse(str(_static_dir() / "index.html"), media_type="text/html")

    async def openapi(self, request: Request) -> Response:
        from agentrt.asgi._openapi import document

        return JSONResponse(document(sorted(self.agents), STATUSES, token=self.has_token))


class _BearerAuth:
    """ASGI middleware: API requests need ``Authorization: Bearer TOKEN`` (compared in constant time)."""

    def __init__(self, app: Any, expected: bytes) -> None:
        self.app = app
        self.expected = expected

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and not (path == "/" or path.startswith("/static/")):
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                response = _error(
                    401,
                    "unauthorized",
                    f"{'wrong' if given else 'missing'} bearer token: send the header "
                    "'Authorization: Bearer TOKEN' (the --token / AGENTRT_TOKEN the server was started with)",
                    {"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _is_int64_text(text: str) -> bool:
    """Whether ``text`` is a count or event id the stores' 64-bit columns hold: ASCII digits only
    ("²".isdigit() is true, and int() refuses it), at most 19 of them (int() of a long string is
    costly, or refused)."""
    return text.isascii() and text.isdigit() and len(text.lstrip("0")) <= 19 and int(text) <= MAX_EVENT_ID


def _static_dir() -> Any:
    return resources.files("agentrt.asgi") / "static"


def create_app(
    runtime: Runtime,
    agents: Iterable[Agent | str] = (),
    *,
    token: str | None = None,
    tenant: TenantHook | None = None,
    close_runtime: bool = False,
    ping_seconds: float = 15.0,
    allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> Starlette:
    """The agentrt HTTP API and browser page as an ASGI app, driving runs with ``runtime``.

    - ``agents``: the only agents ``POST /runs`` may start (``agent(...)`` values or ``MODULE:ATTR``).
    - ``token``: when set, every API request needs ``Authorization: Bearer TOKEN`` (else 401);
      the page at ``/`` and its assets are public and ask for the token.
    - ``tenant``: ``tenant(request) -> str`` (or an ``async`` one): runs started through a request
      belong to its tenant, and a request sees, replies to, cancels and dumps only its tenant's runs.
      Returning None answers 403.
    - The runtime: if nobody entered it when the app starts, the app's lifespan enters it (so a
      worker runtime claims and drives the store's runnable runs: queued, interrupted, due timers,
      replied) and closes it at shutdown.  A host that entered it (``async with runtime`` in its own
      lifespan: needed when the app is mounted, since a mounted app's lifespan never runs) closes
      it.  While the runtime is not entered every API request answers 503 ``runtime_not_started``.
    - ``close_runtime``: close the runtime at shutdown even if the host entered it.
    - ``ping_seconds``: how often an idle event stream gets a keep-alive comment.
    - ``allowed_hosts``: the ``Host`` names the app answers (any port; or ``name:port``); others get
      403, which stops DNS rebinding.  The default is the loopback names; behind a proxy, list the
      names clients use, or ``["*"]`` if the host checks ``Host`` itself.
    - ``max_body_bytes``: the largest request body (413 above it; counted as it arrives).

    Whatever the options, a state-changing request (POST, PUT, PATCH, DELETE) needs
    ``Content-Type: application/json`` for a body (else 415) and an ``Origin`` that is absent or the
    app's own (else 403), so no page on another origin can drive it.  No CORS headers are sent.
    """
    if max_body_bytes < 1:
        raise ValueError(f"create_app(max_body_bytes={max_body_bytes!r}): must be a positive byte count")
    table = _allowed_agents(agents)
    api = _Api(runtime, table, tenant, ping_seconds, token is not None)
    expected = f"Bearer {token}".encode() if token is not None else None

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # A runtime nobody entered is entered here, so that the app as documented (module-level
        # Runtime, create_app, uvicorn) is a worker: it recovers interrupted runs, fires timers and
        # drives replies.  One the host entered is the host's to close (unless close_runtime).
        owned = not runtime.entered
        if owned:
            await runtime.__aenter__()
        try:
            yield
        finally:
            if owned or close_runtime:
                await runtime.close()

    refused: list[str] = []  # the not-started error is logged once, then only answered

    def not_started() -> Response:
        message = NOT_STARTED
        if not refused:
            refused.append(message)
            log.error("agentrt.asgi: %s", message)
        return _error(503, "runtime_not_started", message)

    def handle(method: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if not runtime.entered and method not in (api.page, api.openapi):
                return not_started()
            try:
                return await method(request)
            except ApiError as exc:
                return _error(exc.status, exc.code, exc.message, exc.headers)
            except RunNotFound as exc:
                return _error(404, "unknown_run", str(exc))

        return endpoint

    routes = [
        Route("/", handle(api.page), methods=["GET"]),
        Route("/openapi.json", handle(api.openapi), methods=["GET"]),
        Route("/agents", handle(api.list_agents), methods=["GET"]),
        Route("/runs", handle(api.start), methods=["POST"]),
        Route("/runs", handle(api.list_runs), methods=["GET"]),
        Route("/runs/{run_id}", handle(api.show), methods=["GET"]),
        Route("/workers", handle(api.workers), methods=["GET"]),
        Route("/runs/{run_id}/reply", handle(api.reply), methods=["POST"]),
        Route("/runs/{run_id}/cancel", handle(api.cancel), methods=["POST"]),
        Route("/runs/{run_id}/retry", handle(api.retry), methods=["POST"]),
        Route("/runs/{run_id}/events", handle(api.events), methods=["GET"]),
        Route("/runs/{run_id}/dump", handle(api.dump), methods=["GET"]),
        Route("/runs/{run_id}/team", handle(api.team), methods=["GET"]),
        Mount("/static", StaticFiles(directory=str(_static_dir())), name="static"),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        message = f"{request.method} {request.url.path}: {exc.detail}"
        if exc.status_code == 404:
            message += "; see GET /openapi.json for the endpoints"
        return _error(exc.status_code, code, message, getattr(exc, "headers", None))

    async def server_error(request: Request, exc: Exception) -> Response:
        incident = uuid.uuid4().hex[:16]
        log.error(
            "agentrt serve: %s %s failed (incident %s)",
            request.method,
            request.url.path,
            incident,
            exc_info=exc,
        )
        return _error(
            500,
            "internal",
            f"{request.method} {request.url.path}: the server failed; its log names the cause under "
            f"incident {incident}",
        )

    middleware = [Middleware(EdgeGuard, allowed_hosts=tuple(allowed_hosts), max_body_bytes=max_body_bytes)]
    if expected is not None:
        middleware.append(Middleware(_BearerAuth, expected=expected))
    app = Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={HTTPException: http_error, Exception: server_error},
    )

    return app
