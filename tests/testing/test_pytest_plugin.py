"""The ``--agentrt-roundtrip`` pytest plugin, run on small suites with ``pytester``.

``pytest_plugins`` is declared here rather than in ``tests/testing/conftest.py``:
pytest refuses ``pytest_plugins`` in a conftest below the rootdir when the whole
suite runs (``pytest`` from the repository root).
"""

from __future__ import annotations

import os

import pytest

from agentrt.lowlevel import Machine, suspend
from agentrt.testing import RoundtripFailure, roundtrip_every_suspension
from tests.inspect.golden_tools import REPO

pytest_plugins = ["pytester"]

PLUGIN = "agentrt.testing.pytest_plugin"

AGENTS = """
import threading

from agentrt.lowlevel import Machine, suspend


async def clean(n):
    total = 0
    for i in range(n):
        total += await suspend(("add", i))
    return total


async def holds_lock():
    lock = threading.Lock()
    got = await suspend("first")
    with lock:
        return got + 1
"""

SUITE = """
import pytest

from agentrt.lowlevel import Machine
from agents_under_test import clean, holds_lock


def test_clean_agent():
    m = Machine(clean, 3)
    assert m.step() == ("add", 0)
    assert m.step(1) == ("add", 1)
    assert m.step(2) == ("add", 2)
    assert m.step(3).value == 6


def test_lock_across_await():
    m = Machine(holds_lock)
    assert m.step() == "first"
    assert m.step(41).value == 42
"""


@pytest.fixture(autouse=True)
def _isolated_inner_sessions(monkeypatch):
    # Inner sessions load only what they name (-p); third-party plugins just cost time.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    # They run in this process: when this suite itself runs under --agentrt-roundtrip, the
    # outer session's hook must not leak into them (it comes back after the test).
    monkeypatch.setattr(Machine, "roundtrip_hook", None)


@pytest.fixture
def suite(pytester):
    pytester.makepyfile(agents_under_test=AGENTS, test_suite=SUITE)
    return pytester


def test_roundtrip_fails_the_lock_test_with_the_dump(suite):
    result = suite.runpytest("-p", PLUGIN, "--agentrt-roundtrip")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "test_suite.py::test_lock_across_await" in out
    result.stdout.fnmatch_lines(
        [
            "*RoundtripFailure: agentrt round-trip: Machine.get() failed for the agent holds_lock*",
            "*CannotCrossAwait: AR112: variable 'lock'*",
            "*frame dump of the live chain:*",
            "*pending request: 'first'*",
            "*frame 0 (the only frame): coroutine agents_under_test.holds_lock*",
            '*--> * |     got = await suspend("first")*',
            "*lock = <unlocked _thread.lock object at 0x*>*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*agentrt round-trip: 3 suspensions checkpointed and restored, 1 did not survive*"]
    )


def test_without_the_option_nothing_changes(suite):
    result = suite.runpytest("-p", PLUGIN)
    result.assert_outcomes(passed=2)
    assert "agentrt round-trip" not in result.stdout.str()


def test_a_failure_the_code_under_test_swallows_still_fails_the_test(pytester):
    pytester.makepyfile(
        agents_under_test=AGENTS,
        test_swallow="""
from agentrt.lowlevel import Machine
from agents_under_test import holds_lock

def test_swallows():
    m = Machine(holds_lock)
    m.step()
    try:
        m.step(1)
    except Exception:
        pass  # e.g. a runtime that records the run as failed
""",
    )
    result = pytester.runpytest("-p", PLUGIN, "--agentrt-roundtrip")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["E * agentrt.testing.RoundtripFailure: agentrt round-trip: *", "*CannotCrossAwait: AR112*"]
    )
    assert "def pytest_runtest_call" not in result.stdout.str()  # the plugin's own frame is hidden


def test_fixture_opt_in_and_marker_opt_out(pytester):
    pytester.makepyfile(
        agents_under_test=AGENTS,
        test_optin="""
import pytest
from agentrt.lowlevel import Machine
from agents_under_test import clean, holds_lock

def test_clean(agentrt_roundtrip):
    m = Machine(clean, 2)
    m.step(); m.step(1)
    assert m.step(1).value == 2
    assert agentrt_roundtrip.count == 2

def test_lock(agentrt_roundtrip):
    m = Machine(holds_lock)
    m.step()
    m.step(1)

@pytest.mark.agentrt_no_roundtrip
def test_lock_left_alone(request):
    assert request.config.getoption("agentrt_roundtrip")
    m = Machine(holds_lock)
    m.step()
    assert m.step(1).value == 2
""",
    )
    result = pytester.runpytest("-p", PLUGIN, "-k", "not left_alone")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*RoundtripFailure: agentrt round-trip: Machine.get() failed*", "*AR112*"])
    result = pytester.runpytest("-p", PLUGIN, "--agentrt-roundtrip", "-k", "left_alone")
    result.assert_outcomes(passed=1)


@pytest.mark.slow
def test_entry_point_and_dash_p_together(pytester, monkeypatch):
    """Installed (pytest11 entry point ``agentrt``) and named with -p: one plugin, no clash."""
    site = pytester.mkdir("site")
    dist = site / "agentrt_entry_point_probe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: agentrt-entry-point-probe\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[pytest11]\nagentrt = {PLUGIN}\n")
    pytester.makepyfile(agents_under_test=AGENTS, test_suite=SUITE)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(site), str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    quick = ("-p", "no:hypothesispytest")  # autoload stays on for the probe; skip the slow one
    by_entry_point = pytester.runpytest_subprocess(*quick, "--agentrt-roundtrip")
    by_entry_point.assert_outcomes(passed=1, failed=1)
    by_entry_point.stdout.fnmatch_lines(["*AR112*"])
    both = pytester.runpytest_subprocess(*quick, "-p", PLUGIN, "--agentrt-roundtrip")
    both.assert_outcomes(passed=1, failed=1)
    assert "already registered" not in both.stdout.str() + both.stderr.str()


def test_roundtrip_context_manager_directly():
    async def agent():
        first = await suspend(1)
        return first + await suspend(2)

    with roundtrip_every_suspension() as tripper:
        m = Machine(agent)
        assert m.step() == 1
        assert m.step(10) == 2
        assert m.step(5).value == 15
    assert tripper.count == 2 and Machine.roundtrip_hook is not tripper

    async def bad():
        import threading

        lock = threading.Lock()
        await suspend("x")
        return lock

    with roundtrip_every_suspension() as tripper:
        m = Machine(bad)
        m.step()
        with pytest.raises(RoundtripFailure, match="AR112") as info:
            m.step(None)
    assert "frame dump of the live chain" in str(info.value) and tripper.failures
