"""Machine semantics: step / throw / get / set / pending, and errors that say what to do."""

import gc
import pickle
import subprocess
import sys
import textwrap
import warnings

import pytest

from agentrt import CannotCrossAwait, CorruptBlob, Done, Machine
from agentrt.exceptions import ForeignAwaitable
from tests.lowlevel import agents


def test_api_example_round_trip():
    m = agents.api_example and Machine(agents.api_example, 41)
    assert m.step() == ("ask", 41)
    blob = m.get()
    assert isinstance(blob, bytes)
    m2 = Machine.set(blob)
    assert m2.pending == ("ask", 41)
    assert m2.step(1) == Done(value=2)


def test_get_leaves_the_machine_usable_and_each_blob_restores_independently():
    m = Machine(agents.counter, 4)
    m.step()
    m.step(10)
    blob = m.get()
    assert m.step(20) == 2  # the original goes on
    assert m.step(30) == 3
    assert m.step(40) == Done(100)
    first, second = Machine.set(blob), Machine.set(blob)
    assert first.pending == second.pending == 1
    assert [first.step(1), first.step(1), first.step(1)] == [2, 3, Done(13)]
    assert [second.step(5), second.step(5), second.step(5)] == [2, 3, Done(25)]


def test_throw_into_a_restored_chain_runs_the_agents_handler():
    m = Machine(agents.catches, "t")
    assert m.step() == ("risky", "t")
    restored = Machine.set(m.get())
    assert restored.throw(KeyError("missing")) == ("recover", "missing")
    assert restored.step("fixed") == Done(("recovered", "fixed"))


def test_uncaught_exception_propagates_with_type_and_args():
    m = Machine(agents.raises_after, 2)
    m.step()
    m = Machine.set(m.get())
    m.step()
    with pytest.raises(LookupError) as info:
        m.step()
    assert info.value.args == ("gone", 2)
    assert m.done


def test_bare_raise_after_restore_reraises_the_handled_exception():
    m = Machine(agents.reraises)
    assert m.step() == "inside except"
    restored = Machine.set(m.get())
    with pytest.raises(ValueError, match="original"):
        restored.step()


def test_tracebacks_show_the_agents_own_file_and_line():
    m = Machine(agents.traceback_line)
    m.step()
    restored = Machine.set(m.get())
    with pytest.raises(RuntimeError) as info:
        restored.step()
    filename, _, line = agents.format_last_frame(info.value)
    assert filename == agents.__file__
    assert line == 'raise RuntimeError("boom")  # the traceback must point at this line'


def test_first_step_takes_no_value_and_finished_machines_refuse_work():
    m = Machine(agents.api_example, 1)
    with pytest.raises(TypeError, match="first step"):
        m.step(5)
    m = Machine(agents.api_example, 1)
    m.step()
    m.step(1)
    with pytest.raises(RuntimeError, match="already finished"):
        m.step(1)
    with pytest.raises(RuntimeError, match="finished"):
        m.get()


def test_machine_requires_an_async_function():
    with pytest.raises(TypeError, match="async def"):
        Machine(len, [])


def test_get_before_the_first_step_says_what_to_do():
    with pytest.raises(RuntimeError, match="call step"):
        Machine(agents.api_example, 1).get()


def test_foreign_awaitable_is_reported_as_ar102():
    m = Machine(agents.foreign_await)
    with pytest.raises(ForeignAwaitable, match="AR102"):
        m.step()


def test_live_lock_is_refused_with_location_and_fix():
    m = Machine(agents.lock_live)
    m.step()
    with pytest.raises(CannotCrossAwait) as info:
        m.get()
    error = info.value
    assert error.code == "AR112"
    assert error.variable == "lock"
    assert error.function == "lock_live"
    assert error.filename == agents.__file__
    assert error.lineno == agents.lock_live.__code__.co_firstlineno + 2
    assert "lock" in str(error) and "AR112" in str(error)


def test_live_regex_match_is_ar103_but_a_dead_one_is_left_out():
    m = Machine(agents.match_live)
    m.step()
    with pytest.raises(CannotCrossAwait) as info:
        m.get()
    assert (info.value.code, info.value.variable) == ("AR103", "m")
    m = Machine(agents.match_dead)
    m.step()
    assert Machine.set(m.get()).step() == Done("b")


