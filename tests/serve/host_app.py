"""A host service embedding agentrt: create_app with a tenant hook (header X-Tenant), no token.

python host_app.py STORE PORT [AGENT,AGENT...]   (names in serve_agents; default steps,asker)
"""

from __future__ import annotations

import asyncio
import sys

import serve_agents
import uvicorn

from agentrt import Runtime
from agentrt.asgi import create_app


def tenant_of(request) -> str | None:
    return request.headers.get("x-tenant")


async def main(store: str, port: int, names: list[str]) -> None:
    agents = [getattr(serve_agents, name) for name in names]
    async with Runtime(store=store, lease_seconds=2) as runtime:
        app = create_app(runtime, agents=agents, tenant=tenant_of)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        await server.serve()


if __name__ == "__main__":
    names = sys.argv[3].split(",") if len(sys.argv) > 3 else ["steps", "asker"]
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), names))
