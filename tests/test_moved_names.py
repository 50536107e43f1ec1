"""Every name a module re-exports as its front is the very same object, the removed aliases are
gone, and every error agentrt raises is defined in ``agentrt.exceptions``."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import agentrt
import agentrt.exceptions

# old module -> names that now live elsewhere (docs/architecture.md, "Renamed modules")
OLD_HOMES = {
    "agentrt.stores.base": ["LeaseLost", "StoreCorrupt", "StoreError", "StoreLocked", "StoreSchemaTooNew"],
    "agentrt.stores": ["LeaseLost", "StoreCorrupt", "StoreError", "StoreLocked", "StoreSchemaTooNew"],
    "agentrt.llm.loop": ["ToolLoopExhausted"],
    "agentrt.llm.agent": ["MaxTurnsExceeded"],
    "agentrt._sdk.stateful": ["StateError"],
    "agentrt.llm": ["ToolLoopExhausted", "MissingExecutor", "ModelCallBudgetExceeded"],
    "agentrt.inspection._fork": ["ForkError"],
}


@pytest.mark.parametrize(("module", "name"), [(m, n) for m, names in OLD_HOMES.items() for n in names])
def test_errors_stay_importable_where_they_were(module, name):
    assert getattr(importlib.import_module(module), name) is getattr(agentrt.exceptions, name)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("agentrt.llm._contract", "agentrt._sdk.llm"),
        ("agentrt.llm", "agentrt._sdk.llm"),
    ],
)
def test_model_request_types_stay_importable_where_they_were(old, new):
    names = {
        "agentrt.llm._contract": ["Usage", "ModelToolCall"],
        "agentrt.llm": ["LLM", "ModelCall", "TextResult", "Usage", "ModelToolCall"],
    }[old]
    for name in names:
        assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module(new), name)


@pytest.mark.parametrize(
    "gone",
    [
        "agentrt.inspect",
        "agentrt._sdk.errors",
        "agentrt.llm.errors",
        "agentrt.llm.requests",
        "agentrt.teams.errors",
    ],
)
def test_the_removed_aliases_are_gone(gone):
    """The package is unreleased: a moved module gets no alias (docs/architecture.md, "Renamed modules")."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(gone)


def _all_modules():
    for info in pkgutil.walk_packages(agentrt.__path__, "agentrt."):
        if info.name == "agentrt.__main__":
            continue  # runs the command line
        if info.name in ("agentrt.otel", "agentrt.llm.openai_compat"):
            continue  # optional dependencies (otel, openai extras)
        importlib.import_module(info.name)


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_every_agentrt_error_is_defined_in_agentrt_exceptions():
    _all_modules()
    outside = sorted(
        f"{c.__module__}.{c.__qualname__}"
        for c in set(_subclasses(agentrt.exceptions.AgentrtError))
        if c.__module__.startswith("agentrt.") and c.__module__ != "agentrt.exceptions"
    )
    assert outside == []
