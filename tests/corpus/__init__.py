"""The construct corpus of the checkpoint engine.

Importing this package imports every corpus module; each module registers its agents
with ``@case`` (see ``registry.py``).  ``CASES`` is the list of ``Case(name, fn, args,
kwargs)``; ``EXPECTED[name]`` is the outcome an uninterrupted run must produce.
"""

from tests.corpus import (  # noqa: F401  (imported for their registrations)
    calls,
    comps,
    contexts,
    exact,
    excs,
    exprs,
    gens,
    loops,
    other_module,
    protocol,
    state,
)
from tests.corpus.registry import CASES, EXPECTED, Case

MODULES = ("loops", "excs", "contexts", "exprs", "comps", "gens", "calls", "state", "exact")

__all__ = ["CASES", "EXPECTED", "MODULES", "Case"]
