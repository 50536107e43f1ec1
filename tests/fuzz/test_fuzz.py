"""CI budget of the differential fuzzer: a fixed range of seeds on each interpreter.

Each generated agent runs uninterrupted, with ``Machine.set(m.get())`` at every suspension,
and restored from blobs in a fresh process; every run must match the uninterrupted one, and
no checkpoint may be refused.  ``make fuzz SEEDS=N`` runs more seeds and reduces failures.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.fuzz import fuzz, runner
from tests.fuzz.generator import generate

# Mode (b) already checkpoints and restores at every suspension, and (a) runs without the engine: the
# round-trip pass (--agentrt-roundtrip) would only repeat (b)'s round trips.
pytestmark = pytest.mark.agentrt_no_roundtrip

CI_SEEDS = range(0, int(os.environ.get("AGENTRT_FUZZ_SEEDS", "40")))


def test_the_generator_is_deterministic_and_compiles():
    for seed in range(50):
        source = generate(seed).source()
        assert source == generate(seed).source()
        compile(source, f"<seed {seed}>", "exec")


def test_refusal_categories_read_the_documented_codes():
    from agentrt.exceptions import InternalInconsistency, UnsupportedSuspension

    assert {"AR111", "AR112", "AR113", "AR199"} <= runner.documented_codes()
    assert runner.refusal_category(InternalInconsistency("x")) == "refused:AR199"
    assert runner.refusal_category(UnsupportedSuspension("no code")).startswith("refused-without-code")
    assert (
        runner.refusal_category(UnsupportedSuspension("AR987: made up")) == "refused-undocumented-code:AR987"
    )
    assert runner.refusal_category(ValueError("x")) == "error:ValueError"


@pytest.mark.slow
def test_a_planted_mismatch_is_caught_and_reduced(tmp_path, monkeypatch):
    """The fuzzer can fail: when a restore comes back waiting on a wrong payload, the agent is
    reported, and reduced to a smaller one that still shows it."""
    agents = (generate(seed) for seed in range(200))
    agent = next(a for a in agents if a.size() > 6 and fuzz.run_batch([a], tmp_path, fresh=False)[0].detail
                 .startswith(tuple(f"{n} suspensions" for n in range(3, 20))))  # fmt: skip
    real_set = runner.protocol.Machine.set

    def lossy_set(blob, **kw):
        m = real_set(blob, **kw)
        m._pending = ("echo", "lost")
        return m

    monkeypatch.setattr(runner.protocol.Machine, "set", staticmethod(lossy_set))
    verdict = fuzz.run_batch([agent], tmp_path, fresh=False)[0]
    assert verdict.category == "b:error:AssertionError", verdict
    assert "restored.pending" in verdict.detail
    small = fuzz.reduce(agent, verdict.category, tmp_path, budget_s=60)
    assert small.size() < agent.size()
    assert fuzz.run_batch([small], tmp_path, tag="_check", fresh=False)[0].category == verdict.category


@pytest.mark.slow
def test_fixed_seed_budget_passes(tmp_path):
    failures = []
    passed, failed = fuzz.run_seeds(CI_SEEDS, reduce_failures=False, report=failures.append)
    assert not failed, (
        f"{len(failed)} of {len(CI_SEEDS)} generated agents failed (reduce one with "
        f"`python -m tests.fuzz --start SEED --seeds 1`):\n" + "\n".join(failures)
    )
    assert passed == len(CI_SEEDS)
    assert all(re.match(r"FAIL seed \d+", f) for f in failures)
