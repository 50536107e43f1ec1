"""Agents ported from other frameworks' public examples, each run as written three ways (see
``_run.py``): uninterrupted; ``Machine.set(m.get())`` at every suspension; restored and finished in
a fresh process at every suspension.  ``AS_WRITTEN`` is the expected corpus table: a port whose
verdict changes (a refusal that appears or goes away, a restore that differs) fails here, so the
table in a closing note is the one this test asserts.  ``python -m tests.realcode.table`` prints it.
"""

from __future__ import annotations

import contextvars
import fcntl
import gc
import importlib
import inspect
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus.harness import compare_outcomes
from tests.corpus.protocol import Machine
from tests.realcode import PORTS
from tests.realcode._run import (
    direct,
    engine_error,
    every_suspension,
    fresh_process,
    fresh_verdict,
    reference,
)

IDS = [p.name for p in PORTS]

# These tests checkpoint and restore every Machine at every suspension themselves (mode (b)) and
# expect refusals; the round-trip pass (--agentrt-roundtrip) would add nothing but failures at them.
pytestmark = pytest.mark.agentrt_no_roundtrip

#: agent -> as written ("exact" or "refused ARxxx"), the same on CPython 3.11, 3.12 and 3.13
AS_WRITTEN = {
    "anthropic_orchestrator_workers": "exact",
    "anthropic_tool_use": "exact",
    "autogen_round_robin": "exact",
    "crewai_sequential": "exact",
    "dspy_react": "exact",
    "google_adk_weather": "exact",
    "haystack_agent": "exact",
    "instructor_retry": "exact",
    # StructuredTool.args_schema is a class pydantic.create_model made at import time, named by
    # the tool object that holds it (its own name is the function's, which the tool shadows)
    "langchain_tool_calling": "exact",
    "langgraph_functional_react": "exact",
    "llamaindex_workflow": "exact",
    "mcp_client_quickstart": "exact",
    # @function_tool replaces the module's function by a FunctionTool holding it: its code is
    # found through that object
    "openai_agents_airline": "exact",
    "openai_function_calling": "exact",
    "openai_responses_tools": "exact",
    # .parse() returns a ParsedChatCompletion[TypeVar]: a parametrized generic pydantic class,
    # named as its origin subscripted by its arguments
    "openai_structured_outputs": "exact",
    "pydantic_ai_weather": "exact",
    "react_classic": "exact",
    "semantic_kernel_lights": "exact",
    "smolagents_tool_calling": "exact",
    "support_desk": "exact",  # needs context variables in the checkpoint (skipped without them)
    "support_desk_without_context": "exact",
    "swarm_routines": "exact",
}

# Mode (b) drops the machine it checkpointed at every suspension; a chain dropped inside an
# ``async with`` (pydantic-ai's ``async with AsyncClient()``) reports "coroutine ignored
# GeneratorExit" when collected.  That is the fate of an abandoned chain (tests/test_corpus.py).
ABANDONED_CHAIN = pytest.mark.filterwarnings(
    r"ignore:(?s)Exception ignored in\x3a <(coroutine|async_generator) object .*GeneratorExit"
    ":pytest.PytestUnraisableExceptionWarning"
)


def _context_is_carried() -> bool:
    """Whether this agentrt makes context variables part of the checkpoint (branch i24-context),
    found by behaviour: a variable set in a run, checkpointed and restored under a fresh context."""
    from tests.realcode import support_desk

    return support_desk.context_probe()


CONTEXT_CARRIED = engine_error() is None and _context_is_carried()
NO_CONTEXT = (
    "this agentrt does not make context variables part of the checkpoint (a variable set in a run "
    "reads its default after a restore); the i24-context branch adds it"
)


def require(port) -> None:
    if engine_error() is not None:
        pytest.fail(f"checkpoint engine unavailable - {engine_error()}", pytrace=False)
    if port.name in NEEDS_CONTEXT and not CONTEXT_CARRIED:
        pytest.skip(NO_CONTEXT)


#: ports that set a context variable and read it after an await
NEEDS_CONTEXT = {"support_desk"}


def test_registry():
    assert len(PORTS) >= 20
    assert len(set(IDS)) == len(IDS)
    assert set(AS_WRITTEN) == set(IDS), "AS_WRITTEN must list every port and nothing else"
    for p in PORTS:
        assert inspect.iscoroutinefunction(p.fn), p.name
        module = importlib.import_module(p.fn.__module__)
        assert getattr(module, p.fn.__qualname__) is p.fn, p.name
        assert "ports" in (module.__doc__ or "").lower(), (
            f"{p.name}: the docstring must name the example it ports"
        )


@pytest.mark.parametrize("port", PORTS, ids=IDS)
def test_a_uninterrupted(port):
    out = reference(port)
    assert out.kind == "return", f"{port.name} raised {out.value}"
    assert len(out.payloads) >= 2, f"{port.name} suspends only {len(out.payloads)} time(s)"
    assert out.value[0] == port.answer, f"{port.name}: answered {out.value[0]!r}"
    assert not compare_outcomes(out, direct(port)), f"{port.name} is not deterministic"
    assert not compare_outcomes(out, pickle.loads(pickle.dumps(out))), f"{port.name}: outcome does not pickle"


