"""A run's context variables: its own Context per Machine, carried by the checkpoint (agentrt._context)."""

from __future__ import annotations

import decimal
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import structlog

from agentrt import CannotCrossAwait, Done, IncompatibleBlob, Machine
from agentrt._codec import read_header
from agentrt._codec._format import CONTEXT_FORMAT_VERSION, FORMAT_VERSION
from agentrt._context import carry
from agentrt.inspection import dump_blob
from tests.lowlevel import agents
from tests.lowlevel import context_agents as C

ROOT = Path(__file__).resolve().parents[2]


def in_a_fresh_process(blob: bytes, body: str, tmp_path: Path, before: str = "") -> object:
    """Run ``body`` in a new interpreter with ``blob`` (its ``m = Machine.set(blob)`` is done for it,
    after ``before``); ``body`` assigns ``result``, which comes back through JSON."""
    path = tmp_path / "blob"
    path.write_bytes(blob)
    script = (
        "import json\nfrom agentrt import Machine\nfrom tests.lowlevel import context_agents as C\n"
        + before
        + f"\nm = Machine.set(open({str(path)!r}, 'rb').read())\n"
        + textwrap.dedent(body)
        + "\nprint(json.dumps(result))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_context_variable_set_before_an_await_is_equal_after_a_restore_in_a_fresh_process(tmp_path):
    m = Machine(C.sets_then_awaits, "req-7")
    assert m.step() == ("ask", "req-7")
    blob = m.get()
    assert read_header(blob).format_version == CONTEXT_FORMAT_VERSION
    result = in_a_fresh_process(blob, "result = list(m.step(42).value)", tmp_path)
    assert result == ["req-7", [1, 2], "acme", "unset", 42]


def test_structlog_bound_context_survives_a_restart(tmp_path):
    m = Machine(C.binds_log_context, "alice")
    assert m.step() == "logged"
    result = in_a_fresh_process(m.get(), "result = list(m.step(None).value)", tmp_path)
    assert result == [["request-id", "r-1"], ["step", 2], ["user", "alice"]]  # any key, as structlog binds it


def test_the_decimal_context_survives(tmp_path):
    m = Machine(C.decimal_precision)
    m.step()
    result = in_a_fresh_process(m.get(), "result = m.step(None).value", tmp_path)
    assert result == "0.14286"


def test_a_change_to_the_decimal_context_stays_inside_the_run():
    before = decimal.getcontext().prec
    m = Machine(C.decimal_precision)
    m.step()
    assert decimal.getcontext().prec == before  # getcontext() inside the run gave the run's own copy
    assert m.step(None) == Done("0.14286")


def test_the_run_has_a_context_of_its_own():
    outside = C.REQUEST_ID.set("host")
    try:
        m = Machine(C.reads_and_sets, "run")
        assert m.step() == ("set", "run")
        assert C.REQUEST_ID.get() == "host"  # the run's set stayed in the run
        assert m.step(None) == Done(("host", "run"))  # the run started from the host's context
    finally:
        C.REQUEST_ID.reset(outside)


def test_two_machines_do_not_see_each_other():
    first, second = Machine(C.reads_and_sets, "a"), Machine(C.reads_and_sets, "b")
    first.step()
    second.step()
    assert first.step(None) == Done((None, "a"))
    assert second.step(None) == Done((None, "b"))


def test_what_the_host_set_is_not_carried_but_is_seen_again():
    token = C.SET_BY_HOST.set("first host")
    try:
        m = Machine(C.sets_then_awaits, "r")
        m.step()
        blob = m.get()
    finally:
        C.SET_BY_HOST.reset(token)
    token = C.SET_BY_HOST.set("second host")
    try:
        assert Machine.set(blob).step(1).value[3] == "second host"
    finally:
        C.SET_BY_HOST.reset(token)


def test_restored_variables_stay_part_of_later_checkpoints():
    m = Machine(C.sets_then_awaits, "kept")
    m.step()
    again = Machine.set(Machine.set(m.get()).get())  # restored, checkpointed again, restored again
    assert again.step(1).value[0] == "kept"


def test_a_run_without_context_variables_writes_format_2_as_before():
    m = Machine(agents.counter, 2)
    m.step()
    assert read_header(m.get()).format_version == FORMAT_VERSION == 2


def test_a_token_live_across_an_await_is_refused_at_get_naming_it():
    m = Machine(C.holds_token)
    m.step()
    with pytest.raises(CannotCrossAwait) as info:
        m.get()
    assert info.value.variable == "token" and info.value.code == "AR111"
    assert "contextvars.Token" in str(info.value) and "reset(token)" in str(info.value)


def test_a_token_reset_before_the_await_is_fine():
    m = Machine(C.resets_before_the_await)
    m.step()
    blob = m.get()
    assert read_header(blob).format_version == FORMAT_VERSION  # nothing set inside the run is left
    assert Machine.set(blob).step(None) == Done(None)


def test_an_unserializable_value_is_refused_at_get_naming_the_context_variable():
    m = Machine(C.holds_a_lock_in_a_variable)
    m.step()
    with pytest.raises(CannotCrossAwait) as info:
        m.get()
    error = info.value
    assert (
        error.code == "AR112" and error.variable == "<context variable tests.lowlevel.context_agents:HOLDER>"
    )
    assert "context variable tests.lowlevel.context_agents:HOLDER" in str(error)
    assert "holds_a_lock_in_a_variable" in str(error)
    assert '["lock"]' in error.path


def test_a_context_variable_no_module_holds_is_refused_at_get_with_the_fix():
    m = Machine(C.sets_a_local_variable)
    m.step()
    with pytest.raises(CannotCrossAwait) as info:
        m.get()
    message = str(info.value)
    assert "ContextVar('made_inside')" in message and "module level" in message
    assert "sets_a_local_variable" in message


def test_a_restore_without_the_variables_module_names_the_import(tmp_path):
    m = Machine(C.sets_then_awaits, "x")
    m.step()
    blob = m.get()
    script = textwrap.dedent(
        f"""
        import sys
        from agentrt import IncompatibleBlob, Machine
        # the agent's code module is imported; the variables' module is not
        import tests.lowlevel.context_agents as C
        blob = open({str(tmp_path / "blob")!r}, "rb").read()
        del sys.modules["tests.lowlevel.context_agents"]
        try:
            Machine.set(blob)
        except IncompatibleBlob as error:
            print("refused:", error)
        """
    )
    (tmp_path / "blob").write_bytes(blob)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert "refused:" in out.stdout, out.stderr
    assert "tests.lowlevel.context_agents" in out.stdout and "import it" in out.stdout


def test_a_variable_held_under_two_names_is_found_through_either(monkeypatch):
    import tests.lowlevel as package

    monkeypatch.setattr(package, "ALIAS", C.REQUEST_ID, raising=False)
    from agentrt._context._names import _KNOWN, global_names

    _KNOWN.pop(C.REQUEST_ID, None)
    names = global_names(C.REQUEST_ID)
    assert set(names) == {"tests.lowlevel:ALIAS", "tests.lowlevel.context_agents:REQUEST_ID"}
    assert names[0] == "tests.lowlevel.context_agents:REQUEST_ID"  # held under its own name first


def test_old_and_contextless_blobs_restore_with_an_empty_context():
    m = Machine(agents.counter, 2)
    m.step()
    restored = Machine.set(m.get())
    assert restored._context.carried == frozenset()
    assert carry(restored._coro, restored._context) is restored._coro  # nothing to carry either
    restored.discard()


def test_a_dump_shows_the_context_variables():
    m = Machine(C.sets_then_awaits, "dumped")
    m.step()
    dump = dump_blob(m.get())
    shown = {v.name: v.value.repr for v in dump.context if v.value is not None}
    assert shown["context variable tests.lowlevel.context_agents:REQUEST_ID"] == "'dumped'"
    assert shown["context variable tests.lowlevel.context_agents:Settings.tenant"] == "'acme'"


def test_structlog_log_lines_of_the_restored_run_carry_the_bound_keys():
    m = Machine(C.binds_log_context, "bob")
    m.step()
    restored = Machine.set(m.get())
    merged = restored._context.context.run(structlog.contextvars.get_contextvars)
    assert merged == {"user": "bob", "step": 1, "request-id": "r-1"}


def test_a_forged_context_entry_is_refused_when_unsigned():
    from agentrt import CorruptBlob
    from agentrt._codec import dumps
    from agentrt._context import Carried

    m = Machine(C.sets_then_awaits, "f")
    m.step()
    for entries in [
        (("var", ("no-colon",), 1),),
        (("nonsense", (), 1),),
        (("var", ("tests.lowlevel.context_agents:REQUEST_ID",), 1),) * 2,
    ]:
        blob = dumps(Carried(m._coro, entries), key=b"", bind=("checkpoint", None, None))
        with pytest.raises(CorruptBlob, match="malformed context"):
            Machine.set(blob, allow_unsigned=True)
    not_a_var = (("var", ("tests.lowlevel.context_agents:Settings",), 1),)
    blob = dumps(Carried(m._coro, not_a_var), key=b"", bind=("checkpoint", None, None))
    with pytest.raises(IncompatibleBlob, match="no longer holds a ContextVar"):
        Machine.set(blob, allow_unsigned=True)
    m.discard()


def test_the_trace_context_survives_as_span_ids_and_baggage(tmp_path):
    m = Machine(C.joins_a_trace)
    assert m.step() == "traced"
    blob = m.get()
    result = in_a_fresh_process(
        blob, "result = m.step(None).value", tmp_path, before="import opentelemetry.context"
    )
    assert result == [C.TRACE_ID, C.SPAN_ID, "acme", C.SPAN_ID]  # a span started after it is a child


def test_the_trace_context_is_dropped_where_opentelemetry_is_not_imported(tmp_path):
    m = Machine(C.joins_a_trace)
    m.step()
    body = """
    import sys
    result = [sorted(var.name for var in m._context.carried), "opentelemetry.context" in sys.modules]
    m.discard()
    """
    # context_agents imports OpenTelemetry inside its helpers only: nothing has imported it here
    assert in_a_fresh_process(m.get(), body, tmp_path) == [[], False]


UPGRADED = """
import contextvars
from agentrt.lowlevel import suspend

TAG = contextvars.ContextVar("tag")


async def tagged(x):
    TAG.set(x)
    reply = await suspend("go")
    return TAG.get(), reply
"""


def test_an_upgrade_keeps_the_context(tmp_path, monkeypatch):
    import importlib

    from agentrt._frames._migrate import Verdict
    from agentrt._upgrade._blob import judge, migrate

    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    name = f"ctx_upgrade_{tmp_path.name.replace('-', '_')}"
    path = tmp_path / f"{name}.py"
    path.write_text(UPGRADED)
    try:
        module = importlib.import_module(name)
        machine = Machine(module.tagged, "t")
        machine.step()
        blob = machine.get()
        machine.discard()
        path.write_text(UPGRADED.replace("return TAG.get(), reply", 'return TAG.get(), reply, "v2"'))
        module = importlib.reload(module)  # a new ContextVar under the same name: found by its name
        report = judge(blob)
        assert report.verdict is Verdict.MIGRATES, report.frames
        moved = migrate(blob, report)
        assert read_header(moved).format_version == CONTEXT_FORMAT_VERSION
        assert Machine.set(moved).step("r") == Done(("t", "r", "v2"))
    finally:
        sys.modules.pop(name, None)


def test_a_fork_keeps_the_context():
    from agentrt.inspection._fork import rebind_run_id
    from agentrt.keys import project_keyring

    m = Machine(C.sets_then_awaits, "forked")
    m.step()
    ring = project_keyring(create=True)
    assert ring is not None
    blob = m.get_bound(ring.write, ("checkpoint", "run-a", 1))
    m.discard()
    rebound, _count = rebind_run_id(blob, "run-a", "run-b", seq=1, ring=ring)
    from agentrt._codec._decode import Requirement

    restored = Machine.set_bound(
        rebound, ring, Requirement(signed=True, kind="checkpoint", run_id="run-b", seq=1)
    )
    assert restored.step(0).value[:3] == ("forked", [1, 2], "acme")


def test_agentrt_check_reports_a_token_live_across_an_await_and_nothing_else_about_context():
    from agentrt.validate import check_file

    findings = check_file(Path(C.__file__))
    assert sorted((f.function, f.variable, f.code, f.severity) for f in findings) == [
        ("holds_token", "token", "AR111", "error"),  # the runtime refuses it the same way
        ("sets_a_local_variable", "local_var", "AR111", "error"),  # a ContextVar object in a local
    ]
    token = next(f for f in findings if f.variable == "token")
    assert "reset(token)" in token.message


def test_a_decimal_context_is_carried_only_when_its_settings_differ_from_the_default():
    from agentrt._context._adapters import DecimalAdapter

    adapter, default = DecimalAdapter(), decimal.DefaultContext
    flagged = default.copy()
    flagged.flags[decimal.Inexact] = True  # flags alone: arithmetic raised them, nothing was set
    assert not adapter.worth_carrying(default.copy()) and not adapter.worth_carrying(flagged)
    for change in (
        lambda c: setattr(c, "prec", 5),
        lambda c: setattr(c, "rounding", decimal.ROUND_DOWN),
        lambda c: setattr(c, "Emax", 99),
        lambda c: setattr(c, "capitals", 0),
        lambda c: c.traps.__setitem__(decimal.Inexact, True),
        lambda c: c.traps.__setitem__(decimal.DivisionByZero, False),
    ):
        changed = default.copy()
        change(changed)
        assert adapter.worth_carrying(changed)
