"""docs/adapters-compared.md's agent (examples/compared/): the counts the page gives, and the agentrt
variants run as the plain ones do.  The DBOS variants need DBOS (benchmarks/.venv-adapters): they are
run by ``python benchmarks/adapters.py``, not here."""

from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai", reason="agentrt[pydantic-ai] is not installed")
pytest.importorskip("agents", reason="agentrt[openai-agents] is not installed")

from agentrt import Runtime
from agentrt.stores.memory import MemoryStore

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def compared(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "examples" / "compared"))
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    yield
    for name in [
        m for m in sys.modules if m.split("_")[0] in ("pai", "oai") or m in ("scripted", "adapters")
    ]:
        sys.modules.pop(name, None)


def test_lines_the_user_changes(compared):
    bench = importlib.import_module("adapters")
    counts = {
        f"{f}/{s}": bench.lines_changed(f, s)["lines"]
        for f, s in [
            ("pai", "agentrt"),
            ("pai", "dbos"),
            ("pai", "temporal"),
            ("oai", "agentrt"),
            ("oai", "dbos"),
        ]
    }
    assert counts == {"pai/agentrt": 2, "pai/dbos": 7, "pai/temporal": 17, "oai/agentrt": 2, "oai/dbos": 8}
    # what agentrt's two lines are: the import and durable(agent)
    assert [
        line.split("(")[0].split(" import ")[0] for line in bench.lines_changed("pai", "agentrt")["changed"]
    ] == [
        "from agentrt.adapters.pydantic_ai",
        "durable_stepper = durable",
    ]


@pytest.mark.parametrize(("framework", "key"), [("pai", "prompt"), ("oai", "input")])
def test_the_agentrt_variant_runs_as_the_plain_one(compared, framework, key):
    plain = importlib.import_module(f"{framework}_plain")
    durable = importlib.import_module(f"{framework}_agentrt")
    expected = asyncio.run(plain.main("4"))

    async def go() -> str:
        async with Runtime(MemoryStore()) as rt:
            run_id = await rt.start(durable.durable_stepper, {key: "4"})
            return (await rt.wait(run_id, timeout=30)).output

    assert expected == "done after 4 steps" == asyncio.run(go())