def test_nested_unserializable_value_names_the_path():
    # signed (the default): the unmarked Opaque goes through the pickle protocol, and the lock
    # inside it is what cannot cross (issue 24)
    m = Machine(agents.nested_unserializable)
    m.step()
    with pytest.raises(CannotCrossAwait) as info:
        m.get()
    error = info.value
    assert error.code == "AR112"
    assert error.variable == "state"
    assert error.path == 'state["client"][1].session'
    assert "lock" in error.type_name


def test_nested_unmarked_instance_names_the_path_in_an_unsigned_blob():
    m = Machine(agents.nested_unserializable)
    m.step()
    with pytest.raises(CannotCrossAwait) as info:
        m.get_bound(b"", ("checkpoint", None, None))
    error = info.value
    assert error.code == "AR105"
    assert error.variable == "state"
    assert error.path.startswith('state["client"][1]')
    assert error.type_name.endswith("Opaque")


def test_corrupt_blob_is_refused():
    m = Machine(agents.counter, 3)
    m.step()
    blob = m.get()
    for bad in (b"", blob[:10], blob[:-1], blob[:20] + bytes([blob[20] ^ 0xFF]) + blob[21:]):
        with pytest.raises(CorruptBlob):
            Machine.set(bad)


def test_restore_in_a_fresh_process(tmp_path):
    m = Machine(agents.counter, 3)
    m.step()
    m.step(5)
    (tmp_path / "blob").write_bytes(m.get())
    script = textwrap.dedent(
        f"""
        import sys
        from tests.lowlevel import agents
        from agentrt import Machine
        m = Machine.set(open({str(tmp_path / "blob")!r}, "rb").read())
        print(m.pending, m.step(7), m.step(9))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "2", "Done(value=21)"]


def collect_garbage_reporting_problems() -> tuple[list[str], list[str]]:
    """``gc.collect()`` and what it let slip: warnings issued by finalizers (recorded, since a warning
    raised as an error inside a finalizer is only *reported*) and unraisable exceptions."""
    unraisable: list[str] = []
    previous_hook = sys.unraisablehook
    sys.unraisablehook = lambda info: unraisable.append(f"{info.exc_type.__name__}: {info.exc_value}")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):  # finalizers may free more garbage
                gc.collect()
    finally:
        sys.unraisablehook = previous_hook
    return [f"{w.category.__name__}: {w.message}" for w in caught], unraisable


def test_the_garbage_check_sees_a_warning_from_a_finalizer():
    class WarnsWhenCollected:
        def __del__(self):
            warnings.warn("leaked", ResourceWarning, stacklevel=1)

    thing = WarnsWhenCollected()
    thing.cycle = thing
    del thing
    warned, unraisable = collect_garbage_reporting_problems()
    assert warned == ["ResourceWarning: leaked"] and unraisable == []


def test_abandoned_restored_machines_do_not_warn():
    m = Machine(agents.counter, 3)
    m.step()
    collect_garbage_reporting_problems()  # start clean: what earlier tests left is not ours
    for _ in range(3):
        Machine.set(m.get())
    warned, unraisable = collect_garbage_reporting_problems()
    assert warned == [] and unraisable == []


def test_done_is_a_value():
    assert Done(3) == Done(3)
    assert pickle.loads(pickle.dumps(Done(3))) == Done(3)


def run_with_checkpoints(fn, *args, answer=lambda payload: 1):
    """Drive ``fn`` with Machine.set(m.get()) before every answer; return the result."""
    m = Machine(fn, *args)
    payload = m.step()
    while not isinstance(payload, Done):
        m = Machine.set(m.get())
        payload = m.step(answer(payload))
    return payload.value


def test_unstarted_finished_and_pending_objects_cross_awaits():
    expected = ([3, 2, 1], 1 + 2 + 10)
    answer = lambda payload: 10 if payload == ("extra", 1) else None  # noqa: E731
    assert run_with_checkpoints(agents.objects_in_every_state, answer=answer) == expected


def test_async_generator_suspended_inside_an_async_for_step():
    answer = lambda payload: payload[1] + 1  # noqa: E731
    assert run_with_checkpoints(agents.consumes_async_generator, answer=answer) == [0, 2, 6]


def test_roundtrip_hook_restores_before_every_resume():
    blobs = []

    def hook(machine):
        blobs.append(machine.get())
        return blobs[-1]

    Machine.roundtrip_hook = hook
    try:
        m = Machine(agents.catches, "t")
        assert m.step() == ("risky", "t")
        assert m.throw(KeyError("k")) == ("recover", "k")
        assert m.step("ok") == Done(("recovered", "ok"))
    finally:
        Machine.roundtrip_hook = None
    assert len(blobs) == 2


def test_cannot_cross_await_keeps_no_reference_to_the_refused_value():
    m = Machine(agents.lock_live)
    m.step()
    with pytest.raises(CannotCrossAwait) as info:
        m.get()
    assert info.value.__context__ is None and info.value.__cause__ is None
    from agentrt import _codec

    restored = _codec.loads(_codec.dumps(info.value))
    assert (restored.code, restored.variable) == ("AR112", "lock")


def test_a_frame_reachable_from_its_own_closure_cells_is_refused_at_checkpoint():
    from agentrt import UnsupportedSuspension

    box = []
    m = Machine(agents.captures_its_box, box)
    m.step()
    box.append(m._coro)  # the closure cell now reaches the suspended coroutine itself
    with pytest.raises(UnsupportedSuspension, match=r"AR111: captures_its_box .* own closure variables"):
        m.get()
    box.clear()
    assert Machine.set(m.get()).step() == Done(0)


def test_an_unstarted_coroutine_survives_repeated_checkpoints():
    # Restored-but-never-run objects keep their locals in the resume state until they start;
    # a second checkpoint must read them from there (this crashed 3.12/3.13 before).
    answer = lambda payload: 10 if payload == ("extra", 1) else None  # noqa: E731
    m = Machine(agents.objects_in_every_state)
    payload = m.step()
    for _ in range(3):
        m = Machine.set(m.get())
    while not isinstance(payload, Done):
        m = Machine.set(Machine.set(m.get()).get())
        payload = m.step(answer(payload))
    assert payload.value == ([3, 2, 1], 13)


def test_a_frame_record_missing_a_local_the_code_reads_unchecked_is_refused():
    # A tampered (re-signed) blob could leave out a live local; on 3.12+ the code would
    # then dereference NULL.  The restore plan refuses it instead.
    from agentrt._frames import _layout
    from agentrt._frames._liveness import analyze
    from agentrt._frames._plans import plan as _plan

    code = agents.keeps_parameter.__code__
    site = next(iter(analyze(code).sites.values()))
    if not _layout.UNCHECKED_LOADS:  # 3.11 checks every LOAD_FAST
        assert site.must_bind == ()
        return
    assert [code.co_varnames[i] for i in site.must_bind] == ["x"]
    null_mask = (False,) * site.stack_depth
    assert _plan(code, 0, site.yield_offset, site.live_locals, null_mask, False)
    with pytest.raises(CorruptBlob, match="reads unchecked"):
        _plan(code, 0, site.yield_offset, (), null_mask, False)


def test_an_unstarted_frame_record_must_bind_every_argument():
    from agentrt._frames import NOT_STARTED
    from agentrt._frames._plans import plan as _plan

    code = agents.add_later.__code__
    assert _plan(code, 0, NOT_STARTED, (0, 1), (), False)
    with pytest.raises(CorruptBlob, match="misses an argument"):
        _plan(code, 0, NOT_STARTED, (0,), (), False)


@pytest.mark.parametrize(
    ("agent", "variable", "words"),
    [
        (
            agents.lock_in_for_iterator,
            "<iterator of the 'for' loop at line {line}>",
            "the iterator of the 'for' loop at line {line} (inside it: <contents>[0][0]) "
            "of type _thread.lock",
        ),
        (
            agents.lock_as_pending_call_argument,
            "<argument 0 of the call _pair(...) at line {line}>",
            "the argument 0 of the call _pair(...) at line {line} of type _thread.lock",
        ),
    ],
)
def test_a_refused_value_stack_entry_is_described_not_numbered(agent, variable, words):
    line = agent.__code__.co_firstlineno + 2  # both agents suspend on their third line
    m = Machine(agent)
    m.step()
    with pytest.raises(CannotCrossAwait) as info:
        m.get()
    assert info.value.variable == variable.format(line=line)
    assert words.format(line=line) in str(info.value)
    assert "stack slot" not in str(info.value)
