"""The OpenAPI 3 document of the HTTP API (``GET /openapi.json``), written out rather than inferred:
it is the contract (spec §6.2) that the tests check the app against with schemathesis."""

from __future__ import annotations

from typing import Any  # Any: the OpenAPI document is JSON

from agentrt.asgi._guard import MAX_RUN_ID_CHARS

__all__ = ["document"]


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    text = {
        400: "the body is not valid JSON",
        401: "missing or wrong bearer token",
        403: "refused at the edge: the Host is not a name this server answers (host_not_allowed), "
        "a state-changing request's Origin is not the server's own (cross_origin), or the request "
        "maps to no tenant (no_tenant)",
        404: "unknown run (or a run of another tenant), or unknown agent",
        409: "conflict (run exists; not waiting on a question; already answered; no checkpoint yet; "
        "already finished; not failed nor blocked, so nothing to retry)",
        413: "the request body is over the server's limit (--max-body, default 1 MiB)",
        415: "a state-changing request's body is not 'Content-Type: application/json'",
        422: "a field or parameter is invalid, or the JSON nests deeper than 64; the message names it",
        500: "the server cannot do it (e.g. a model executor is missing); an unexpected failure names "
        "only an incident id, under which the server's log holds the cause",
    }
    return {str(c): _json(_ref("Error"), text[c]) for c in codes}


_INT64 = {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}  # the stores' 64-bit integers
_RUN_ID = {"name": "run_id", "in": "path", "required": True, "schema": {"type": "string"}}


