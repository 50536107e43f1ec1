"""Leases: which process drives a run, and for how long.

A runtime drives a run only while it holds the run's lease in the store (owner
= ``host/pid/nonce``; ending ``~s`` on a store with owner sessions, PostgreSQL's,
which holds a session for it: see :mod:`agentrt.stores._pg_sessions`).  It takes
the lease before driving, renews every lease it holds at a third of
``lease_seconds``, and gives it back when the run finishes, parks or is evicted.
Another process may take over a run whose lease expired, or at once when the
owner's pid is dead on this machine or its session ended (any machine); the
store then refuses the old owner's writes (:class:`~agentrt.stores.base.LeaseLost`).

Giving back or renewing can fail when the store is in trouble; that is not the
run's failure (the lease simply expires), so it is logged, not raised.

The methods here are synchronous store calls: the runtime makes them through its I/O seam
(``await io(leases.acquire, run_id)``, :mod:`agentrt._runtime.storeio`), never on the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import cast

from agentrt._runtime.storeio import StoreIO
from agentrt.stores.base import Capability, RunRecord, SessionOwners, Store, capabilities, make_owner

__all__ = ["Leases"]

logger = logging.getLogger("agentrt.runtime")


class Leases:
    """The leases one runtime holds in one store."""

    def __init__(self, store: Store, lease_seconds: float, owner: str | None = None) -> None:
        self.store = store
        self.owner = owner or make_owner(session=Capability.OWNER_SESSIONS in capabilities(store))
        self.seconds = float(lease_seconds)

    def acquire(self, run_id: str) -> RunRecord:
        """Take (or extend) the lease on ``run_id``; raises :class:`~agentrt.LeaseHeld` if another has it."""
        return self.store.acquire_lease(run_id, self.owner, self.seconds)

    def release(self, run_id: str) -> None:
        """Give the lease back; a store that cannot is logged (the lease then expires on its own)."""
        try:
            self.store.release_lease(run_id, self.owner)
        except Exception as exc:
            logger.warning(
                "agentrt: could not release the lease on run %r (%s: %s); it expires in %.1f s",
                run_id,
                type(exc).__name__,
                exc,
                self.seconds,
            )

    def end_session(self) -> None:
        """This owner is done with a store handle that outlives it (one the caller shares): on a store
        with owner sessions its session lock goes now, so that nothing it held looks alive; a store
        that is closed ends its sessions itself.  A failure is logged (the session ends with the
        handle)."""
        if Capability.OWNER_SESSIONS not in capabilities(self.store):
            return
        try:
            cast(SessionOwners, self.store).end_owner_session(self.owner)
        except Exception as exc:
            logger.warning(
                "agentrt: could not end the session of %s (%s: %s)", self.owner, type(exc).__name__, exc
            )

    @property
    def renew_interval(self) -> float:
        """Seconds between renewals: a third of the lease, so two renewals may fail before it lapses."""
        return max(self.seconds / 3, 0.05)

    async def renew_forever(
        self,
        io: StoreIO,
        held: Callable[[], list[str]],
        on_tick: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Renew the leases of the runs ``held()`` returns, until cancelled; ``on_tick`` is called
        at every interval too (a worker's registry heartbeat; it handles its own errors).

        A failed renewal is logged once per streak of failures; if the lease
        lapses meanwhile, the store's :class:`LeaseLost` stops that run's driver.
        """
        failing = False
        while True:
            await asyncio.sleep(self.renew_interval)
            if on_tick is not None:
                await on_tick()
            run_ids = held()
            if not run_ids:
                continue
            try:
                await io(self.store.renew_leases, self.owner, run_ids, self.seconds)
            except Exception as exc:
                if not failing:
                    logger.warning(
                        "agentrt: renewing %d lease(s) failed (%s: %s); retrying every %.2f s",
                        len(run_ids),
                        type(exc).__name__,
                        exc,
                        self.renew_interval,
                    )
                failing = True
            else:
                failing = False
