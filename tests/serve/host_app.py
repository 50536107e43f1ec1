"""A host service embedding agentrt: create_app with a tenant hook (header X-Tenant), no token.

python host_app.py STORE PORT [AGENT,AGENT...]   (names in serve_agents; default steps,asker)
"""

from __future__ import annotations

import asyncio
import os
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
        # HOST_APP_PING_SECONDS: the keep-alive test need not wait the default 15 s for a comment.
        ping = float(os.environ.get("HOST_APP_PING_SECONDS", "15"))
        app = create_app(runtime, agents=agents, tenant=tenant_of, ping_seconds=ping)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        await server.serve()


if __name__ == "__main__":
    names = sys.argv[3].split(",") if len(sys.argv) > 3 else ["steps", "asker"]
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), names))
