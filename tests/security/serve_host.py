"""A host embedding ``create_app`` with a tenant hook (header ``X-Tenant``) and the default edge
options: ``python serve_host.py STORE PORT``."""

from __future__ import annotations

import asyncio
import sys

import serve_targets
import uvicorn

from agentrt import Runtime
from agentrt.asgi import create_app


def tenant_of(request) -> str | None:  # type: ignore[no-untyped-def]
    return request.headers.get("x-tenant")


async def main(store: str, port: int) -> None:
    async with Runtime(store=store, lease_seconds=2) as runtime:
        app = create_app(runtime, agents=[serve_targets.order, serve_targets.secret], tenant=tenant_of)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        await server.serve()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
