"""dispatch-py side of benchmarks/checkpoint.py: scenario (a) as a ``@durable`` coroutine.

Runs ONLY in the benchmark's own venv ``benchmarks/.venv-dispatch-3.X`` (dispatch-py 0.8
and http-sfv; never a dependency of agentrt), started by checkpoint.py as a subprocess.
Prints one JSON object on stdout.

The agent below is scenario (a) of checkpoint_agents.py, line for line, with agentrt's
``await suspend(payload)`` replaced by dispatch's idiom for a suspension point: a durable
generator-based coroutine that yields the payload.  Measured, with the same harness
(_timing.py) as agentrt: ``pickle.dumps`` of the suspended durable coroutine, and
``pickle.loads`` + one step to the next suspension (``.__await__().send(value)``).
"""

from __future__ import annotations

import argparse
import json
import pickle
import platform
import sys
from importlib import metadata
from types import coroutine
from typing import Any

from _timing import run_interleaved
from dispatch.experimental.durable import durable


@coroutine
@durable
def suspend(payload: Any) -> Any:
    return (yield payload)


@durable
async def flat_agent(user_id: int, topic: str) -> Any:
    attempt = 0
    max_attempts = 5
    budget_cents = 125_000
    tokens_used = 0
    temperature = 0.7
    top_p = 0.95
    score = 0.0
    elapsed = 12.5
    model = "example-model-large"
    system_prompt = "You are a careful research assistant. Cite every source you use."
    question = f"What changed in {topic} this week?"
    status = "running"
    history = [1, 2, 3, 5, 8, 13]
    tags = ["research", topic, "draft"]
    params = {"retries": 3, "timeout": 30.0, "mode": "fast", "stream": False}
    seen = {"doc-1": 1, "doc-2": 2}
    step = 0
    reply = 0
    while True:
        reply = await suspend(("llm", model, step, tokens_used))
        step += 1
        tokens_used += reply
        score = score * 0.5 + temperature * top_p
        if attempt > max_attempts:
            return (user_id, budget_cents, elapsed, system_prompt, question, status, history, tags)
        if not params or not seen:
            return score


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--min-round-ms", type=float, default=100.0)
    parser.add_argument("--budget-s", type=float, default=30.0)
    parser.add_argument("--suspensions", type=int, default=3)
    args = parser.parse_args()

    value = 3
    coro = flat_agent(7, "compilers")
    driver = coro.__await__()
    payload = driver.send(None)
    for _ in range(args.suspensions - 1):
        payload = driver.send(value)
    blob = pickle.dumps(coro)

    # Sanity check: the restored coroutine carries on exactly like the original.
    restored = pickle.loads(blob)
    got = restored.__await__().send(value)
    clone = pickle.loads(blob).__await__()
    want = clone.send(value)
    if got != want or got[2] != payload[2] + 1:
        raise SystemExit(f"dispatch-py restore check failed: {got!r} != {want!r} (was {payload!r})")

    def dumps() -> bytes:
        return pickle.dumps(coro)

    def loads() -> Any:
        return pickle.loads(blob)

    def loads_step() -> None:
        # dropped inside the timed loop, as benchmarks/checkpoint.py drops agentrt's restored machine
        pickle.loads(blob).__await__().send(value)

    timings = run_interleaved(
        {"dumps": dumps, "loads": loads, "loads_step": loads_step},
        rounds=args.rounds,
        min_round_ns=int(args.min_round_ms * 1e6),
        budget_ns=int(args.budget_s * 1e9),
    )
    print(
        json.dumps(
            {
                "python": platform.python_version(),
                "executable": sys.executable,
                "dispatch_py": metadata.version("dispatch-py"),
                "pickle_protocol": pickle.DEFAULT_PROTOCOL,
                "blob_bytes": len(blob),
                "payload": list(payload),
                "measurements": timings,
            }
        )
    )


if __name__ == "__main__":
    main()
