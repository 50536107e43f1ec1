"""Registration of ported agents: ``@port(*args, example=..., answer=..., **kwargs)``.

``example`` names the public example the module ports (framework, example); ``answer`` is what the
first element of the agent's result must be after an uninterrupted run (its final answer), so a
port that stopped working as its example does fails in mode (a) before any checkpoint is taken.
The decorator returns the function unchanged: the engine finds it by ``module:qualname``.
Stack several ``@port`` with ``name=`` for several argument sets of one agent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Port(NamedTuple):
    """A ``tests.corpus.registry.Case`` (name, fn, args, kwargs) plus what it ports and answers."""

    name: str
    fn: Callable[..., Any]
    args: tuple
    kwargs: dict
    example: str
    answer: Any


PORTS: list[Port] = []


def port(*args: Any, example: str, answer: Any, name: str | None = None, **kwargs: Any):
    def register(fn):
        port_name = name or fn.__module__.rpartition(".")[2]
        if any(p.name == port_name for p in PORTS):
            raise ValueError(f"duplicate port name {port_name!r}")
        PORTS.append(Port(port_name, fn, args, kwargs, example, answer))
        return fn

    return register