def document(agents: list[str], statuses: tuple[str, ...], *, token: bool = False) -> dict[str, Any]:
    """The document for a server that starts ``agents`` (the allowed ``agent`` values)."""
    auth = (401,) if token else ()
    tenant = (403,)  # also the edge's Host and Origin refusals (agentrt.asgi._guard)
    body = (413, 415)  # state-changing requests: the edge's body size and Content-Type rules
    schemas: dict[str, Any] = {
        "Error": {
            "type": "object",
            "required": ["error"],
            "properties": {
                "error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                }
            },
        },
        "StartRun": {
            "type": "object",
            "required": ["agent"],
            "properties": {
                "agent": {"type": "string", "enum": agents} if agents else {"type": "string"},
                "input": {"type": "object"},
                "run_id": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_RUN_ID_CHARS,
                    "pattern": "^[A-Za-z0-9][A-Za-z0-9_:@-]*$",
                },
            },
        },
        "Reply": {"type": "object", "required": ["value"], "properties": {"value": {}}},
        "Retry": {
            "type": "object",
            "properties": {
                "from_seq": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 2**63 - 1,
                    "description": "the checkpoint to restart from (default: the newest)",
                }
            },
        },
        "Blocked": {
            "type": "object",
            "description": "why a blocked run is blocked: the AR code, the message (with the fix), the agent "
            "function, the line and the variable, each null when not known",
            "required": ["code", "message", "function", "lineno", "variable"],
            "properties": {
                "code": {"type": "string", "nullable": True},
                "message": {"type": "string"},
                "function": {"type": "string", "nullable": True},
                "lineno": {"type": "integer", "nullable": True},
                "variable": {"type": "string", "nullable": True},
            },
        },
        "Accepted": {
            "type": "object",
            "required": ["run_id", "status"],
            "properties": {
                "run_id": {"type": "string"},
                "status": {"type": "string", "enum": list(statuses)},
                "replied_to": {"type": "string"},
                "runs": {"type": "array", "items": {"type": "string"}},
            },
        },
        "Run": {
            "type": "object",
            "description": "as `agentrt runs --json` prints each run",
            "required": ["run_id", "status", "agent"],
            "properties": {
                "run_id": {"type": "string"},
                "status": {"type": "string", "enum": list(statuses)},
                "agent": {"type": "string"},
                "output": {},
                "error": {"type": "object"},
                "seq": {"type": "integer"},
                "pending": {},
                "waiting_on": {"type": "string"},
                "prompt": {},
                "interrupted": {"type": "boolean"},
                "blocked": _ref("Blocked"),
                "parent_id": {"type": "string"},
                "usage": {"type": "object"},
                "created_at": {"type": "number", "description": "seconds since the epoch"},
                "updated_at": {"type": "number", "description": "seconds since the epoch"},
            },
        },
        "Agent": {
            "type": "object",
            "required": ["name", "spec", "description", "input_schema"],
            "properties": {
                "name": {"type": "string"},
                "spec": {"type": "string", "description": "MODULE:ATTR, a value POST /runs takes as `agent`"},
                "description": {"type": "string"},
                "input_schema": {"type": "object", "description": "the JSON schema of the agent's input"},
            },
        },
        "RunDetail": {
            "description": "as `agentrt show ID --json` prints it",
            "allOf": [
                _ref("Run"),
                {
                    "type": "object",
                    "required": ["input", "checkpoints", "children", "events"],
                    "properties": {
                        "input": {},
                        "checkpoints": {"type": "array", "items": {"type": "object"}},
                        "children": {"type": "array", "items": {"type": "object"}},
                        "events": {"type": "array", "items": {"type": "object"}},
                    },
                },
            ],
        },
        "StreamEvent": {
            "type": "object",
            "description": "one server-sent event: `id` the run's durable event id (absent only on an `end` "
            "sent for a run whose end was not recorded), `event` its kind, `data` JSON text",
            "required": ["event", "data"],
            "properties": {
                "id": {"type": "string", "pattern": "^[0-9]+$"},
                "event": {"type": "string"},
                "data": {"type": "string"},
            },
        },
        "Fleet": {
            "type": "object",
            "description": "as `agentrt workers --json` prints it: the workers of the store's registry "
            "(live first, then gone), each with what it carries and lacks, and the stranded runs (no live "
            "worker carries their code); with tenants, only the caller's runs are named",
            "required": ["store", "workers", "stranded"],
            "properties": {
                "store": {"type": "string"},
                "workers": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["owner", "live", "runs", "carried", "lacking"],
                        "properties": {
                            "owner": {"type": "string"},
                            "live": {"type": "boolean"},
                            "runs": {"type": "array", "items": {"type": "string"}},
                            "carried": {"type": "array", "items": {"type": "object"}},
                            "lacking": {"type": "array", "items": {"type": "object"}},
                        },
                    },
                },
                "stranded": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["run_id", "status", "reasons"],
                        "properties": {
                            "run_id": {"type": "string"},
                            "status": {"type": "string"},
                            "reasons": {"type": "array", "items": {"type": "object"}},
                        },
                    },
                },
            },
        },
        "TeamStatus": {
            "type": "object",
            "description": "a team run as its lanes, as `agentrt teams status RUN --json` prints it "
            "(lanes: the lanes dispatched so far; empty for a run that is not a team)",
            "required": ["run_id", "status", "gate", "goal_status", "lanes"],
            "properties": {
                "run_id": {"type": "string"},
                "status": {"type": "string"},
                "gate": {"type": "string", "nullable": True},
                "goal_status": {"type": "string", "nullable": True},
                "lanes": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["task_id", "specialist", "tier", "model", "state", "live", "attempts"],
                        "properties": {
                            "task_id": {"type": "string"},
                            "specialist": {"type": "string"},
                            "tier": {"type": "string"},
                            "model": {"type": "string"},
                            "state": {"type": "string"},
                            "live": {"type": "boolean"},
                            "attempts": {"type": "integer"},
                            "receipts": {"type": "integer"},
                            "escalations": {"type": "integer"},
                            "reviews": {"type": "integer"},
                            "review_rounds": {"type": "integer"},
                        },
                    },
                },
            },
        },
        "Dump": {
            "type": "object",
            "description": "as `agentrt dump ID --json` prints it: source, header, frames "
            "(each with source context, locals and value stack), pending request",
        },
    }
    paths: dict[str, Any] = {
        "/runs": {
            "post": {
                "summary": "Start a run of an allowed agent",
                "operationId": "startRun",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("StartRun")}},
                },
                "responses": {
                    "201": _json(_ref("Accepted"), "the run is recorded and being driven"),
                    **_errors(400, *auth, *tenant, 404, 409, *body, 422, 500),
                },
            },
            "get": {
                "summary": "List runs (newest first)",
                "operationId": "listRuns",
                "parameters": [
                    {"name": "status", "in": "query", "schema": {"type": "string", "enum": list(statuses)}},
                    {"name": "limit", "in": "query", "schema": _INT64},
                ],
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "required": ["runs"],
                            "properties": {"runs": {"type": "array", "items": _ref("Run")}},
                        },
                        "the runs",
                    ),
                    **_errors(*auth, *tenant, 422),
                },
            },
        },
        "/runs/{run_id}": {
            "get": {
                "summary": "One run: status, output or error, pending request, checkpoints, events",
                "operationId": "showRun",
                "parameters": [_RUN_ID],
                "responses": {"200": _json(_ref("RunDetail"), "the run"), **_errors(*auth, *tenant, 404)},
            }
        },
        "/runs/{run_id}/reply": {
            "post": {
                "summary": "Answer the task.ui.ask the run waits on (journaled before the answer)",
                "operationId": "replyRun",
                "parameters": [_RUN_ID],
                "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("Reply")}}},
                "responses": {
                    "202": _json(_ref("Accepted"), "the reply is journaled; the run goes on"),
                    **_errors(400, *auth, *tenant, 404, 409, *body, 422),
                },
            }
        },
        "/runs/{run_id}/cancel": {
            "post": {
                "summary": "Cancel the run",
                "operationId": "cancelRun",
                "parameters": [_RUN_ID],
                "responses": {
                    "202": _json(_ref("Accepted"), "cancellation is recorded; `runs`: the runs cancelled"),
                    **_errors(*auth, *tenant, 404, 409, *body),
                },
            }
        },
        "/runs/{run_id}/retry": {
            "post": {
                "summary": "Restart a failed or blocked run from its newest (or the given) checkpoint, "
                "on the code the server runs",
                "description": "Tool calls that completed at that checkpoint are not made again; calls that "
                "failed are. The body may be empty.",
                "operationId": "retryRun",
                "parameters": [_RUN_ID],
                "requestBody": {
                    "required": False,
                    "content": {"application/json": {"schema": _ref("Retry")}},
                },
                "responses": {
                    "202": _json(_ref("Accepted"), "the run is running again"),
                    **_errors(400, *auth, *tenant, 404, 409, *body, 422, 500),
                },
            }
        },
        "/runs/{run_id}/events": {
            "get": {
                "summary": "The run's events as server-sent events; `id:` is the run's durable event id",
                "description": "Each event: `id:` the event id, `event:` its kind, `data:` a JSON object "
                "`{id, kind, at, data}`. After the run ends: one `event: end` whose data is the final "
                "status object, then the stream closes. `Last-Event-ID` (or `?after=N`) resumes after N.",
                "operationId": "runEvents",
                "parameters": [
                    _RUN_ID,
                    {"name": "after", "in": "query", "schema": _INT64},
                    {"name": "Last-Event-ID", "in": "header", "schema": _INT64},
                ],
                "responses": {
                    "200": {
                        "description": "the event stream",
                        "content": {"text/event-stream": {"schema": _ref("StreamEvent")}},
                    },
                    **_errors(*auth, *tenant, 404, 422),
                },
            }
        },
        "/runs/{run_id}/dump": {
            "get": {
                "summary": "The frame dump of the run's newest checkpoint",
                "operationId": "dumpRun",
                "parameters": [_RUN_ID],
                "responses": {"200": _json(_ref("Dump"), "the dump"), **_errors(*auth, *tenant, 404, 409)},
            }
        },
        "/agents": {
            "get": {
                "summary": "The agents POST /runs starts, with the JSON schema of each one's input",
                "operationId": "listAgents",
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "required": ["agents"],
                            "properties": {"agents": {"type": "array", "items": _ref("Agent")}},
                        },
                        "the agents",
                    ),
                    **_errors(*auth, *tenant),
                },
            }
        },
        "/runs/{run_id}/team": {
            "get": {
                "summary": "A team run as its lanes: tier, model, state, live, attempts, receipts",
                "operationId": "showTeam",
                "parameters": [_RUN_ID],
                "responses": {"200": _json(_ref("TeamStatus"), "the team"), **_errors(*auth, *tenant, 404)},
            }
        },
        "/workers": {
            "get": {
                "summary": "The live workers, the code each carries or lacks, and the stranded runs",
                "operationId": "listWorkers",
                "responses": {"200": _json(_ref("Fleet"), "the fleet"), **_errors(*auth, *tenant)},
            }
        },
        "/": {
            "get": {
                "summary": "The browser page (public; it asks for the token)",
                "operationId": "page",
                "security": [],
                "responses": {
                    "200": {"description": "HTML", "content": {"text/html": {"schema": {"type": "string"}}}},
                    **_errors(*tenant),
                },
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "operationId": "openapi",
                "responses": {"200": _json({"type": "object"}, "OpenAPI 3"), **_errors(*auth, *tenant)},
            }
        },
    }
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {
            "title": "agentrt",
            "version": _version(),
            "description": "Durable agent runs over HTTP. Every request's Host must be "
            "one the server answers (by default localhost, 127.0.0.1, [::1]); a POST needs "
            "'Content-Type: application/json' for a body and an Origin that is absent or the server's own; "
            "bodies are limited (413), JSON nests at most 64 deep, client-chosen run ids are at most "
            f"{MAX_RUN_ID_CHARS} characters of letters, digits and _ : @ - "
            "(no '.': it is kept for sub-run ids).",
        },
        "paths": paths,
        "components": {"schemas": schemas},
    }
    if token:
        doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        doc["security"] = [{"bearer": []}]
    return doc


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("agentrt")
    except metadata.PackageNotFoundError:
        return "0+unknown"
