"""Every endpoint of the HTTP API and its documented errors, against ``agentrt serve`` on loopback."""

from __future__ import annotations

import threading

import httpx

from tests.serve.conftest import Server, sse_events, wait_status


def start(client: httpx.Client, agent: str, input: dict | None = None, **extra: object) -> str:
    response = client.post("/runs", json={"agent": agent, "input": input or {}, **extra})
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"run_id", "status"} and body["status"] in ("running", "waiting", "completed")
    return body["run_id"]


def error_of(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code
    return body["error"]["message"]


def test_start_show_list_and_events_of_a_finished_run(server: Server) -> None:
    with server.client() as c:
        run_id = start(c, "serve_agents:steps", {"n": 3})
        shown = wait_status(c, run_id, ("completed",))
        assert shown["output"] == {"total": 3}
        assert shown["agent"] == "serve_agents:steps"
        assert shown["input"] == {"n": 3, "delay": 0.0}
        assert [cp["seq"] for cp in shown["checkpoints"]] and shown["events"]
        listed = c.get("/runs").json()["runs"]
        assert run_id in [r["run_id"] for r in listed]
        completed = c.get("/runs", params={"status": "completed"}).json()["runs"]
        assert all(r["status"] == "completed" for r in completed) and run_id in [
            r["run_id"] for r in completed
        ]
        assert run_id not in [
            r["run_id"] for r in c.get("/runs", params={"status": "waiting"}).json()["runs"]
        ]
        # An already-finished run: the whole history, then `end` at once, then the stream closes.
        with c.stream("GET", f"/runs/{run_id}/events") as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            events = list(sse_events(response))
        ids = [int(i) for i, _e, _d in events]
        assert ids == list(range(1, len(ids) + 1))
        kinds = [e for _i, e, _d in events]
        assert kinds[0] == "started" and kinds[-1] == "end"
        for needed in ("tool_started", "tool_finished", "notify", "log", "emit", "checkpoint"):
            assert needed in kinds, kinds
        assert events[-1][2]["status"] == "completed" and events[-1][2]["output"] == {"total": 3}
        # Resuming after the last id: nothing is repeated, the end status still comes.
        with c.stream("GET", f"/runs/{run_id}/events", headers={"Last-Event-ID": str(ids[-1])}) as response:
            again = list(sse_events(response))
        assert [(i, e) for i, e, _d in again] == [(None, "end")]
        with c.stream("GET", f"/runs/{run_id}/events", params={"after": ids[-3]}) as response:
            tail = list(sse_events(response))
        assert [int(i) for i, _e, _d in tail] == ids[-2:]


def test_agent_can_be_named_by_its_name(server: Server) -> None:
    with server.client() as c:
        run_id = start(c, "steps", {"n": 1}, run_id="by-name-1")
        assert run_id == "by-name-1"
        assert wait_status(c, run_id, ("completed",))["output"] == {"total": 0}
        message = error_of(c.post("/runs", json={"agent": "steps", "run_id": "by-name-1"}), 409, "run_exists")
        assert "by-name-1" in message


def test_reply_is_atomic_and_a_second_reply_gets_409(server: Server) -> None:
    with server.client() as c:
        run_id = start(c, "serve_agents:asker", {"question": "ship it?"})
        waiting = wait_status(c, run_id, ("waiting",))
        assert waiting["waiting_on"] == "reply" and waiting["prompt"] == {"question": "ship it?"}
        results: list[httpx.Response] = []

        def reply(value: str) -> None:
            with server.client() as own:
                results.append(own.post(f"/runs/{run_id}/reply", json={"value": value}))

        threads = [threading.Thread(target=reply, args=(f"answer-{i}",)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        codes = sorted(r.status_code for r in results)
        assert codes == [202] + [409] * 7, [r.text for r in results]
        accepted = next(r for r in results if r.status_code == 202).json()
        # the status the reply led to, never the `waiting` the run left when its reply was taken
        assert accepted["run_id"] == run_id and accepted["status"] in ("running", "completed"), accepted
        for r in results:
            if r.status_code == 409:
                assert r.json()["error"]["code"] == "not_waiting"
        done = wait_status(c, run_id, ("completed",))
        winner = done["output"]["reply"]
        assert winner.startswith("answer-")
        message = error_of(c.post(f"/runs/{run_id}/reply", json={"value": "late"}), 409, "not_waiting")
        assert "completed" in message and "--reply" not in message


def test_reply_to_a_run_not_waiting_on_an_ask(server: Server) -> None:
    with server.client() as c:
        run_id = start(c, "steps", {"n": 1})
        wait_status(c, run_id, ("completed",))
        error_of(c.post(f"/runs/{run_id}/reply", json={"value": 1}), 409, "not_waiting")
        assert "value" in error_of(c.post(f"/runs/{run_id}/reply", json={"answer": 1}), 422, "invalid_field")


def test_dump_shows_frames_locals_and_the_pending_request(server: Server) -> None:
    with server.client() as c:
        run_id = start(c, "asker", {"question": "dump me?"})
        wait_status(c, run_id, ("waiting",))
        dump = c.get(f"/runs/{run_id}/dump").json()
        assert dump["source"]["run_id"] == run_id and dump["source"]["latest"] is True
        frame = next(f for f in dump["frames"] if f["function"] == "run_asker")
        assert any(s["current"] and "ui.ask" in s["text"] for s in frame["source"])
        assert "input" in [v["name"] for v in frame["locals"]]
        assert dump["pending_summary"]["kind"] == "ask"
        assert dump["pending_summary"]["prompt"] == {"question": "dump me?"}
        c.post(f"/runs/{run_id}/reply", json={"value": "ok"})


def test_errors_bad_json_unknown_agent_unknown_run(server: Server) -> None:
    with server.client() as c:
        msg = error_of(
            c.post("/runs", content=b"{not json", headers={"content-type": "application/json"}),
            400,
            "bad_json",
        )
        assert "not valid JSON" in msg
        assert "JSON object" in error_of(c.post("/runs", json=[1, 2]), 422, "invalid_body")
        assert "'agent'" in error_of(c.post("/runs", json={"input": {}}), 422, "invalid_field")
        # An importable module:attr that is not in the allowed list is never imported.
        for name in ("os:system", "serve_agents:tick", "tests.runtime.agents:adder", "nope"):
            msg = error_of(c.post("/runs", json={"agent": name, "input": {}}), 404, "unknown_agent")
            assert repr(name) in msg and "--import" in msg
        msg = error_of(
            c.post("/runs", json={"agent": "steps", "input": {"n": "three"}}), 422, "invalid_input"
        )
        assert "n" in msg
        for path in ("/runs/nope", "/runs/nope/dump", "/runs/nope/events"):
            assert "'nope'" in error_of(c.get(path), 404, "unknown_run")
        error_of(c.post("/runs/nope/reply", json={"value": 1}), 404, "unknown_run")
        error_of(c.post("/runs/nope/cancel"), 404, "unknown_run")
        assert "status" in error_of(c.get("/runs", params={"status": "bogus"}), 422, "invalid_field")
        for bad in ("-1", "x", str(2**63)):
            assert "limit" in error_of(c.get("/runs", params={"limit": bad}), 422, "invalid_field")
        for bad in ("abc", "-1", str(2**63), "9" * 5000):  # 2**63: past the stores' 64-bit ids
            error_of(c.get("/runs/x/events", headers={"Last-Event-ID": bad}), 422, "invalid_field")
        for bad in (str(2**64), "\u00b2"):  # "²".isdigit() is true, and int() refuses it
            error_of(c.get("/runs/x/events", params={"after": bad}), 422, "invalid_field")
        error_of(c.get("/no/such/path"), 404, "not_found")
        error_of(c.delete("/runs"), 405, "method_not_allowed")


def test_missing_or_wrong_token_is_401(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as anon:
        for method, path in (
            ("GET", "/runs"),
            ("POST", "/runs"),
            ("GET", "/runs/x/events"),
            ("GET", "/openapi.json"),
        ):
            response = anon.request(method, path)
            assert "Authorization: Bearer" in error_of(response, 401, "unauthorized")
            assert response.headers["www-authenticate"] == "Bearer"
        error_of(anon.get("/runs", headers={"Authorization": "Bearer wrong"}), 401, "unauthorized")
        page = anon.get("/")  # the page holds no data; it asks for the token
        assert page.status_code == 200 and "<title>agentrt" in page.text
        assert anon.get("/static/app.js").status_code == 200


def test_cancel_ends_the_run_cancelled_and_its_stream_ends(server: Server) -> None:
    with server.client() as c:
        run_id = start(c, "asker")
        wait_status(c, run_id, ("waiting",))
        response = c.post(f"/runs/{run_id}/cancel")
        assert response.status_code == 202, response.text
        assert response.json()["run_id"] == run_id and run_id in response.json()["runs"]
        assert wait_status(c, run_id, ("cancelled",))["status"] == "cancelled"
        with c.stream("GET", f"/runs/{run_id}/events") as events:
            kinds = [(e, d) for _i, e, d in sse_events(events)]
        assert kinds[-1][0] == "end" and kinds[-1][1]["status"] == "cancelled"
        assert "cancel_requested" in [k for k, _d in kinds]
        error_of(c.post(f"/runs/{run_id}/cancel"), 409, "finished")
        error_of(c.post(f"/runs/{run_id}/reply", json={"value": "x"}), 409, "not_waiting")


def test_openapi_document_lists_every_endpoint(server: Server) -> None:
    with server.client() as c:
        doc = c.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    assert set(doc["paths"]) == {
        "/agents",
        "/runs",
        "/runs/{run_id}",
        "/runs/{run_id}/reply",
        "/runs/{run_id}/cancel",
        "/runs/{run_id}/retry",
        "/runs/{run_id}/events",
        "/runs/{run_id}/dump",
        "/runs/{run_id}/team",
        "/workers",
        "/",
        "/openapi.json",
    }
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert "serve_agents:steps" in doc["components"]["schemas"]["StartRun"]["properties"]["agent"]["enum"]


def test_workers_lists_the_server_itself_as_a_live_worker(server: Server) -> None:
    with server.client() as c:
        response = c.get("/workers")
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"store", "workers", "stranded"} and body["stranded"] == []
    assert any(w["live"] for w in body["workers"])  # agentrt serve drives runs: it is a worker


def test_tenants_are_isolated(tmp_path) -> None:
    srv = Server(tmp_path / "tenants.db", tmp_path, token=None, host_app=True)
    srv.start()
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            a = {"X-Tenant": "acme"}
            b = {"X-Tenant": "globex"}
            run_id = c.post("/runs", json={"agent": "asker", "input": {}}, headers=a).json()["run_id"]
            deadline_body = None
            for _ in range(400):
                deadline_body = c.get(f"/runs/{run_id}", headers=a).json()
                if deadline_body["status"] == "waiting":
                    break
                import time

                time.sleep(0.05)
            assert deadline_body and deadline_body["status"] == "waiting"
            assert [r["run_id"] for r in c.get("/runs", headers=a).json()["runs"]] == [run_id]
            assert c.get("/runs", headers=b).json()["runs"] == []
            error_of(c.get("/workers"), 403, "no_tenant")
            for method, path, body in (
                ("GET", f"/runs/{run_id}", None),
                ("GET", f"/runs/{run_id}/dump", None),
                ("GET", f"/runs/{run_id}/events", None),
                ("POST", f"/runs/{run_id}/reply", {"value": "stolen"}),
                ("POST", f"/runs/{run_id}/cancel", None),
                ("POST", f"/runs/{run_id}/retry", None),
            ):
                error_of(c.request(method, path, json=body, headers=b), 404, "unknown_run")
            # Taking another tenant's run id does not take the run over.
            error_of(c.post("/runs", json={"agent": "asker", "run_id": run_id}, headers=b), 409, "run_exists")
            error_of(c.get("/runs"), 403, "no_tenant")
            assert c.post(f"/runs/{run_id}/reply", json={"value": "mine"}, headers=a).status_code == 202
            with c.stream("GET", f"/runs/{run_id}/events", headers=a) as response:
                last = list(sse_events(response))[-1]
            assert last[1] == "end" and last[2]["output"]["reply"] == "mine"
    finally:
        srv.stop()


def test_agents_lists_each_served_agent_once_with_its_input_schema(server: Server) -> None:
    with server.client() as c:
        agents = c.get("/agents").json()["agents"]
        listed = c.get("/runs").json()["runs"]
    by_name = {a["name"]: a for a in agents}
    assert len(agents) == len(by_name) and {"steps", "asker", "approve"} <= set(by_name)
    approve = by_name["approve"]
    assert approve["spec"] == "serve_agents:approve"
    assert approve["input_schema"]["properties"]["amount_eur"] == {"type": "number", "default": 10.0}
    assert approve["input_schema"]["required"] == ["order_id"]
    for run in listed:  # the listing says when each run was made and last changed
        assert run["created_at"] <= run["updated_at"]


def test_team_answers_the_lanes_of_a_run_and_none_for_an_ordinary_one(server: Server) -> None:
    with server.client() as c:
        run_id = start(c, "asker", {"question": "a team?"})
        wait_status(c, run_id, ("waiting",))
        team = c.get(f"/runs/{run_id}/team").json()
        assert team == {"run_id": run_id, "status": "waiting", "gate": None, "goal_status": None, "lanes": []}
        error_of(c.get("/runs/no-such-run/team"), 404, "unknown_run")
        c.post(f"/runs/{run_id}/reply", json={"value": "ok"})
