"""Agents ported from other frameworks' public examples, each run as written three ways (see
``_run.py``): uninterrupted; ``Machine.set(m.get())`` at every suspension; restored and finished in
a fresh process at every suspension.  ``AS_WRITTEN`` is the expected corpus table: a port whose
verdict changes (a refusal that appears or goes away, a restore that differs) fails here, so the
table in a closing note is the one this test asserts.  ``python -m tests.realcode.table`` prints it.
"""

from __future__ import annotations

import contextvars
import gc
import importlib
import inspect
import pickle

import pytest

from tests.corpus.harness import compare_outcomes, run_direct
from tests.realcode import PORTS
from tests.realcode._driver import respond
from tests.realcode._run import engine_error, every_suspension, fresh_process, fresh_verdict, reference

IDS = [p.name for p in PORTS]

#: agent -> as written ("exact" or "refused ARxxx"), the same on CPython 3.11, 3.12 and 3.13
AS_WRITTEN = {
    "openai_function_calling": "exact",
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
    assert not compare_outcomes(out, run_direct(port, respond)), f"{port.name} is not deterministic"
    assert not compare_outcomes(out, pickle.loads(pickle.dumps(out))), f"{port.name}: outcome does not pickle"


@ABANDONED_CHAIN
@pytest.mark.parametrize("port", PORTS, ids=IDS)
def test_b_checkpoint_every_suspension(port):
    require(port)
    assert every_suspension(port) == AS_WRITTEN[port.name]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    if engine_error() is not None:
        return None
    try:
        return fresh_process(tmp_path_factory.mktemp("realcode-blobs"))
    finally:
        gc.collect()


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
