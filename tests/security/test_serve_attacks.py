"""Issue 25 items 1-3, each attack against a real server on loopback (spec §7.3).

- Tenants: a refused request leaves nothing behind, so no tenant can squat a run id that a sub-run,
  another tenant or the CLI later uses; another tenant's run answers exactly as an unknown id.
- A token-less ``agentrt serve``: loopback only, loopback ``Host`` only (DNS rebinding), JSON and a
  same-origin (or absent) ``Origin`` on state-changing requests (cross-origin simple requests).
- Bounds: body size (counted, and refused from ``Content-Length`` before reading), JSON depth, run id
  length and characters; a 500 names an incident id, never the exception.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.security.serve_server import AttackServer

pytestmark = pytest.mark.system

A = {"X-Tenant": "acme"}
B = {"X-Tenant": "globex"}


@pytest.fixture
def host(tmp_path: Path) -> Iterator[AttackServer]:
    srv = AttackServer(tmp_path).host()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AttackServer]:
    srv = AttackServer(tmp_path_factory.mktemp("served")).serve("--allow-host", "proxy.example")
    yield srv
    srv.stop()


def wait_for(client: httpx.Client, run_id: str, status: str, headers: dict[str, str] | None = None) -> dict:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        response = client.get(f"/runs/{run_id}", headers=headers)
        if response.status_code == 200 and response.json()["status"] == status:
            return response.json()
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} not {status} within 60 s: {response.status_code} {response.text}")


def as_unknown(client: httpx.Client, method: str, path: str, run_id: str, headers: dict[str, str]) -> None:
    """``path`` (naming ``run_id``) answers exactly as the same path naming a never-used id does."""
    probe = "never-was-" + run_id
    body = {"value": 1} if path.endswith("/reply") else None
    got = client.request(method, path, json=body, headers=headers)
    unknown = client.request(method, path.replace(run_id, probe), json=body, headers=headers)
    assert got.status_code == unknown.status_code == 404, got.text
    assert got.text.replace(run_id, "ID") == unknown.text.replace(probe, "ID")


def id_paths(run_id: str) -> list[tuple[str, str]]:
    return [
        ("GET", f"/runs/{run_id}"),
        ("GET", f"/runs/{run_id}/dump"),
        ("GET", f"/runs/{run_id}/events"),
        ("POST", f"/runs/{run_id}/reply"),
        ("POST", f"/runs/{run_id}/cancel"),
        ("POST", f"/runs/{run_id}/retry"),
    ]


# ---------------------------------------------------------------------------------------- tenants


def test_a_refused_run_id_squats_no_sub_run_of_another_tenant(host: AttackServer) -> None:
    with httpx.Client(base_url=host.url, timeout=30) as c:
        for prompt in (7, "planted by A"):  # an invalid run, and a valid one B's order would adopt
            squat = c.post(
                "/runs",
                json={"agent": "secret", "input": {"prompt": prompt}, "run_id": "order-77.1"},
                headers=A,
            )
            assert squat.status_code == 422 and "sub-run" in squat.text, squat.text
        other = c.post(
            "/runs", json={"agent": "secret", "input": {"prompt": 7}, "run_id": "order-78"}, headers=A
        )
        assert other.status_code == 422 and "invalid_input" in other.text, other.text
        started = c.post(
            "/runs",
            json={"agent": "order", "input": {"prompt": "B's secret"}, "run_id": "order-77"},
            headers=B,
        )
        assert started.status_code == 201, started.text
        child = wait_for(c, "order-77.1", "waiting", B)  # B sees its sub-run (it belongs to B's run)
        assert "B's secret" in json.dumps(child)
        listed = c.get("/runs", headers=A).json()["runs"]
        assert listed == [] and "B's secret" not in json.dumps(listed)
        for method, path in id_paths("order-77.1"):
            as_unknown(c, method, path, "order-77.1", A)
        wait_for(c, "order-77.1", "waiting", B)  # A's reply and cancel did nothing


def test_a_refused_run_id_does_not_block_or_claim_later_runs(host: AttackServer) -> None:
    with httpx.Client(base_url=host.url, timeout=30) as c:
        for run_id in ("shared-id", "nightly-report"):
            bad = c.post(
                "/runs", json={"agent": "secret", "input": {"prompt": []}, "run_id": run_id}, headers=A
            )
            assert bad.status_code == 422, bad.text
        # B may use the id A was refused (no run has it).
        ok = c.post(
            "/runs", json={"agent": "secret", "input": {"prompt": "b"}, "run_id": "shared-id"}, headers=B
        )
        assert ok.status_code == 201, ok.text
        # An operator's run from the CLI belongs to no tenant: A (who tried the id first) and B see nothing.
        submitted = host.cli(
            "submit", "serve_targets:secret", "--run-id", "nightly-report", "--input", '{"prompt": "ops"}'
        )
        assert submitted.returncode == 0, submitted.stderr
        for tenant in (A, B):
            assert "nightly-report" not in [
                r["run_id"] for r in c.get("/runs", headers=tenant).json()["runs"]
            ]
            for method, path in id_paths("nightly-report"):
                as_unknown(c, method, path, "nightly-report", tenant)
        assert [r["run_id"] for r in c.get("/runs", headers=B).json()["runs"]] == ["shared-id"]
        assert c.get("/runs", headers=A).json()["runs"] == []


def test_a_taken_run_id_answers_the_same_whoever_holds_it(host: AttackServer) -> None:
    """No existence oracle beyond "taken": the answer names neither the holder nor anything it holds."""
    with httpx.Client(base_url=host.url, timeout=30) as c:
        for tenant, run_id in ((A, "mine"), (B, "theirs")):
            assert (
                c.post(
                    "/runs",
                    json={"agent": "secret", "input": {"prompt": "x"}, "run_id": run_id},
                    headers=tenant,
                ).status_code
                == 201
            )
        assert host.cli("submit", "serve_targets:secret", "--run-id", "ops-run").returncode == 0
        answers = []
        for run_id in ("mine", "theirs", "ops-run"):
            got = c.post(
                "/runs", json={"agent": "secret", "input": {"prompt": "y"}, "run_id": run_id}, headers=A
            )
            assert got.status_code == 409, got.text
            answers.append(got.text.replace(run_id, "ID"))
        assert len(set(answers)) == 1 and "run_exists" in answers[0]


# ---------------------------------------------------------------------- a token-less agentrt serve


def test_a_foreign_host_is_refused_and_loopback_names_are_answered(served: AttackServer) -> None:
    port = served.port
    with httpx.Client(base_url=served.url, timeout=30) as c:
        for host in (
            f"evil.example:{port}",
            "evil.example",
            f"127.0.0.2:{port}",
            f"localhost.evil.example:{port}",
        ):
            got = c.get("/runs", headers={"Host": host})
            assert got.status_code == 403 and got.json()["error"]["code"] == "host_not_allowed", (
                host,
                got.text,
            )
            assert "--allow-host" in got.json()["error"]["message"] and "runs" not in got.json()
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "LOCALHOST", "proxy.example"):
            assert c.get("/runs", headers={"Host": host}).status_code == 200, host


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ],
)
def test_a_simple_cross_site_request_starts_nothing(served: AttackServer, content_type: str) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as c:
        before = c.get("/runs").json()["runs"]
        body = json.dumps({"agent": "secret", "input": {"prompt": "csrf"}})
        got = c.post("/runs", content=body, headers={"Content-Type": content_type})
        assert got.status_code == 415 and got.json()["error"]["code"] == "unsupported_media_type", got.text
        no_type = c.post("/runs", content=body, headers={"Content-Type": ""})
        assert no_type.status_code == 415, no_type.text
        assert c.get("/runs").json()["runs"] == before


def test_a_cross_origin_json_request_is_refused_and_the_own_origin_is_not(served: AttackServer) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as c:
        run_id = c.post("/runs", json={"agent": "secret", "input": {"prompt": "q"}}).json()["run_id"]
        wait_for(c, run_id, "waiting")
        for origin in (
            "http://evil.example",
            f"http://localhost:{served.port + 1}",
            "null",
            f"http://127.0.0.1:{served.port}.evil.example",
        ):
            got = c.post(f"/runs/{run_id}/reply", json={"value": "forged"}, headers={"Origin": origin})
            assert got.status_code == 403 and got.json()["error"]["code"] == "cross_origin", (
                origin,
                got.text,
            )
            assert c.post("/runs", json={"agent": "secret"}, headers={"Origin": origin}).status_code == 403
        wait_for(c, run_id, "waiting")
        own = c.post(f"/runs/{run_id}/reply", json={"value": "ok"}, headers={"Origin": served.url})
        assert own.status_code == 202, own.text


def test_a_token_less_server_will_not_listen_beyond_loopback(tmp_path: Path) -> None:
    srv = AttackServer(tmp_path)
    result = srv.cli("serve", "--import", "serve_targets", "--host", "0.0.0.0", "--port", str(srv.port))
    assert result.returncode == 2, result
    assert "--token" in result.stderr and "loopback" in result.stderr


def test_with_a_token_the_same_rules_hold(tmp_path: Path) -> None:
    srv = AttackServer(tmp_path).serve("--token", "t0ken")
    try:
        auth = {"Authorization": "Bearer t0ken"}
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            assert c.get("/runs", headers={**auth, "Host": "evil.example"}).status_code == 403
            body = json.dumps({"agent": "secret"})
            assert (
                c.post("/runs", content=body, headers={**auth, "Content-Type": "text/plain"}).status_code
                == 415
            )
            assert (
                c.post(
                    "/runs", json={"agent": "secret"}, headers={**auth, "Origin": "http://evil.example"}
                ).status_code
                == 403
            )
            assert c.post("/runs", json={"agent": "secret"}).status_code == 401
            assert c.get("/runs", headers=auth).json()["runs"] == []
    finally:
        srv.stop()


# ---------------------------------------------------------------------------------------- bounds


def test_a_huge_body_is_refused_without_being_read(served: AttackServer) -> None:
    with httpx.Client(base_url=served.url, timeout=60) as c:
        rss = served.rss_bytes()
        before = len(c.get("/runs").json()["runs"])
        chunk = b" " * (1024 * 1024)

        def sixty_mb() -> Iterator[bytes]:  # chunked: no Content-Length to refuse early
            yield b'{"agent": "secret", "input": {"prompt": "'
            for _ in range(60):
                yield chunk
            yield b'"}}'

        try:
            got = c.post("/runs", content=sixty_mb(), headers={"Content-Type": "application/json"})
        except httpx.TransportError:  # the server may answer and close before the upload ends
            got = None
        if got is not None:
            assert got.status_code == 413 and got.json()["error"]["code"] == "body_too_large", got.text
        declared = c.post(
            "/runs", content=b"{}", headers={"Content-Type": "application/json", "Content-Length": "2"}
        )
        assert declared.status_code == 422  # a small body is read as usual ("agent" is missing)
        assert served.rss_bytes() - rss < 30 * 1024 * 1024
        assert len(c.get("/runs").json()["runs"]) == before


def test_a_declared_length_over_the_limit_is_refused_before_the_body(served: AttackServer) -> None:
    import socket

    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as s:
        s.sendall(
            b"POST /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 314572800\r\n\r\n{"
        )
        received = b""  # answered with 299.99 MB still unsent
        while b"}}" not in received:
            chunk = s.recv(65536)
            if not chunk:
                break
            received += chunk
        answer = received.decode()
    assert answer.startswith("HTTP/1.1 413"), answer
    assert "body_too_large" in answer and "--max-body" in answer


def test_max_body_is_configurable(tmp_path: Path) -> None:
    srv = AttackServer(tmp_path).serve("--max-body", "200")
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            big = c.post("/runs", json={"agent": "secret", "input": {"prompt": "x" * 300}})
            assert big.status_code == 413 and "200 bytes" in big.json()["error"]["message"]
            assert c.post("/runs", json={"agent": "secret", "input": {"prompt": "x"}}).status_code == 201
    finally:
        srv.stop()


def test_deep_json_is_a_422_not_a_recursion_error(served: AttackServer) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as c:
        for deep in (
            "[" * 100_000 + "]" * 100_000,
            '{"agent": "secret", "input": ' + "[" * 100 + "]" * 100 + "}",
        ):
            got = c.post("/runs", content=deep, headers={"Content-Type": "application/json"})
            assert got.status_code == 422 and got.json()["error"]["code"] == "too_deep", got.text[:300]
            assert "Recursion" not in got.text
        huge_int = '{"agent": "secret", "input": {"prompt": ' + "9" * 5000 + "}}"
        got = c.post("/runs", content=huge_int, headers={"Content-Type": "application/json"})
        assert got.status_code == 422 and "Exceeds" not in got.text, got.text[:300]
        # Brackets inside strings are text, not depth.
        fine = c.post("/runs", json={"agent": "secret", "input": {"prompt": "[" * 1000}})
        assert fine.status_code == 201, fine.text


@pytest.mark.parametrize(
    ("run_id", "words"),
    [
        ("x" * 129, "at most 128"),
        ("a/b", "letters, digits"),
        ("line\nbreak", "letters, digits"),
        ("<script>", "letters, digits"),
        ("-leading", "letters, digits"),
        ("order-77.1", "sub-run"),
        ("", "non-empty"),
        (12, "non-empty string"),
    ],
)
def test_a_run_id_is_short_and_plain(served: AttackServer, run_id: object, words: str) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as c:
        got = c.post("/runs", json={"agent": "secret", "run_id": run_id})
        assert got.status_code == 422 and words in got.json()["error"]["message"], got.text
        assert "'run_id'" in got.json()["error"]["message"]


def test_a_twenty_megabyte_run_id_is_never_stored(served: AttackServer) -> None:
    with httpx.Client(base_url=served.url, timeout=60) as c:
        got = c.post("/runs", json={"agent": "secret", "run_id": "r" * 20_000_000})
        assert got.status_code == 413, got.text[:300]
        assert all(len(r["run_id"]) <= 128 for r in c.get("/runs").json()["runs"])


def test_a_server_error_names_an_incident_not_the_exception(caplog: pytest.LogCaptureFixture) -> None:
    from starlette.testclient import TestClient

    from agentrt import Runtime
    from agentrt.asgi import create_app

    def broken_tenant(request: object) -> str:
        raise RuntimeError("db password is hunter2")

    runtime = Runtime(store="memory:")
    app = create_app(runtime, tenant=broken_tenant, close_runtime=True)
    with (
        caplog.at_level(logging.ERROR, logger="agentrt.asgi"),
        TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client,
    ):
        got = client.get("/runs")
    assert got.status_code == 500, got.text
    assert "hunter2" not in got.text and "RuntimeError" not in got.text
    incident = got.json()["error"]["message"].rsplit(" ", 1)[1]
    assert any(
        incident in r.getMessage() and r.exc_info and "hunter2" in str(r.exc_info[1]) for r in caplog.records
    )
