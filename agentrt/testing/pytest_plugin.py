"""pytest plugin: ``--agentrt-roundtrip`` checkpoints and restores every Machine at every suspension.

With the option, every :class:`~agentrt.lowlevel.Machine` stepped while the
session runs is checkpointed (``Machine.get()``) and restored (``Machine.set()``)
before each resume and continues on the restored copy, so the test suite proves
that each suspension it reaches survives a checkpoint.  A value that does not
(``CannotCrossAwait``, a blob that does not restore) fails the test with the
frame dump of the chain -- even when the code under test caught the error (the
runtime turns it into a failed run, for example).

- enabled by the ``pytest11`` entry point ``agentrt`` when agentrt is installed,
  or with ``-p agentrt.testing.pytest_plugin``;
- ``--agentrt-roundtrip``: for the whole session;
- the ``agentrt_roundtrip`` fixture: for one test (yields the
  :class:`~agentrt.testing.RoundTripper`, whose ``count`` says how many
  suspensions were carried over);
- ``@pytest.mark.agentrt_no_roundtrip``: leave one test alone under the option.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator, Iterator
from typing import Any  # Any: xdist's worker node and its output, untyped

import attrs
import pytest

from agentrt.lowlevel import Machine
from agentrt.testing._roundtrip import RoundtripFailure, RoundTripper, roundtrip_every_suspension

#: The name of the pytest11 entry point in agentrt's pyproject.toml.
ENTRY_POINT_NAME = "agentrt"
#: This session's round-tripper and the hook it replaced (put back at the end).
_SESSION = pytest.StashKey[tuple[RoundTripper, Callable[[Machine], bytes] | None]]()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Let the entry point and ``-p agentrt.testing.pytest_plugin`` name the same module.

    pytest registers a plugin under the name it was loaded by, and refuses a module
    registered twice under two names; whichever name came first, block the other.
    """
    me = sys.modules[__name__]
    registered_as = pluginmanager.get_name(me)
    for alias in (ENTRY_POINT_NAME, __name__):
        if (
            alias != registered_as
            and pluginmanager.get_plugin(alias) is None
            and not pluginmanager.is_blocked(alias)
        ):
            pluginmanager.set_blocked(alias)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentrt")
    group.addoption(
        "--agentrt-roundtrip",
        action="store_true",
        default=False,
        help="checkpoint and restore every agentrt Machine at every suspension (Machine.get/Machine.set) "
        "and fail the test, with a frame dump, when a suspended agent does not survive it",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "agentrt_no_roundtrip: do not checkpoint/restore Machines in this test under --agentrt-roundtrip",
    )
    if config.getoption("agentrt_roundtrip", False):
        tripper = RoundTripper()
        config.stash[_SESSION] = (tripper, Machine.roundtrip_hook)
        Machine.roundtrip_hook = tripper


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_SESSION, None)
    if session is not None:
        tripper, previous = session
        if Machine.roundtrip_hook is tripper:
            Machine.roundtrip_hook = previous
        del config.stash[_SESSION]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Put the session's hook back if an earlier test cleared ``Machine.roundtrip_hook`` instead of
    restoring it (its own test of the hook, say), so the rest of the session stays covered."""
    session = item.config.stash.get(_SESSION, None)
    if session is not None and Machine.roundtrip_hook is None:
        Machine.roundtrip_hook = session[0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    __tracebackhide__ = True  # a failure raised here is about the test, not about this hook
    if item.get_closest_marker("agentrt_no_roundtrip") is not None:
        saved = Machine.roundtrip_hook
        Machine.roundtrip_hook = None
        try:
            return (yield)
        finally:
            Machine.roundtrip_hook = saved
    tripper = Machine.roundtrip_hook
    if not isinstance(tripper, RoundTripper):
        return (yield)
    before = len(tripper.failures)
    try:
        result = yield
    except RoundtripFailure:
        tripper.mark_reported(before)
        raise
    except BaseException as exc:
        missed = tripper.mark_reported(before)
        if missed:  # the test failed because a round-trip failed inside the code under test
            raise RoundtripFailure(missed[0]) from exc
        raise
    missed = tripper.mark_reported(before)
    if missed:  # the code under test swallowed the failure (e.g. a run that "failed" as expected)
        raise RoundtripFailure(missed[0])
    return result


@pytest.fixture
def agentrt_roundtrip() -> Iterator[RoundTripper]:
    """Checkpoint and restore every Machine at every suspension during this test."""
    with roundtrip_every_suspension() as tripper:
        yield tripper


#: Under pytest-xdist: what each worker round-tripped, summed by the controller (whose own tripper
#: runs no test), so the closing line counts the whole session.
@attrs.define
class _WorkerTotals:
    count: int = 0
    failed: int = 0
    unreported: list[str] = attrs.field(factory=list)


_WORKERS = pytest.StashKey[_WorkerTotals]()
_WORKER_OUTPUT_KEY = "agentrt_roundtrip"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker, hand this worker's counts and unreported failures to the controller."""
    found = session.config.stash.get(_SESSION, None)
    output = getattr(session.config, "workeroutput", None)
    if found is not None and output is not None:
        tripper = found[0]
        output[_WORKER_OUTPUT_KEY] = {
            "count": tripper.count,
            "failed": len(tripper.failures),
            "unreported": tripper.unreported(),
        }


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """On the xdist controller: add up what a finished worker round-tripped."""
    data = getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT_KEY)
    if data is None:
        return
    total = node.config.stash.setdefault(_WORKERS, _WorkerTotals())
    total.count += data["count"]
    total.failed += data["failed"]
    total.unreported.extend(data["unreported"])


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    session = config.stash.get(_SESSION, None)
    if session is None:
        return
    tripper = session[0]
    workers = config.stash.get(_WORKERS, _WorkerTotals())
    failed = len(tripper.failures) + workers.failed
    terminalreporter.write_line(
        f"agentrt round-trip: {tripper.count + workers.count} suspensions checkpointed and restored"
        + (f", {failed} did not survive" if failed else "")
    )
    unreported = tripper.unreported() + workers.unreported
    if unreported:
        # Failures outside a test's body (fixtures, collection) that the code there handled.
        terminalreporter.write_line(
            f"agentrt round-trip: {len(unreported)} of them happened outside a test body "
            "(in a fixture, say) and failed no test:"
        )
        for message in unreported:
            head, _, rest = message.partition("\n")
            terminalreporter.write_line(f"  {head} {rest.splitlines()[0].strip() if rest else ''}"[:400])
