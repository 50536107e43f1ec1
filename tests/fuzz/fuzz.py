"""Drive the differential fuzzer: batches of seeds, verdicts, and reduction of failures.

``python -m tests.fuzz --seeds N [--start S]`` (``make fuzz SEEDS=N``) runs seeds S..S+N-1 and
prints one line per failure with the reduced agent; ``tests/fuzz/test_fuzz.py`` runs a fixed
budget in CI.
"""

from __future__ import annotations

import gc
import itertools
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.fuzz import runner
from tests.fuzz.generator import Agent, Node, generate

BATCH = 50  # agents per fresh-process worker


def _quiet_abandoned(unraisable: object) -> None:
    """Mode (b) drops the original chain at every suspension; one suspended in a finally that
    awaits is closed by the GC with "coroutine ignored GeneratorExit": its expected fate."""
    exc = getattr(unraisable, "exc_value", None)
    if isinstance(exc, RuntimeError) and "ignored GeneratorExit" in str(exc):
        return
    sys.__unraisablehook__(unraisable)  # type: ignore[arg-type]


def run_batch(
    agents: list[Agent], directory: Path, tag: str = "", fresh: bool = True
) -> list[runner.Verdict]:
    """All three modes for ``agents``; one worker process restores all their blobs."""
    verdicts: dict[int, runner.Verdict] = {}
    refs = {}
    entries: dict[int, list[dict]] = {}
    hook = sys.unraisablehook
    sys.unraisablehook = _quiet_abandoned
    try:
        for agent in agents:
            try:
                module = runner.load(runner.write_module(agent, directory, tag), directory)
            except Exception as exc:  # a generator bug: the agent does not import
                verdicts[agent.seed] = runner.Verdict(agent.seed, "generator", f"{type(exc).__name__}: {exc}")
                continue
            ref, verdict, blobs = runner.run_in_process(module, agent, directory if fresh else None)
            refs[agent.seed] = ref
            if verdict is not None:
                verdicts[agent.seed] = verdict
            else:
                entries[agent.seed] = blobs
        gc.collect()
    finally:
        sys.unraisablehook = hook
    all_entries = [e for blobs in entries.values() for e in blobs]
    results = runner.run_fresh(directory, all_entries) if all_entries else {}
    for seed, blobs in entries.items():
        verdict = runner.judge_fresh(seed, refs[seed], blobs, results)
        verdicts[seed] = verdict or runner.Verdict(seed, None, f"{len(refs[seed].payloads)} suspensions")
    return [verdicts[a.seed] for a in agents]


# ---------------------------------------------------------------- reduction


def _paths(nodes: list[Node], prefix: tuple[int, ...] = ()) -> Iterator[tuple[int, ...]]:
    for i, node in enumerate(nodes):
        yield (*prefix, i)
        for c, (_, body) in enumerate(node.clauses):
            yield from _paths(body, (*prefix, i, c))


def _locate(nodes: list[Node], path: tuple[int, ...]) -> tuple[list[Node], int]:
    """The list holding the node at ``path`` and its index there."""
    for depth in range(0, len(path) - 1, 2):
        nodes = nodes[path[depth]].clauses[path[depth + 1]][1]
    return nodes, path[-1]


def candidates(agent: Agent) -> Iterator[Agent]:
    """One-step simplifications of ``agent``, biggest first."""
    for f in range(len(agent.functions) - 1):  # drop a helper
        smaller = agent.copy()
        del smaller.functions[f]
        yield smaller
    for f, function in enumerate(agent.functions):
        if function.wrapped:
            plain = agent.copy()
            plain.functions[f].wrapped = False
            yield plain
        for path in list(_paths(function.body)):
            trial = agent.copy()
            nodes, i = _locate(trial.functions[f].body, path)
            del nodes[i]
            yield trial
            node = _locate(agent.copy().functions[f].body, path)
            original = node[0][node[1]]
            for c in range(len(original.clauses)):
                trial = agent.copy()
                nodes, i = _locate(trial.functions[f].body, path)
                nodes[i : i + 1] = nodes[i].clauses[c][1]  # unwrap: keep one clause's body
                yield trial
            for c in range(1, len(original.clauses)):
                trial = agent.copy()
                nodes, i = _locate(trial.functions[f].body, path)
                del nodes[i].clauses[c]  # drop an else / except / finally clause
                yield trial


def reduce(agent: Agent, category: str, directory: Path, budget_s: float = 240.0) -> Agent:
    """Shrink ``agent`` while it still fails with ``category`` (greedy, one step at a time)."""
    counter = itertools.count()
    deadline = time.monotonic() + budget_s

    def fails(trial: Agent) -> bool:
        try:
            compile(trial.source(), "<reduced>", "exec")
        except SyntaxError:
            return False
        verdict = run_batch([trial], directory, tag=f"_r{next(counter)}", fresh=category.startswith("c:"))[0]
        return verdict.category == category

    best = agent
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for trial in candidates(best):
            if time.monotonic() > deadline:
                break
            if trial.source() != best.source() and fails(trial):
                best = trial
                progress = True
                break
    return best


def run_seeds(
    seeds: range,
    *,
    reduce_failures: bool = True,
    report: Callable[[str], None] = print,
    progress: bool = False,
) -> tuple[int, list[runner.Verdict]]:
    """Run every seed; returns (passed count, failing verdicts) and reports each failure reduced."""
    passed = 0
    failures: list[runner.Verdict] = []
    with tempfile.TemporaryDirectory(prefix="agentrt-fuzz-") as tmp:
        directory = Path(tmp)
        for start in range(seeds.start, seeds.stop, BATCH):
            batch = [generate(seed) for seed in range(start, min(start + BATCH, seeds.stop))]
            for verdict in run_batch(batch, directory):
                if verdict.category is None:
                    passed += 1
                    continue
                failures.append(verdict)
                agent = generate(verdict.seed)
                text = f"FAIL seed {verdict.seed} [{verdict.category}]\n{verdict.detail}\n"
                if reduce_failures:
                    small = reduce(agent, verdict.category, directory)
                    text += f"reduced agent (param p={small.param}):\n{small.source()}"
                report(text)
            if progress:
                done = min(start + BATCH, seeds.stop)
                print(
                    f"fuzz progress: seeds {seeds.start}..{done - 1}: {passed} passed, "
                    f"{len(failures)} failed",
                    flush=True,
                )
    return passed, failures


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--seeds", type=int, default=200, help="how many seeds (default 200)")
    parser.add_argument("--start", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--no-reduce", action="store_true", help="report failures unreduced")
    args = parser.parse_args(argv)
    seeds = range(args.start, args.start + args.seeds)
    began = time.monotonic()
    passed, failures = run_seeds(seeds, reduce_failures=not args.no_reduce, progress=True)
    elapsed = time.monotonic() - began
    version = ".".join(map(str, sys.version_info[:3]))
    print(
        f"fuzz: python {version}: {passed}/{len(seeds)} agents passed, "
        f"seeds {seeds.start}..{seeds.stop - 1}, "
        f"{len(failures)} failed, {elapsed:.0f} s"
    )
    return 1 if failures else 0