@ABANDONED_CHAIN
@pytest.mark.parametrize("port", PORTS, ids=IDS)
def test_b_checkpoint_every_suspension(port):
    require(port)
    assert every_suspension(port) == AS_WRITTEN[port.name]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """Mode (c) for every port, computed once per session: under pytest-xdist the first worker to
    take the lock runs it (one restore worker for every blob) and the others read its pickled result
    from the session's shared temporary directory; fresh-process restores are the slow part."""
    if engine_error() is not None:
        return None
    saved_hook, Machine.roundtrip_hook = Machine.roundtrip_hook, None  # see pytestmark: not in setup either
    try:
        return _fresh(tmp_path_factory)
    finally:
        Machine.roundtrip_hook = saved_hook


def _fresh(tmp_path_factory):
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's directory, shared by its workers
    shared = root / "realcode-fresh"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / "result.pickle"
        if done.exists():
            return pickle.loads(done.read_bytes())
        try:
            (shared / "blobs").mkdir()
            result = fresh_process(shared / "blobs")
        finally:
            gc.collect()
        done.write_bytes(pickle.dumps(result))
        return result


@ABANDONED_CHAIN
@pytest.mark.parametrize("port", PORTS, ids=IDS)
def test_c_fresh_process_every_suspension(port, fresh):
    require(port)
    assert fresh_verdict(port, fresh) == AS_WRITTEN[port.name]


def test_context_probe_reads_the_default_without_a_carried_context():
    """The probe that decides ``CONTEXT_CARRIED`` must not pass by leaking the caller's context."""
    from tests.realcode import support_desk

    assert support_desk.REQUEST_ID.get() == "-"
    assert contextvars.copy_context().get(support_desk.REQUEST_ID, "-") == "-"


#: where ``agentrt check`` (default profile: what a signed blob refuses) disagrees with the table
#: above, and with the checkpoint corpus's ``REFUSED``: nowhere.  A disagreement on either side
#: fails the two tests below with the port (or case) and both verdicts.
CHECK_DISAGREES: dict[str, str] = {}
CHECK_DISAGREES_CORPUS: dict[str, str] = {}


def _check_errors(path: Path, key) -> dict[str, list[tuple[str, str]]]:
    """``agentrt check PATH --json`` (default profile) run as a user runs it: error findings by ``key``."""
    repo = Path(__file__).resolve().parents[2]
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))
    )
    proc = subprocess.run(
        [sys.executable, "-m", "agentrt", "check", str(path), "--json"],
        capture_output=True,
        text=True,
        cwd=repo,
        env=env,
        timeout=120,
    )
    errors: dict[str, list[tuple[str, str]]] = {}
    for finding in json.loads(proc.stdout)["findings"]:
        if finding["severity"] == "error":
            errors.setdefault(key(finding), []).append((finding["code"], finding["variable"]))
    return errors


def _disagreement(want: str, found: list[tuple[str, str]]) -> str | None:
    """An error finding for an exact agent, or none with the refused code for a refused one."""
    if want == "exact" and found:
        return ", ".join(f"check reports {c} error (variable '{v}')" for c, v in found) + ", runtime exact"
    if want.startswith("refused") and not any(c == want.split()[1] for c, _ in found):
        return f"runtime {want}, check reports " + (", ".join(c for c, _ in found) or "nothing")
    return None


def test_agentrt_check_against_the_table():
    """``agentrt check`` on the ports, compared with ``AS_WRITTEN``: an error finding for an exact
    port, or none for a refused one, is a disagreement; ``CHECK_DISAGREES`` lists the known ones."""
    errors = _check_errors(Path(__file__).resolve().parent, lambda f: Path(f["path"]).stem)
    disagree = {}
    for p in PORTS:
        module = p.fn.__module__.rpartition(".")[2]
        found = _disagreement(AS_WRITTEN[p.name], errors.get(module, []))
        if found is not None:
            disagree[module] = found
    assert disagree == CHECK_DISAGREES


def test_agentrt_check_against_the_corpus():
    """The same comparison over the checkpoint corpus: each case is exact unless ``REFUSED`` names
    the code the runtime refuses it with; findings are matched to cases by function."""
    from tests.corpus import CASES
    from tests.corpus.registry import REFUSED

    corpus = Path(__file__).resolve().parents[1] / "corpus"
    errors = _check_errors(corpus, lambda f: f["function"])
    disagree = {}
    for case in CASES:
        want = f"refused {REFUSED[case.name]}" if case.name in REFUSED else "exact"
        found = _disagreement(want, errors.get(case.fn.__qualname__, []))
        if found is not None:
            disagree[case.name] = found
    assert disagree == CHECK_DISAGREES_CORPUS
