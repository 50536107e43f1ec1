"""The event stream under load and interruption: every event exactly once, in order, for every client.

The numbers (clients held, events lost or duplicated, reconnect latency, memory per open stream) are
printed; run with ``-s`` to see them.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from tests.serve.conftest import Server, sse_events, wait_status


def start(client: httpx.Client, agent: str, input: dict) -> str:
    response = client.post("/runs", json={"agent": agent, "input": input})
    assert response.status_code == 201, response.text
    return response.json()["run_id"]


def full_history(client: httpx.Client, run_id: str) -> list[tuple[int, str]]:
    """The run's events as a fresh client reads them after the end (the reference)."""
    with client.stream("GET", f"/runs/{run_id}/events") as response:
        events = list(sse_events(response))
    assert events[-1][1] == "end"
    return [(int(i), e) for i, e, _d in events if i is not None]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_reconnecting_client_gets_every_event_exactly_once(server: Server) -> None:
    with server.client() as c:
        run_id = start(c, "steps", {"n": 25, "delay": 0.04})
        seen: list[tuple[int, str]] = []
        last: str | None = None
        reconnects, latencies = 0, []
        ended = False
        while not ended:
            headers = {"Last-Event-ID": last} if last else {}
            t0 = time.monotonic()
            with c.stream("GET", f"/runs/{run_id}/events", headers=headers) as response:
                assert response.status_code == 200
                got = 0
                for event_id, kind, _data in sse_events(response):
                    if got == 0 and last is not None:
                        latencies.append(time.monotonic() - t0)
                    if kind == "end":
                        ended = True
                        if event_id is not None:
                            seen.append((int(event_id), kind))
                        break
                    assert event_id is not None
                    seen.append((int(event_id), kind))
                    last = event_id
                    got += 1  # noqa: SIM113 (counts only the events kept, not the loop)
                    if got == 3:  # drop the connection mid-run
                        break
            reconnects += 1
        reference = full_history(c, run_id)
        assert wait_status(c, run_id, ("completed",))["output"] == {"total": sum(range(25))}
    ids = [i for i, _k in seen]
    assert len(ids) == len(set(ids)), "duplicated events"
    assert [(i, "end" if k == "end" else k) for i, k in seen] == reference, "lost or reordered events"
    assert reconnects > 5
    print(
        f"\n[reconnect] {reconnects} connections, {len(ids)} events, lost 0, duplicated 0, "
        f"reconnect-to-first-event median {sorted(latencies)[len(latencies) // 2] * 1000:.1f} ms, "
        f"max {max(latencies) * 1000:.1f} ms"
    )


N_CLIENTS = 500


@pytest.mark.system
def test_500_concurrent_sse_clients(server: Server) -> None:
    assert server.proc is not None
    with server.client() as c:
        run_id = start(c, "steps", {"n": 12, "delay": 0.5})
    base_rss = rss_kib(server.proc.pid)

    async def main() -> tuple[list[list[tuple[int, str]]], int, float]:
        limits = httpx.Limits(max_connections=N_CLIENTS + 10, max_keepalive_connections=0)
        async with httpx.AsyncClient(
            base_url=server.url, headers=server.headers, limits=limits, timeout=120
        ) as ac:
            first = asyncio.Semaphore(0)

            async def one() -> list[tuple[int, str]]:
                out: list[tuple[int, str]] = []
                async with ac.stream("GET", f"/runs/{run_id}/events") as response:
                    assert response.status_code == 200
                    from httpx_sse import EventSource

                    async for sse in EventSource(response).aiter_sse():
                        if not sse.data:  # see conftest.sse_events: not an event
                            continue
                        if not out:
                            first.release()
                        out.append((int(sse.id) if sse.id else -1, sse.event))
                        if sse.event == "end":
                            break
                return out

            tasks = [asyncio.ensure_future(one()) for _ in range(N_CLIENTS)]
            for _ in range(N_CLIENTS):  # every client holds an open stream
                await asyncio.wait_for(first.acquire(), 120)
            held = sum(1 for t in tasks if not t.done())
            peak = rss_kib(server.proc.pid)  # type: ignore[union-attr]
            results = await asyncio.wait_for(asyncio.gather(*tasks), 300)
            return results, held, (peak - base_rss) / N_CLIENTS

    results, held, kib_per_stream = asyncio.run(main())
    with server.client() as c:
        reference = full_history(c, run_id)
    lost = dup = 0
    for events in results:
        ids = [i for i, _k in events if i != -1]
        dup += len(ids) - len(set(ids))
        lost += len({i for i, _k in reference} - set(ids))
        assert events == reference, "a client's stream differs from the stored history"
    assert lost == 0 and dup == 0
    assert held == N_CLIENTS, f"only {held} of {N_CLIENTS} streams were open at once"
    print(
        f"\n[load] {N_CLIENTS} concurrent SSE clients held, {len(reference)} events each, "
        f"lost {lost}, duplicated {dup}, server memory {kib_per_stream:.1f} KiB per open stream"
    )


