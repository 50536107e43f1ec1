"""Each run is stepped in its own contextvars.Context, and its context variables survive a restart."""

from __future__ import annotations

import asyncio

import pytest
import structlog

from agentrt import RunBlocked, Runtime
from tests.runtime import context_agents as C


def test_two_concurrent_runs_do_not_see_each_other_and_keep_their_context_across_a_restart(store):
    async def start_both() -> tuple[str, str]:
        rt = Runtime(store)
        first = await rt.start(C.tenant_agent, {"tenant": "acme"})
        second = await rt.start(C.tenant_agent, {"tenant": "globex"})
        for run_id in (first, second):
            while store.get_run(run_id).status != "waiting":
                await asyncio.sleep(0.001)
        await rt.close()  # the host stops: the next runtime restores both from their checkpoints
        return first, second

    first, second = asyncio.run(start_both())
    assert C.TENANT.get() == "none" and structlog.contextvars.get_contextvars() == {}  # nothing leaked out

    async def finish() -> list[object]:
        async with Runtime(store) as rt:
            outs = []
            for run_id in (first, second):
                await rt.resume(run_id)
                await rt.reply(run_id, "yes")
                outs.append(await rt.wait(run_id, timeout=20))
            return outs

    acme, globex = asyncio.run(finish())
    assert acme == C.Seen("none", "acme", {"tenant": "acme"}, "yes")
    assert globex == C.Seen("none", "globex", {"tenant": "globex"}, "yes")


def test_a_context_variable_no_module_holds_blocks_the_run_naming_it(store):
    async def main() -> str:
        async with Runtime(store) as rt:
            run_id = await rt.start(C.unnamed_agent, {"tenant": "acme"})
            with pytest.raises(RunBlocked):
                await rt.wait(run_id, timeout=20)
            return run_id

    finding = store.get_run(asyncio.run(main())).blocked
    assert finding["code"] == "AR111" and finding["function"] == "run_unnamed"
    assert finding["variable"].startswith("<context variable ContextVar('made_here')")
    assert "module level" in finding["message"]


_TOOLS_SCRIPT = """
import asyncio, json, sys
from agentrt import Runtime
from agentrt.stores import SqliteStore
from tests.runtime import context_agents as C

async def main(phase, path):
    store = SqliteStore(path)
    try:
        if phase == "start":
            rt = Runtime(store)
            run_id = await rt.start(C.tools_context_agent, {"tenant": "acme"})
            while store.get_run(run_id).status != "waiting":
                await asyncio.sleep(0.005)
            await rt.close()  # the host stops with the run waiting
            print(json.dumps(run_id))
        else:
            run_id = sys.argv[3]
            async with Runtime(store) as rt:
                await rt.resume(run_id)
                await rt.reply(run_id, "yes")
                out = await rt.wait(run_id, timeout=60)
            print(json.dumps([out.before_restart, out.after_restart, out.agent_after_tool_set]))
    finally:
        store.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def _phase(*args: str) -> object:
    """One phase of a run in a fresh interpreter (the host of that phase)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    )
    done = subprocess.run(
        [sys.executable, "-c", _TOOLS_SCRIPT, *args],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_tools_run_inside_the_runs_context_across_a_restart_in_a_fresh_process(sqlite_path):
    """Sync (thread pool and inline) and async tools, alone, gathered and under a run policy, see the
    agent's ContextVar and structlog binding -- before and after the run is restored by another
    process -- and what a tool sets stays in its copy."""
    run_id = _phase("start", str(sqlite_path))
    before, after, agent_after = _phase("finish", str(sqlite_path), str(run_id))
    expected = [
        ["pool", "acme", "acme"],
        ["inline", "acme", "acme"],
        ["async", "acme", "acme"],
        ["async+policy", "acme", "acme"],
        ["pool", "acme", "acme"],
        ["async", "acme", "acme"],
    ]
    assert before == expected
    assert after == expected
    assert agent_after == "acme"
