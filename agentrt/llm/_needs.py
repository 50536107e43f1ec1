"""Which model requests an agent makes, read from its bytecode -- so a runtime can refuse, before any run
starts, an agent that needs an executor it lacks.

It follows ``task.llm.<kind>`` attribute chains in the agent's ``run``, the
functions and lambdas nested in it, the module-level functions it calls (in its
own and other user modules, also through ``module.function``), and its
sub-agents.  A request reached through an indirection it cannot see (a function
passed in a variable) is still caught at the ``await``, with the same error.
"""

from __future__ import annotations

import dis
import functools
import os
import sysconfig
import types
import weakref
from collections.abc import Iterator
from typing import Any  # Any: scans any function or object an agent references

import attrs

from agentrt._sdk.agent import Agent
from agentrt.llm._contract import KINDS

__all__ = ["Need", "needs_of"]

_AGENTRT_DIR = os.path.normcase(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

#: agent -> its request sites; an agent's code does not change under it, and hosts start many runs.
_NEEDS: weakref.WeakKeyDictionary[Any, tuple[Need, ...]] = weakref.WeakKeyDictionary()


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    """The standard library's and site-packages' directories (on first use: not at import)."""
    paths = sysconfig.get_paths()
    keys = ("stdlib", "platstdlib", "purelib", "platlib")
    return tuple({os.path.normcase(os.path.realpath(paths[k])) for k in keys})


@attrs.frozen
class Need:
    """One ``task.llm.<kind>`` request site: which agent, where."""

    agent: str
    kind: str
    function: str
    filename: str
    lineno: int

    @property
    def where(self) -> str:
        return f"{self.function} ({os.path.basename(self.filename)}:{self.lineno})"


def _is_user_code(code: types.CodeType) -> bool:
    path = os.path.normcase(os.path.realpath(code.co_filename))
    if path.startswith(_AGENTRT_DIR + os.sep):
        return False
    return not any(path.startswith(d + os.sep) for d in _library_dirs())


def _calls(code: types.CodeType) -> Iterator[tuple[str, Any, int]]:
    """``("need", kind, lineno)`` for each ``.llm.<kind>`` chain; ``("global", name, lineno)`` /
    ``("attr", (global, attr), lineno)`` for what the code may call."""
    previous: dis.Instruction | None = None
    lineno = code.co_firstlineno
    for ins in dis.get_instructions(code):
        if ins.positions is not None and ins.positions.lineno is not None:
            lineno = ins.positions.lineno
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            chained = previous is not None and previous.opname in ("LOAD_ATTR", "LOAD_METHOD")
            if chained and previous.argval == "llm" and ins.argval in KINDS:  # type: ignore[union-attr]  # chained implies previous
                yield "need", ins.argval, lineno
            if previous is not None and previous.opname == "LOAD_GLOBAL":
                yield "attr", (previous.argval, ins.argval), lineno
        elif ins.opname == "LOAD_GLOBAL":
            yield "global", ins.argval, lineno
        if ins.opname not in ("CACHE", "EXTENDED_ARG", "PRECALL"):
            previous = ins


def _function_code(value: Any) -> types.CodeType | None:
    value = getattr(value, "__func__", value)
    value = getattr(value, "__wrapped__", value)
    code = getattr(value, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def needs_of(agent: Any) -> list[Need]:
    """The model requests ``agent`` (an ``agentrt.agent(...)`` value) and its sub-agents make, in order
    (scanned once per agent)."""
    found = _NEEDS.get(agent)
    if found is None:
        found = _NEEDS[agent] = tuple(_scan(agent, set()))
    return list(found)


def _scan(agent: Any, seen: set[int]) -> list[Need]:
    if id(agent) in seen:
        return []
    seen.add(id(agent))
    found: list[Need] = []
    run = agent.run
    pending: list[tuple[types.CodeType, dict[str, Any]]] = []
    code = root = _function_code(run)
    # ``(what, file, line)`` of an ``llm_agent(...)`` definition: its requests are made by agentrt's
    # loop, so errors name the definition rather than agentrt's file.
    site = getattr(run, "__agentrt_site__", None)
    if code is not None:
        pending.append((code, getattr(run, "__globals__", {})))
    visited: set[int] = set()
    while pending:
        code, globals_ = pending.pop()
        if id(code) in visited:
            continue
        visited.add(id(code))
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                pending.append((const, globals_))
        for what, arg, lineno in _calls(code):
            if what == "need":
                if site is not None and code is root:  # an agent kind built by agentrt: where it was defined
                    found.append(Need(agent.name, arg, site[0], site[1], site[2]))
                else:
                    found.append(Need(agent.name, arg, code.co_qualname, code.co_filename, lineno))
                continue
            if what == "global":
                target = globals_.get(arg)
            else:
                holder = globals_.get(arg[0])
                target = getattr(holder, arg[1], None) if isinstance(holder, types.ModuleType) else None
            declared = getattr(target, "__agentrt_needs__", None)
            if isinstance(declared, tuple):  # an agentrt helper that makes model requests itself
                for kind in declared:
                    found.append(Need(agent.name, kind, code.co_qualname, code.co_filename, lineno))
                continue
            callee = _function_code(target)
            if callee is not None and _is_user_code(callee):
                pending.append(
                    (callee, getattr(getattr(target, "__func__", target), "__globals__", globals_))
                )
    for sub in agent.tools.values():
        if isinstance(sub, Agent):
            found.extend(_scan(sub, seen))
    return found


def missing(agent: Any, kinds: tuple[str, ...]) -> list[Need]:
    """The request sites of ``agent`` whose kind is not among ``kinds`` (the executors a runtime has)."""
    return [need for need in needs_of(agent) if need.kind not in kinds]