def test_keep_alive_comments_on_an_idle_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.serve.conftest import HERE, free_port  # noqa: F401

    monkeypatch.setenv("HOST_APP_PING_SECONDS", "1")  # the server inherits it
    srv = Server(tmp_path / "ka.db", tmp_path, token=None, host_app=True)
    srv.start()
    try:
        with httpx.Client(base_url=srv.url, timeout=30, headers={"X-Tenant": "t"}) as c:
            run_id = c.post("/runs", json={"agent": "asker", "input": {}}).json()["run_id"]
            lines: list[str] = []
            with c.stream("GET", f"/runs/{run_id}/events") as response:
                for line in response.iter_lines():
                    lines.append(line)
                    if line.startswith(":"):
                        break
            assert any(line.startswith(":") for line in lines)
            assert any(line == "event: waiting" for line in lines)
            c.post(f"/runs/{run_id}/reply", json={"value": 1})
    finally:
        srv.stop()


@pytest.mark.slow
@pytest.mark.system
def test_sigkill_mid_tool_then_restart_finishes_and_clients_complete(
    fresh_server: Server, tmp_path: Path
) -> None:
    srv = fresh_server
    marker = tmp_path / "marker.txt"
    with srv.client() as c:
        run_id = start(c, "slow", {"marker": str(marker), "seconds": 2.0})
        seen: list[tuple[int, str]] = []
        last: str | None = None
        with c.stream("GET", f"/runs/{run_id}/events") as response:
            for event_id, kind, data in sse_events(response):
                seen.append((int(event_id), kind))
                last = event_id
                if kind == "tool_started" and data["data"]["tool"] == "slow_step":
                    break
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (marker.exists() and marker.read_text().endswith("\n")):
            time.sleep(0.02)  # the tool has started (its line is written) and sleeps for 2 s
        assert marker.read_text().count("\n") == 1
        srv.kill()  # mid-tool: slow_step sleeps for 2 s
        t0 = time.monotonic()
        srv.start()  # same port, same store: the server recovers its own run
        restarted = time.monotonic() - t0
        ended = None
        while ended is None:
            try:
                with c.stream(
                    "GET", f"/runs/{run_id}/events", headers={"Last-Event-ID": last or "0"}
                ) as response:
                    for event_id, kind, data in sse_events(response):
                        if kind == "end":
                            ended = data
                            if event_id is not None:
                                seen.append((int(event_id), kind))
                            break
                        seen.append((int(event_id), kind))
                        last = event_id
            except httpx.TransportError:
                time.sleep(0.1)
        assert ended["status"] == "completed" and ended["output"] == {"result": "slept 2s"}
        reference = full_history(c, run_id)
    assert seen == reference
    lines = marker.read_text().splitlines()
    assert len(lines) == 2 and lines[0].split()[1] == lines[1].split()[1]  # re-run with the same key
    assert [k for _i, k in reference].count("tool_started") >= 4  # tick, slow_step twice, tick
    print(f"\n[sigkill] restart-to-ready {restarted * 1000:.0f} ms; {len(seen)} events, lost 0, duplicated 0")


@pytest.mark.system
def test_reply_journaled_before_202_survives_a_sigkill(fresh_server: Server) -> None:
    srv = fresh_server
    with srv.client() as c:
        run_id = start(c, "asker", {"question": "q"})
        wait_status(c, run_id, ("waiting",))
        assert c.post(f"/runs/{run_id}/reply", json={"value": {"approve": True}}).status_code == 202
        srv.kill()  # right after the 202
        srv.start()
        done = wait_status(c, run_id, ("completed",))
        assert done["output"]["reply"] == {"approve": True}
        with c.stream("GET", f"/runs/{run_id}/events") as response:
            events = list(sse_events(response))
        assert [e for _i, e, _d in events].count("replied") == 1
        assert json.dumps(events[-1][2]["output"]["reply"]) == '{"approve": true}'
