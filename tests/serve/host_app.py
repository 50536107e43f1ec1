"""A host service embedding agentrt: create_app with a tenant hook (header X-Tenant), no token.

    python host_app.py STORE PORT
"""

from __future__ import annotations

import asyncio
import sys

import uvicorn

import serve_agents
from agentrt import Runtime
from agentrt.asgi import create_app


def tenant_of(request) -> str | None:
    return request.headers.get("x-tenant")


async def main(store: str, port: int) -> None:
    async with Runtime(store=store, lease_seconds=2) as runtime:
        app = create_app(runtime, agents=[serve_agents.steps, serve_agents.asker], tenant=tenant_of)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        await server.serve()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
