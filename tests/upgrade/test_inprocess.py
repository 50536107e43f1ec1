"""Moving frames whose value stack holds more than the awaited object (an enclosing ``with`` and
``for``, a pending ``+=`` operand) and frames inside an ``except`` block, in one process: v1 is
imported, checkpointed, rewritten and reloaded, and the moved run must end exactly as a run of
v2 given the same answers."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from agentrt import Done, Machine
from agentrt._frames._migrate import Verdict
from agentrt._upgrade._blob import judge, migrate

V1 = """
import agentrt
from agentrt.lowlevel import suspend


@agentrt.serializable
class Ledger:
    def __init__(self):
        self.log = []

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, *exc):
        self.log.append("exit")
        return False


async def looping(items):
    ledger = Ledger()
    total = 0
    with ledger:
        for item in items:
            total += await suspend(item)
    return total, ledger.log


async def handling(x):
    try:
        raise ValueError(x)
    except ValueError as err:
        reply = await suspend("why?")
        return f"{err}/{reply}"
"""
EDITS = {
    "looping": (
        "    return total, ledger.log",
        '    ledger.log.append("done")\n    return total * 10, ledger.log',
    ),
    "handling": (
        '        return f"{err}/{reply}"',
        '        reply = reply.upper()\n        return f"{err}/{reply}"',
    ),
}


@pytest.fixture
def agent_module(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    name = f"upg_inproc_{tmp_path.name.replace('-', '_')}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(V1))
    module = importlib.import_module(name)
    yield module, path
    sys.modules.pop(name, None)


def _drive(machine: Machine, answers: list) -> object:
    out = None
    for answer in answers:
        out = machine.step(answer)
    assert isinstance(out, Done)
    return out.value


@pytest.mark.parametrize(
    ("function", "args", "first", "rest"),
    [("looping", ([1, 2, 3],), [None, 10], [20, 30]), ("handling", ("bad",), [None], ["because"])],
)
def test_moved_frame_keeps_its_value_stack_and_exception(agent_module, function, args, first, rest):
    module, path = agent_module
    machine = Machine(getattr(module, function), *args)
    for answer in first:
        machine.step(answer)
    blob = machine.get()
    machine.discard()

    path.write_text(textwrap.dedent(V1).replace(*EDITS[function]))
    module = importlib.reload(module)
    report = judge(blob)
    moved = [frame for frame in report.frames if frame.function.endswith(function)]
    assert [frame.verdict for frame in moved] == [Verdict.MIGRATES], report.frames
    result = _drive(Machine.set(migrate(blob, report)), rest)

    fresh = Machine(getattr(module, function), *args)
    assert result == _drive(fresh, [*first, *rest])


def test_a_frame_is_blocked_when_its_with_block_is_removed(agent_module):
    module, path = agent_module
    machine = Machine(module.looping, [1, 2])
    machine.step(None)
    blob = machine.get()
    machine.discard()
    path.write_text(textwrap.dedent(V1).replace("    with ledger:\n        for", "    if True:\n        for"))
    importlib.reload(module)
    report = judge(blob)
    assert report.verdict is Verdict.BLOCKED
    (frame,) = [f for f in report.frames if f.function.endswith("looping")]
    assert "with_exit" in frame.reason and frame.site.startswith("await #1")


def test_a_local_dead_in_the_old_frame_but_read_by_the_new_code_needs_a_migration(agent_module):
    module, path = agent_module
    machine = Machine(module.looping, [1, 2])
    machine.step(None)
    blob = machine.get()
    machine.discard()
    # v1 never reads `items` after the loop started, so the checkpoint does not hold it
    path.write_text(
        textwrap.dedent(V1).replace("    return total, ledger.log", "    return total, len(items)")
    )
    importlib.reload(module)
    (frame,) = [f for f in judge(blob).frames if f.function.endswith("looping")]
    assert frame.verdict is Verdict.NEEDS_MIGRATION and "items" in frame.reason
