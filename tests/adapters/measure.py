"""What the pydantic-ai adapter costs: per call live, and to recover after N journaled calls.

    PYTHONPATH=$PWD .venv-3.13/bin/python -m tests.adapters.measure

An agent whose model calls a tool N times, then answers (pydantic-ai ``FunctionModel``, a sync tool):

- ``plain``: ``agent.run`` without agentrt;
- ``durable memory`` / ``durable sqlite``: the durable agent under ``Runtime`` (memory store; a SQLite
  file), start to completion;
- ``recover``: a session rebuilt from a journal of the run's 2N+1 calls after a crash: the time of
  the first step in the new process's place (pydantic-ai runs again over the journal, then makes the
  one call in flight).

Not a test: numbers for docs/adapters.md and the issue's closing note.  Best of 3.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

from agentrt import Runtime
from agentrt.adapters._session import _PERFORM, Journal, Record, Sessions
from agentrt.adapters.pydantic_ai import PydanticAIInput, durable
from agentrt.stores.memory import MemoryStore
from agentrt.stores.sqlite import SqliteStore

N = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0


def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    done = sum(isinstance(m, ModelResponse) for m in messages)
    limit = int(messages[0].parts[-1].content)  # type: ignore[union-attr]  # the prompt is N
    if done < limit:
        return ModelResponse(parts=[ToolCallPart("step", {"i": done}, tool_call_id=f"c{done}")])
    return ModelResponse(parts=[TextPart(f"done after {done} steps")])


agent = Agent(FunctionModel(_respond), name="stepper")


@agent.tool_plain
def step(i: int) -> int:
    return i * 2


LIMITS = UsageLimits(request_limit=None)
durable_stepper = durable(agent, name="stepper", usage_limits=LIMITS)


def best(fn: Any, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def plain(n: int) -> None:
    asyncio.run(agent.run(str(n), usage_limits=LIMITS))


def under_runtime(n: int, store: Any) -> float:
    """Seconds from start to completion (not the runtime's own start-up and close)."""

    async def go() -> float:
        async with Runtime(store=store) as rt:
            started = time.perf_counter()
            run_id = await rt.start(durable_stepper, {"prompt": str(n)})
            await rt.wait(run_id)
            return time.perf_counter() - started

    return asyncio.run(go())


def recover(n: int) -> float:
    """Seconds of the first step after a crash at the end of a run of n tool calls."""
    from agentrt.adapters.pydantic_ai import _Options, _program

    options = _Options(agent, None, LIMITS, None)

    async def program(request: Any, session: Any) -> Any:
        return await _program(options, request, session)

    async def go() -> float:
        request = PydanticAIInput(str(n))
        live = Sessions(program)
        journal = Journal()
        step = await live.start("r", request)
        while step.next.kind == "model" or step.next.kind == "tool":
            seam = step.next
            step = await live.answer("r", request, journal, _PERFORM)
            journal.append(Record(seam, step.outcome))
            if len(journal) == 2 * n:  # the last model call is next: "crash" here
                break
        fresh = Sessions(program)  # another process: no session, only the journal
        started = time.perf_counter()
        await fresh.answer("r", request, journal, _PERFORM)
        return time.perf_counter() - started

    return min(asyncio.run(go()) for _ in range(3))


def main() -> None:
    sizes = [N] if N else [10, 100, 300]
    print(
        "| tool calls N | plain pydantic-ai | durable, memory store | durable, SQLite | per call (SQLite) "
        "| recover after 2N calls |"
    )
    print("|---|---|---|---|---|---|")
    for n in sizes:
        p = best(lambda n=n: plain(n))
        m = min(under_runtime(n, MemoryStore()) for _ in range(3))
        with tempfile.TemporaryDirectory() as tmp:
            s = min(under_runtime(n, SqliteStore(Path(tmp) / f"s{i}.db")) for i in range(3))
        r = recover(n)
        calls = 2 * n + 1
        print(
            f"| {n} | {p * 1e3:.1f} ms | {m * 1e3:.1f} ms | {s * 1e3:.1f} ms | "
            f"{(s - p) / calls * 1e3:.2f} ms | {r * 1e3:.1f} ms |"
        )


if __name__ == "__main__":
    main()
