"""The OpenAPI document is the contract: schemathesis generates requests from it (valid and invalid)
and checks every answer against it (status codes, content types, JSON shapes, no server errors)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import hypothesis.errors
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.serve.conftest import Server

pytestmark = pytest.mark.system


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
HEADERS = {"X-Tenant": "fuzz"}


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp: Path = tmp_path_factory.mktemp("fuzz")
    srv = Server(tmp / "fuzz.db", tmp, token=None, host_app=True, agents="echo,asker")
    srv.start()
    yield srv
    srv.stop()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_api_conforms_to_its_openapi_document(fuzz_server: Server, mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_url(fuzz_server.url + "/openapi.json", headers=HEADERS)
    operations = [result.ok() for result in schema.get_all_operations()]
    labels = {op.label for op in operations}
    assert {"POST /runs", "GET /runs", "GET /runs/{run_id}", "POST /runs/{run_id}/reply"} <= labels
    assert {"POST /runs/{run_id}/cancel", "GET /runs/{run_id}/events", "GET /runs/{run_id}/dump"} <= labels
    exercised = 0
    for operation in operations:
        calls = 0

        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(case=operation.as_strategy(generation_mode=mode))
        def check(case) -> None:  # type: ignore[no-untyped-def]
            nonlocal calls
            calls += 1
            case.call_and_validate(base_url=fuzz_server.url, headers=HEADERS, checks=CHECKS, timeout=10)

        try:
            check()
        except hypothesis.errors.Unsatisfiable:
            assert mode == GenerationMode.NEGATIVE, operation.label  # nothing in it can be made invalid
        exercised += calls > 0
    assert exercised >= (len(operations) if mode == GenerationMode.POSITIVE else 3), labels
