"""``agentrt serve``: the HTTP API and the runs page (:mod:`agentrt.asgi`) under uvicorn.

The server is also a worker: its runtime claims and drives the store's runnable runs
(queued ones, interrupted ones, due timers, runs whose reply arrived while it was down).
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import importlib
import os
import socket
import sys
from typing import Any  # Any: Runtime keyword arguments of mixed types

from agentrt._cli.common import (
    EXIT_USAGE,
    add_runtime_options,
    add_store_option,
    executors,
    fail,
    guarded,
    lease_seconds,
    open_cli_store,
    step_budget,
)
from agentrt._sdk.agent import Agent, load_agent
from agentrt.exceptions import AgentSpecError

TOKEN_ENV = "AGENTRT_TOKEN"
#: The default request body limit (agentrt.asgi._guard.MAX_BODY_BYTES; kept here so ``--help``
#: does not import Starlette).
MAX_BODY_BYTES = 1024 * 1024
_LOOPBACK_ADDRESSES = ("127.0.0.1", "::1", "localhost")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve the HTTP API and the runs page",
        description="Serve the HTTP API (POST /runs, GET /runs, /runs/ID, reply, cancel, events, dump, "
        "/openapi.json) and the browser page at /. Only the agents named by --import can be started.",
    )
    serve.add_argument(
        "--import",
        dest="imports",
        metavar="MODULE",
        action="append",
        default=[],
        help="allow the agents defined at the top level of MODULE (or just MODULE:ATTR); repeatable",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    serve.add_argument(
        "--token",
        default=None,
        help=f"require 'Authorization: Bearer TOKEN' on every API request (default ${TOKEN_ENV})",
    )
    serve.add_argument(
        "--allow-host",
        dest="allow_hosts",
        metavar="HOST",
        action="append",
        default=[],
        help="also answer requests whose Host is HOST (a proxy's or this machine's name); repeatable. "
        "Without it only localhost, 127.0.0.1 and [::1] are answered",
    )
    serve.add_argument(
        "--max-body",
        type=int,
        default=MAX_BODY_BYTES,
        metavar="BYTES",
        help=f"the largest request body; larger ones answer 413 (default {MAX_BODY_BYTES}, 1 MiB)",
    )
    add_store_option(serve)
    add_runtime_options(serve)
    serve.set_defaults(handler=guarded(cmd_serve))


def allowed_agents(imports: list[str]) -> list[Agent]:
    """The agents named by ``--import`` values: every top-level agent of MODULE, or MODULE:ATTR."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    found: list[Agent] = []
    for name in imports:
        if ":" in name:
            found.append(load_agent(name))
            continue
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise AgentSpecError(f"--import {name}: cannot import it ({exc})") from None
        agents = [v for k, v in vars(module).items() if isinstance(v, Agent) and not k.startswith("_")]
        if not agents:
            raise AgentSpecError(f"--import {name}: the module defines no agent(...) at its top level")
        found.extend(agents)
    return found


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from agentrt.asgi import LOOPBACK_HOSTS, create_app
    except ImportError as exc:
        return fail(f"{exc}", EXIT_USAGE)
    from agentrt._runtime.runtime import Runtime
    from agentrt.observe import JsonlTraceExporter

    agents = allowed_agents(args.imports)
    if not agents:
        print("agentrt serve: no --import given; no agent can be started over HTTP", file=sys.stderr)
    token = args.token or os.environ.get(TOKEN_ENV) or None
    if args.max_body < 1:
        return fail(f"--max-body {args.max_body}: must be a positive number of bytes", EXIT_USAGE)
    if token is None and not _is_loopback(args.host):
        # Refused, not warned: without a token anyone who can reach the address drives the runs.
        return fail(
            f"--host {args.host}: a server without --token listens only on loopback (127.0.0.1, ::1); "
            f"give --token (or ${TOKEN_ENV}) to listen on {args.host}, or keep the default and put a "
            "proxy in front (with --allow-host for its name)",
            EXIT_USAGE,
        )
    allowed_hosts = [*LOOPBACK_HOSTS, *args.allow_hosts]
    if not _is_loopback(args.host) and args.host not in ("0.0.0.0", "::"):
        allowed_hosts.append(f"[{args.host}]" if ":" in args.host else args.host)
    try:
        listener = bind(args.host, args.port)  # before anything is announced or opened
    except OSError as exc:
        return fail(str(exc), EXIT_USAGE)
    try:
        store = open_cli_store(args)
    except BaseException:
        listener.close()
        raise
    extra: dict[str, Any] = {}
    if args.max_model_calls is not None:
        extra["max_model_calls"] = args.max_model_calls

    async def main() -> None:
        runtime = Runtime(
            store,
            step_budget_seconds=step_budget(args),
            lease_seconds=lease_seconds(),
            executors=executors(args),
            on_trace=[trace] if trace is not None else None,
            **extra,
        )
        app = create_app(
            runtime,
            agents,
            token=token,
            close_runtime=True,
            allowed_hosts=allowed_hosts,
            max_body_bytes=args.max_body,
        )
        config = uvicorn.Config(
            app, host=args.host, port=args.port, log_level="warning", timeout_graceful_shutdown=3
        )
        server = uvicorn.Server(config)
        print(f"agentrt serve: http://{args.host}:{args.port}/ (store {store.location})", file=sys.stderr)
        if args.host in ("0.0.0.0", "::") and not args.allow_hosts:
            print(
                f"agentrt serve: requests are answered only for Host {', '.join(allowed_hosts)}; give "
                "--allow-host NAME for each name or address clients reach this server by",
                file=sys.stderr,
            )
        await server.serve(sockets=[listener])

    trace = JsonlTraceExporter(args.trace) if args.trace else None
    try:
        asyncio.run(main())
    finally:
        listener.close()
        if trace is not None:
            trace.close()
        store.close()
    return 0


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, made before the server says it serves there, so a busy
    port is one error line (exit status 2), not an announcement followed by uvicorn's failure.
    Raises ``OSError`` whose message names the option, the address and what to do."""
    # As uvicorn binds --host: IPv6 when the address has a colon, else IPv4 (so `localhost` is 127.0.0.1).
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: restart at once
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except (socket.gaierror, OverflowError) as exc:
        sock.close()
        raise OSError(f"--host {host} --port {port}: not an address to listen on ({exc})") from None
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            message = (
                f"--port {port}: {host}:{port} is in use (another agentrt serve, or another server); "
                "choose another --port, or stop what listens there"
            )
        elif exc.errno == errno.EADDRNOTAVAIL:
            message = (
                f"--host {host}: not an address of this machine ({exc.strerror}); give one of its "
                "addresses, or 0.0.0.0 for all of them"
            )
        else:
            message = f"--host {host} --port {port}: cannot listen there ({exc.strerror})"
        raise OSError(message) from None
    return sock


def _is_loopback(host: str) -> bool:
    """Whether ``--host`` names a loopback address (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host in _LOOPBACK_ADDRESSES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
