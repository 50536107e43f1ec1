"""The agents that benchmarks/checkpoint.py checkpoints (plain ``async def``, no decorator).

Each scenario agent loops forever around one ``await suspend(...)``, so any suspension
after the first is a steady state: a checkpoint taken there restores and steps to the
next suspension, and the 100k-cycle loops never hit the end of the agent.  The payloads
carry a little of the live state (counters, sizes) so a broken restore shows up in the
benchmark's sanity check before anything is timed.

Kept in a module of their own (not ``__main__``) so blobs name them by an ordinary
``module:qualname``, as a real agent would be named.
"""

from __future__ import annotations

from typing import Any

from agentrt.lowlevel import suspend

# --------------------------------------------------------------------------- (a) one frame, 20 locals


async def flat_agent(user_id: int, topic: str) -> Any:
    """(a) One frame whose 20 locals (ints, strs, floats, a small list and dict) live across the await."""
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
        if attempt > max_attempts:  # never true: keeps every local alive and used
            return (user_id, budget_cents, elapsed, system_prompt, question, status, history, tags)
        if not params or not seen:
            return score


# --------------------------------------------------------------------------- (b) 5-deep chain


async def chain_root(goal: str) -> Any:
    """(b) Outermost of five agent coroutines, each awaiting the next, each with a few locals."""
    plan = ["search", "read", "summarize"]
    budget = 10.0
    label = "root"
    result = await chain_planner(goal, plan)
    return label, budget, result


async def chain_planner(goal: str, plan: list[str]) -> Any:
    step_no = 0
    notes = {"goal": goal, "steps": len(plan)}
    title = f"plan for {goal}"
    result = await chain_researcher(goal, plan[0])
    return step_no, notes, title, result


async def chain_researcher(goal: str, action: str) -> Any:
    sources = ["https://example.org/a", "https://example.org/b"]
    max_sources = 4
    weight = 0.5
    result = await chain_tool_loop(action, sources)
    return max_sources, weight, result


async def chain_tool_loop(action: str, sources: list[str]) -> Any:
    calls = 0
    cache = {"hits": 0, "misses": 0}
    timeout = 30.0
    result = await chain_leaf(action, len(sources))
    return calls, cache, timeout, result


async def chain_leaf(action: str, width: int) -> Any:
    """The innermost coroutine: the one that suspends, forever."""
    count = 0
    total = 0
    last = None
    while True:
        last = await suspend(("tool", action, count, total))
        count += 1
        total += last
        if width < 0:  # never true
            return count, total, last


# --------------------------------------------------------------------------- (c) ~1 MB of state

BIG_RECORDS = 10_000


def make_records(n: int = BIG_RECORDS) -> list[dict[str, Any]]:
    """``n`` small dicts: about 1 MB with pickle/cloudpickle for the default ``n``."""
    cities = ("Berlin", "Paris", "Lyon", "Oslo")
    return [
        {
            "id": i,
            "name": f"customer-{i:05d}",
            "email": f"customer{i}@example.com",
            "city": cities[i % 4],
            "score": i * 0.25,
            "active": i % 3 == 0,
            "notes": f"note {i}",
            "tags": ["vip" if i % 7 == 0 else "std", f"region-{i % 10}"],
        }
        for i in range(n)
    ]


async def big_state_agent(n: int) -> Any:
    """(c) ~1 MB of live state (a list of ``n`` small dicts) across the await."""
    records = make_records(n)
    cursor = 0
    processed = 0
    while True:
        reply = await suspend(("page", cursor, len(records)))
        cursor += 1
        processed += reply
        if processed < 0:  # never true
            return records


# --------------------------------------------------------------------------- a tool loop (step_lean.py)


async def tool_loop(n: int) -> Any:
    """benchmarks/step.py's agent loop with nothing but plain data in its frame (no ``Task``, no attrs
    input, a tuple for a request), for issue 26's lean step prototype (benchmarks/step_lean.py)."""
    acc = 0
    i = 0
    while i < n:
        result = await suspend(("tool", "async_step", {"i": i}))
        acc += result["i"]
        i += 1
    return {"acc": acc}


# --------------------------------------------------------------------------- a handler (checkpoint_floor.py)

#: the tags of the ``guarded_root`` frames whose handler ran (a drop that runs code shows up here)
HANDLERS_RAN: list[str] = []


async def guarded_leaf(step: int) -> Any:
    return await suspend(("guarded", step))


async def guarded_root(tag: str) -> Any:
    """Two frames, the outer one waiting inside a handler that records that it ran: dropping a
    restored copy must not run it (benchmarks/checkpoint_floor.py's drop check)."""
    step = 0
    while True:
        try:
            step += await guarded_leaf(step)
        except BaseException:
            HANDLERS_RAN.append(tag)
            raise


# --------------------------------------------------------------------------- scenarios

# name -> (description, agent function, args, value sent at each step)
SCENARIOS: dict[str, tuple[str, Any, tuple[Any, ...], Any]] = {
    "a_flat20": ("(a) 1 frame, 20 locals", flat_agent, (7, "compilers"), 3),
    "b_chain5": ("(b) 5-deep coroutine chain", chain_root, ("benchmarks",), 2),
    "c_state1mb": ("(c) ~1 MB of state (10k dicts)", big_state_agent, (BIG_RECORDS,), 1),
}
