"""The suspend() trap: a generator with nothing Python-level around it, stored as its payload."""

import gc
import subprocess
import sys
import textwrap

import pytest

from agentrt import Done, Machine
from agentrt._frames._trap import is_trap
from agentrt.exceptions import ForeignAwaitable
from agentrt.lowlevel import suspend
from tests.lowlevel import agents


def _python_code_run_by(action, *args):
    """The code objects of the Python functions (and generator resumptions) ``action(*args)`` runs."""
    seen = set()

    def profile(frame, event, arg):
        if event == "call":
            seen.add(frame.f_code)

    # Garbage another test left in a cycle (a Machine, whose __del__ discards its chain) must not be
    # collected inside the window and counted as code this action ran.
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    sys.setprofile(profile)
    try:
        action(*args)
    finally:
        sys.setprofile(None)
        if was_enabled:
            gc.enable()
    return seen


def test_a_suspension_runs_only_the_agent_and_the_trap():
    coro = agents.counter(5)
    coro.send(None)
    seen = _python_code_run_by(coro.send, 1)  # resume one suspend, run to the next
    coro.close()
    assert seen == {agents.counter.__code__, suspend.__code__}


def test_the_awaited_object_is_a_trap_generator_before_and_after_a_restore():
    m = Machine(agents.counter, 3)
    assert m.step() == 0
    assert is_trap(m._coro.cr_await)
    restored = Machine.set(m.get())
    assert is_trap(restored._coro.cr_await)  # a fresh trap, started by priming: not the stored value
    assert restored._coro.cr_await.gi_frame.f_lasti > 0
    assert [restored.step(2), restored.step(3)] == [1, 2]


def test_a_trap_made_before_the_checkpoint_is_awaited_after_restore_in_a_fresh_process(tmp_path):
    m = Machine(agents.trap_made_early)
    assert m.step() == ("now", 0)
    (tmp_path / "blob").write_bytes(m.get())
    uninterrupted = [m.step("a"), m.step("b")]
    script = textwrap.dedent(
        f"""
        from tests.lowlevel import agents
        from agentrt import Machine
        m = Machine.set(open({str(tmp_path / "blob")!r}, "rb").read())
        print(repr([m.pending, m.step("a"), m.step("b")]))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert uninterrupted == [("later", 1), Done(("a", "b"))]
    assert out.stdout.strip() == repr([("now", 0), *uninterrupted])


def test_a_pair_yielded_by_a_foreign_awaitable_is_not_a_request():
    m = Machine(agents.awaits_a_foreign_pair)
    with pytest.raises(ForeignAwaitable, match="AR102"):
        m.step()


@pytest.mark.parametrize("restore", [False, True], ids=["live", "restored"])
def test_throw_reaches_the_agent_at_the_pending_suspend(restore):
    m = Machine(agents.cancellable, 3)
    assert m.step() == ("work", 0)
    assert m.step("x") == ("work", 1)
    if restore:
        m = Machine.set(m.get())
    assert m.throw(KeyboardInterrupt()) == ("cleanup", 1)
    assert m.step("y") == Done((["x", "cancelled"], "y"))


def test_closing_a_coroutine_suspended_on_a_trap_runs_its_finally():
    coro = agents.lock_live()
    assert coro.send(None)[1] == "holding"
    trap = coro.cr_await
    coro.close()
    assert trap.gi_frame is None and coro.cr_frame is None


def test_a_trap_made_before_a_checkpoint_survives_one_at_every_suspension():
    from tests.lowlevel.test_machine import run_with_checkpoints

    assert run_with_checkpoints(agents.trap_made_early, answer=lambda p: p) == (("now", 0), ("later", 1))


def test_a_stop_iteration_thrown_at_a_suspend_arrives_as_the_runtime_error_python_makes_of_it():
    # As at any generator-based await (PEP 479): it can never end the await as if answered.
    m = Machine(agents.catches_anything)
    m.step()
    assert m.throw(StopIteration(5)) == Done(("raised", "RuntimeError", "StopIteration(5)"))
