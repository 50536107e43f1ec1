"""The HTTP API of agentrt, as an ASGI app: ``create_app(runtime, agents=[...])``.

``agentrt serve`` runs this app under uvicorn; a host service mounts it (or serves
it) next to its own routes.  Endpoints, statuses and JSON shapes are those of the
spec (``POST /runs``, ``GET /runs``, ``GET /runs/{id}``, ``POST /runs/{id}/reply``,
``POST /runs/{id}/cancel``, ``GET /runs/{id}/events`` (server-sent events whose ids
are the run's durable event ids), ``GET /runs/{id}/dump``, the browser page at
``/`` and ``/openapi.json``).  Needs the ``serve`` extra:
``pip install 'agentrt[serve]'``.
"""

from agentrt.asgi._app import create_app as create_app
from agentrt.asgi._guard import LOOPBACK_HOSTS as LOOPBACK_HOSTS

__all__ = [
    "LOOPBACK_HOSTS",
    "create_app",
]
