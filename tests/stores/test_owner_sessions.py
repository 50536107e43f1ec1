"""Owner sessions (PostgreSQL): an owner's liveness lock, seen from another handle as from another
machine; a store with them off makes owners without a session (see agentrt/stores/_pg_sessions.py)."""

from __future__ import annotations

import pytest

from agentrt.stores import NewRun, SqliteStore, open_store
from agentrt.stores import _pg_sessions as sessions
from agentrt.stores.base import Capability, capabilities, has_session, make_owner

pytestmark = pytest.mark.postgres

#: An owner of another machine: no pid to check here, only its session says it is alive.
ELSEWHERE = "elsewhere.example/4242/0badc0de~s"


def _leased_run(store, run_id, owner):
    """A running run leased to ``owner`` for a minute (far from lapsing)."""
    store.create_run(
        NewRun(run_id, "tests.workers.agents:mixed", {"i": 1}, status="running", owner=owner, ttl_seconds=60)
    )


def test_an_owner_whose_session_ends_is_dead_for_every_other_handle(pg_url, monkeypatch):
    monkeypatch.setattr(sessions, "SETTLE_SECONDS", 0.0)
    victim, survivor = open_store(pg_url), open_store(pg_url)
    try:
        assert Capability.OWNER_SESSIONS in capabilities(victim)
        _leased_run(victim, "r1", ELSEWHERE)  # the lease is written after the owner's lock is taken
        mine = make_owner(session=True)
        survivor.claim_runnable(mine, 30.0, 1)  # the survivor holds its own session (and judges)
        assert survivor.watched_owners() == [(ELSEWHERE, False)]
        assert survivor.claim_runnable(mine, 30.0, 5) == []  # alive: its lease is left alone
        victim.close()  # the session ends (as it does when the process is killed)
        assert survivor.watched_owners() == [(ELSEWHERE, True)]
        [taken] = survivor.claim_runnable(mine, 30.0, 5)
        assert taken.run_id == "r1" and taken.lease_owner == mine and taken.epoch == 2
    finally:
        victim.close()
        survivor.close()


def test_a_handle_whose_own_session_is_new_does_not_judge_by_locks(pg_url):
    """After a restart or a failover every session is new: the live owners take their locks again
    meanwhile, so a handle whose own session is younger than SETTLE_SECONDS judges by none."""
    victim, survivor = open_store(pg_url), open_store(pg_url)
    try:
        _leased_run(victim, "r1", ELSEWHERE)
        victim.close()
        mine = make_owner(session=True)
        assert survivor.claim_runnable(mine, 30.0, 5) == []
        assert survivor.watched_owners() == [(ELSEWHERE, False)]
    finally:
        survivor.close()


def test_owners_without_a_session_are_never_judged_by_locks(pg_url, monkeypatch):
    """An owner made without a session (sessions off, an older agentrt) holds no lock: its lease
    lapses, it is not taken as dead."""
    monkeypatch.setattr(sessions, "SETTLE_SECONDS", 0.0)
    monkeypatch.setenv("AGENTRT_PG_OWNER_SESSIONS", "0")
    plain = open_store(pg_url)
    monkeypatch.delenv("AGENTRT_PG_OWNER_SESSIONS")
    survivor = open_store(pg_url)
    try:
        assert Capability.OWNER_SESSIONS not in capabilities(plain)
        other = "elsewhere.example/4242/0badc0de"
        _leased_run(plain, "r1", other)
        mine = make_owner(session=True)
        assert survivor.claim_runnable(mine, 30.0, 5) == []
        assert survivor.watched_owners() == []  # neither of this machine nor with a session
    finally:
        plain.close()
        survivor.close()


def test_sqlite_makes_owners_without_a_session(tmp_path):
    from agentrt._runtime.leases import Leases

    store = SqliteStore(tmp_path / "agentrt.db")
    try:
        assert Capability.OWNER_SESSIONS not in capabilities(store)
        assert not has_session(Leases(store, 10.0).owner)
    finally:
        store.close()


def test_a_live_owner_whose_session_was_cut_takes_its_lock_again_at_once(pg_url):
    """``pg_terminate_backend`` on the session (as a restart, a failover or a proxy would): the
    handle's keeper notices, reconnects and takes the owner's lock again without being asked."""
    import time

    import psycopg

    store = open_store(pg_url)
    try:
        _leased_run(store, "r1", ELSEWHERE)
        _owners, hi, lo = sessions.gone_params([ELSEWHERE])
        holder = (
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
            "AND classid::bigint = %s AND objid::bigint = %s"
        )
        with psycopg.connect(pg_url, autocommit=True) as admin:
            [(pid,)] = admin.execute(holder, (hi[0], lo[0])).fetchall()
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            deadline = time.monotonic() + 10
            while True:
                rows = admin.execute(holder, (hi[0], lo[0])).fetchall()
                if rows and rows[0][0] != pid:
                    break
                assert time.monotonic() < deadline, "the lock was not taken again"
                time.sleep(0.05)
    finally:
        store.close()


def test_a_runtime_that_closes_ends_its_owners_session_on_a_shared_handle(pg_url):
    """A store handle that outlives its runtimes keeps only the live ones' locks (the server's lock
    table is shared and bounded): a closed runtime's owner holds none any more."""
    import asyncio

    import psycopg

    from agentrt import Runtime

    shared = open_store(pg_url)
    holder = (
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
        "AND classid::bigint = %s AND objid::bigint = %s"
    )
    try:

        async def main():
            rt = Runtime(shared, worker=False)
            assert has_session(rt.owner)
            _leased_run(shared, "r1", rt.owner)
            _owners, hi, lo = sessions.gone_params([rt.owner])
            with psycopg.connect(pg_url, autocommit=True) as admin:
                assert admin.execute(holder, (hi[0], lo[0])).fetchone()[0] == 1
                await rt.close()
                assert admin.execute(holder, (hi[0], lo[0])).fetchone()[0] == 0

        asyncio.run(main())
    finally:
        shared.close()
