"""Every public name that moved is still importable where it was, as the very same object,
and every error agentrt raises is defined in ``agentrt.exceptions``."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import agentrt
import agentrt.exceptions

# old module -> names that now live elsewhere (docs/architecture.md, "Renamed modules")
OLD_HOMES = {
    "agentrt._sdk.errors": [
        "AgentSpecError",
        "LeaseHeld",
        "NotWaiting",
        "RunExists",
        "RunFailed",
        "RunNotFound",
        "SchemaError",
        "StepBudgetExceeded",
        "ToolError",
    ],
    "agentrt.llm.errors": [
        "DecisionExhausted",
        "MissingExecutor",
        "ModelAnswerError",
        "ModelCallBudgetExceeded",
        "ModelContentFiltered",
        "ModelOutputTruncated",
        "ModelProviderError",
        "ModelRefused",
        "ScriptExhausted",
        "StructuredOutputError",
        "TokenBudgetExceeded",
    ],
    "agentrt.stores.base": ["LeaseLost", "StoreCorrupt", "StoreError", "StoreLocked", "StoreSchemaTooNew"],
    "agentrt.stores": ["LeaseLost", "StoreCorrupt", "StoreError", "StoreLocked", "StoreSchemaTooNew"],
    "agentrt.llm.loop": ["ToolLoopExhausted"],
    "agentrt.llm.agent": ["MaxTurnsExceeded"],
    "agentrt._sdk.stateful": ["StateError"],
    "agentrt.llm": ["ToolLoopExhausted", "MissingExecutor", "ModelCallBudgetExceeded"],
    "agentrt.inspect": ["ForkError"],
    "agentrt.inspect._fork": ["ForkError"],
    "agentrt.teams.errors": ["BusLockTimeout", "ContractError", "GateBlocked"],
}


@pytest.mark.parametrize(("module", "name"), [(m, n) for m, names in OLD_HOMES.items() for n in names])
def test_errors_stay_importable_where_they_were(module, name):
    assert getattr(importlib.import_module(module), name) is getattr(agentrt.exceptions, name)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("agentrt.llm.requests", "agentrt._sdk.llm"),
        ("agentrt.llm._contract", "agentrt._sdk.llm"),
        ("agentrt.llm", "agentrt._sdk.llm"),
    ],
)
def test_model_request_types_stay_importable_where_they_were(old, new):
    names = {
        "agentrt.llm.requests": ["LLM", "ModelCall", "TextResult", "event_type_name", "DEFAULT_MAX_ATTEMPTS"],
        "agentrt.llm._contract": ["Usage", "ModelToolCall"],
        "agentrt.llm": ["LLM", "ModelCall", "TextResult", "Usage", "ModelToolCall"],
    }[old]
    for name in names:
        assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module(new), name)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("agentrt.inspect", "agentrt.inspection"),
        ("agentrt.inspect._build", "agentrt.inspection._build"),
        ("agentrt.inspect._diff", "agentrt.inspection._diff"),
        ("agentrt.inspect._values", "agentrt.inspection._values"),
        ("agentrt.inspect._stack", "agentrt._frames._stack"),
        ("agentrt.inspect._cli", "agentrt._cli.checkpoint_cmds"),
    ],
)
def test_the_inspect_alias_gives_the_same_modules_not_copies(old, new):
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    if old == "agentrt.inspect":
        assert all(getattr(old_module, n) is getattr(new_module, n) for n in new_module.__all__)
    else:
        assert old_module is new_module


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
