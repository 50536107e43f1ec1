"""In one process: what a worker does with a run suspended in code it does not carry.

The agent's module is imported, a run suspends in it, then the module is rewritten and
imported again -- this process now carries only the new code, as a worker of the new deploy would.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
import textwrap

import pytest

from agentrt import Runtime
from agentrt._codec._requirement import code_requirement, lacking_code, parse_requirement
from agentrt._runtime.encoding import encode_result
from agentrt.stores import MemoryStore
from agentrt.testing import capture_trace
from tests.workers.test_worker import until

AGENT = """
import attrs
from agentrt import Task, agent, ui_tools


@attrs.frozen
class In:
    name: str


@attrs.frozen
class Out:
    text: str


async def run(input: In, task: Task) -> Out:
    answer = await task.ui.ask({{"q": input.name}})
    return Out({result})


bot = agent(input=In, output=Out, tools=[*ui_tools], run=run, name="bot")
"""


@pytest.fixture
def module(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    name = f"cr_{tmp_path.name.replace('-', '_')}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(AGENT.format(result='"v1 " + answer')))
    yield importlib.import_module(name), path
    sys.modules.pop(name, None)


def _suspend(store, mod):
    async def main():
        async with Runtime(store) as rt:
            run_id = await rt.start(mod.bot, {"name": "x"}, run_id="r1")
            await until(lambda: store.get_run(run_id).status == "waiting")
            return run_id

    return asyncio.run(main())


def _deploy_v2(mod, path):
    """The new code, as a process started after the deploy imports it (a new module object)."""
    path.write_text(textwrap.dedent(AGENT.format(result='"v2 " + answer.upper()')))
    sys.modules.pop(mod.__name__)
    return importlib.import_module(mod.__name__)


def test_the_requirement_names_the_python_and_every_function_by_digest(module, tmp_path):
    mod, path = module
    store = MemoryStore()
    _suspend(store, mod)
    text = store.get_run("r1").code_required
    assert text == code_requirement(store.latest_checkpoint("r1")[1])
    version, python, codes = parse_requirement(text)
    assert version == 2
    assert python == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert [(c.module, c.qualname) for c in codes] == [(mod.__name__, "run")]
    assert lacking_code(text) == ""
    # a checkpoint an older agentrt wrote (blob format 1, in-flight in the store) is still restorable
    assert lacking_code(text.replace("agentrt-blob 2 ", "agentrt-blob 1 ", 1)) == ""
    assert "blob format 9" in lacking_code(text.replace("agentrt-blob 2 ", "agentrt-blob 9 ", 1))
    _deploy_v2(mod, path)
    assert f"code of {mod.__name__}:run changed since the checkpoint" in lacking_code(text)
    assert "written by Python 2.7" in lacking_code(text.replace(f"python {python}", "python 2.7", 1))
    assert "not readable" in lacking_code("nonsense")


def test_a_run_needing_code_this_worker_lacks_is_given_back_and_then_passed_over(module):
    mod, path = module
    store = MemoryStore()
    run_id = _suspend(store, mod)
    mod = _deploy_v2(mod, path)
    seq = store.get_run(run_id).seq
    store.put_result(run_id, seq, 0, True, encode_result(store, run_id, seq, 0, True, "blue"))  # a reply

    async def main():
        async with Runtime(store, poll_seconds=0.05) as rt:
            await until(lambda: rt.lacking)
            await asyncio.sleep(0.3)  # many claims later
            return rt.lacking, rt.driver_error(run_id)

    with capture_trace() as events:
        lacking, error = asyncio.run(main())
    rec = store.get_run(run_id)
    assert lacking == [rec.code_required] and error is None
    assert (rec.status, rec.lease_owner) == ("waiting", None)  # not failed, not held
    released = [e for e in events if e.kind == "released"]
    assert [e.run_id for e in released] == [run_id]  # once: the claims pass over it from then on
    assert "changed since the checkpoint" in released[0].data["reason"]
    assert not [e for e in events if e.kind in ("driver_error", "failed")]


def test_a_local_wake_up_of_such_a_run_releases_it_too_and_an_explicit_resume_reports_it(module):
    mod, path = module
    store = MemoryStore()
    run_id = _suspend(store, mod)
    _deploy_v2(mod, path)

    async def wake():
        async with Runtime(store, worker=False) as rt:
            rt.schedule(run_id)  # what a child's outcome or a timer does in this process
            await until(lambda: store.get_run(run_id).lease_owner is None and not rt.driving)
            return rt.lacking, rt.driver_error(run_id)

    with capture_trace() as events:
        lacking, error = asyncio.run(wake())
    assert lacking == [store.get_run(run_id).code_required] and error is None
    assert [e.kind for e in events if e.kind in ("released", "driver_error")] == ["released"]

    async def resume():
        async with Runtime(store, worker=False) as rt:
            await rt.resume(run_id)
            await until(lambda: not rt.driving)
            return rt.driver_error(run_id)

    error = asyncio.run(resume())
    assert error is not None and "changed since the checkpoint" in str(error)
    rec = store.get_run(run_id)
    # reported, and blocked (a worker that carries its code takes it up: agentrt._runtime.blocking)
    assert rec.status == "blocked" and rec.lease_owner is None
    assert (
        "changed since the checkpoint" in rec.blocked["message"]
        and "agentrt upgrade" in rec.blocked["message"]
    )
    assert rec.pending["kind"] == "ask"  # what it waits on is kept

    # a worker that carries its code (the old deploy's) takes the blocked run up: it waits again
    path.write_text(textwrap.dedent(AGENT.format(result='"v1 " + answer')))
    sys.modules.pop(mod.__name__)
    importlib.import_module(mod.__name__)

    async def old_worker():
        async with Runtime(store, poll_seconds=0.05):
            await until(lambda: store.get_run(run_id).status == "waiting")

    asyncio.run(old_worker())
    assert store.get_run(run_id).blocked is None


def test_a_reply_to_such_a_run_is_recorded_and_left_for_a_worker_with_its_code(module):
    mod, path = module
    store = MemoryStore()
    run_id = _suspend(store, mod)
    _deploy_v2(mod, path)

    async def reply():
        async with Runtime(store, poll_seconds=0.05) as rt:  # a worker, as behind agentrt serve
            assert await rt.reply(run_id, "blue") == run_id
            await asyncio.sleep(0.2)
            return rt.driver_error(run_id)

    with capture_trace() as events:
        error = asyncio.run(reply())
    rec = store.get_run(run_id)
    assert "changed since the checkpoint" in str(error)  # what `agentrt resume --reply` reports
    assert rec.lease_owner is None and rec.status == "waiting"
    assert store.get_results(run_id, rec.seq)  # the reply is journaled
    assert rec.wake_at is not None  # ... and the run is runnable for a worker that can resume it
    assert [e.kind for e in events if e.kind in ("replied", "released", "driver_error")] == [
        "replied",
        "released",
    ]
