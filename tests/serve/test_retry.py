"""``POST /runs/{run_id}/retry`` against ``agentrt serve`` on loopback: a failed run restarts from its
newest checkpoint on the server's code, reusing what its journal holds; errors speak HTTP."""

from __future__ import annotations

from pathlib import Path

from tests.serve.conftest import Server, wait_status
from tests.serve.test_api import error_of, start


def _calls(marker: Path) -> list[str]:
    return [line.split()[-1] for line in Path(str(marker) + ".calls").read_text().splitlines()]


def test_retry_a_failed_run_over_http(server: Server, tmp_path: Path) -> None:
    marker = tmp_path / "down"
    marker.write_text("")
    with server.client() as c:
        run_id = start(c, "serve_agents:flaky", {"marker": str(marker)})
        failed = wait_status(c, run_id, ("failed",))
        assert "down while" in failed["error"]["message"]
        assert _calls(marker) == [f"{run_id}:1", f"{run_id}:2"]

        message = error_of(c.post(f"/runs/{run_id}/retry", json={"from_seq": 9}), 422, "invalid_field")
        assert message.startswith("field 'from_seq': run") and "keeps checkpoints 1..2" in message
        assert 'pick one of those with "from_seq"' in message
        error_of(c.post(f"/runs/{run_id}/retry", json={"from_seq": "2"}), 422, "invalid_field")
        error_of(c.post(f"/runs/{run_id}/retry", json=[1]), 422, "invalid_body")
        error_of(c.post("/runs/nope/retry", json={}), 404, "unknown_run")

        marker.unlink()  # the cause is fixed
        response = c.post(f"/runs/{run_id}/retry", json={})
        assert response.status_code == 202, response.text
        assert set(response.json()) == {"run_id", "status"} and response.json()["run_id"] == run_id
        done = wait_status(c, run_id, ("completed",))
        assert done["output"] == {"first": "slept 0s", "result": "up"}
        # slow_step (journaled at checkpoint 1) ran once; the failed call was made again, at checkpoint 3
        assert _calls(marker) == [f"{run_id}:1", f"{run_id}:2", f"{run_id}:3"]
        assert [e["data"]["from_seq"] for e in done["events"] if e["kind"] == "retry"] == [2]

        message = error_of(c.post(f"/runs/{run_id}/retry"), 409, "not_retryable")
        assert "is completed; only a failed or blocked run can be retried" in message


def test_blocked_is_a_status_of_the_api(server: Server) -> None:
    with server.client() as c:
        assert c.get("/runs", params={"status": "blocked"}).status_code == 200
        doc = c.get("/openapi.json").json()
        assert "blocked" in doc["components"]["schemas"]["Run"]["properties"]["status"]["enum"]
        retry = doc["paths"]["/runs/{run_id}/retry"]["post"]
        assert retry["operationId"] == "retryRun" and {"202", "404", "409", "422"} <= set(retry["responses"])
