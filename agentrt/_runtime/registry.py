"""A worker's row in the store's worker registry: written at start, on change and as a heartbeat.

``agentrt workers`` shows a mixed fleet from its rows (:mod:`agentrt.stores.registry`): what each
worker runs and which code requirements it has judged it carries or lacks.  The runtime's lease
renewer calls :meth:`Advertiser.tick` every renewal interval; a tick writes only when something the
row shows changed (a requirement judged, an agent loaded) or when the last write is a lease old,
so an idle worker costs one small upsert per lease and a durable step costs nothing.  A clean
stop deletes the row; a killed worker's row goes stale on its own.

Writing the row is never the worker's failure: an error is logged once per streak, like a failed
lease renewal, and the next tick tries again.  A store without a registry (a custom store written
before it existed) is simply not advertised to.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import time
from collections.abc import Mapping
from typing import Protocol

from agentrt._codec import FORMAT_VERSION, READABLE_VERSIONS, code_digest
from agentrt._runtime.storeio import StoreIO
from agentrt._version import __version__
from agentrt.stores.base import Capability, Store, capabilities
from agentrt.stores.registry import AgentCode, CodeVerdict, WorkerInfo, requirement_key, requirement_summary

__all__ = ["Advertiser", "AdvertiserHost"]

logger = logging.getLogger("agentrt.worker")


class AdvertiserHost(Protocol):
    """What the advertiser reads of the runtime it advertises (``Runtime`` is one)."""

    store: Store
    #: Every store call goes through it (never on the event loop).
    io: StoreIO
    concurrency: int

    @property
    def owner(self) -> str: ...
    @property
    def lease_seconds(self) -> float: ...
    @property
    def judged_version(self) -> int:
        """Bumped whenever a code requirement is judged."""
        ...

    @property
    def loaded_agents(self) -> Mapping[str, object]: ...
    def judged(self) -> tuple[list[str], list[tuple[str, str]]]: ...


class Advertiser:
    """Keeps one runtime's registry row up to date (see the module docstring)."""

    def __init__(self, runtime: AdvertiserHost) -> None:
        self.rt = runtime
        self.started_at = time.time()
        self._written_at: float | None = None
        self._written: tuple[int, int] | None = None  # (judged version, agents loaded) last written
        self._failing = False
        self._supported = Capability.WORKER_REGISTRY in capabilities(runtime.store)

    async def tick(self, *, force: bool = False) -> None:
        """Write the row if it changed, or if the last write is a lease old (or ``force``)."""
        if not self._supported:
            return
        rt = self.rt
        state = (rt.judged_version, len(rt.loaded_agents))
        now = time.time()
        due = self._written_at is None or now - self._written_at >= rt.lease_seconds
        if not (force or due or state != self._written):
            return
        try:
            await rt.io(rt.store.advertise_worker, self.info(now))
        except Exception as exc:
            if not self._failing:
                logger.warning(
                    "agentrt worker: advertising in the worker registry failed (%s: %s); retrying every "
                    "%.2f s (agentrt workers shows this worker as gone meanwhile)",
                    type(exc).__name__,
                    exc,
                    max(rt.lease_seconds / 3, 0.05),
                )
            self._failing = True
            return
        self._failing = False
        self._written_at, self._written = now, state

    async def forget(self) -> None:
        """Delete the row (a clean stop); a store in trouble leaves it to go stale."""
        if not self._supported or self._written_at is None:
            return
        try:
            await self.rt.io(self.rt.store.forget_worker, self.rt.owner)
        except Exception as exc:
            logger.warning(
                "agentrt worker: could not remove this worker from the registry (%s: %s); it shows as "
                "gone once it is stale",
                type(exc).__name__,
                exc,
            )

    def info(self, now: float) -> WorkerInfo:
        rt = self.rt
        carried, lacking = rt.judged()
        return WorkerInfo(
            owner=rt.owner,
            host=socket.gethostname(),
            pid=os.getpid(),
            started_at=self.started_at,
            last_seen=now,
            version=f"agentrt {__version__}",
            python=f"{sys.version_info[0]}.{sys.version_info[1]}",
            reads_formats=tuple(READABLE_VERSIONS),
            writes_format=FORMAT_VERSION,
            lease_seconds=rt.lease_seconds,
            concurrency=rt.concurrency,
            agents=tuple(_agent_code(spec, agent) for spec, agent in rt.loaded_agents.items()),
            carried=tuple(CodeVerdict(requirement_key(t), requirement_summary(t)) for t in carried),
            lacking=tuple(CodeVerdict(requirement_key(t), requirement_summary(t), r) for t, r in lacking),
        )


def _agent_code(spec: str, agent: object) -> AgentCode:
    """The agent's ``run`` function as ``module:qualname digest`` (what a checkpoint of it names)."""
    run = getattr(agent, "run", None)
    code = getattr(run, "__code__", None)
    if code is None:
        return AgentCode(spec, "")
    module = getattr(run, "__module__", "?")
    return AgentCode(spec, f"{module}:{code.co_qualname} {code_digest(code)}")
