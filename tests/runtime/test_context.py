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
