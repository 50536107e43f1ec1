"""Registration of corpus agents.

``@case(*args, expect=V, **kwargs)`` (or ``raises=(type_qualname, args)``) registers the
decorated agent with the given call arguments and the outcome an uninterrupted run must
produce.  The decorator returns the function unchanged, so the agent's code identity and
``module:qualname`` are untouched.  Stack several ``@case`` with ``name=`` for several
argument sets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Case(NamedTuple):
    name: str
    fn: Callable[..., Any]
    args: tuple
    kwargs: dict


CASES: list[Case] = []
# name -> ("return", value) | ("raise", (type qualname, args))
EXPECTED: dict[str, tuple[str, Any]] = {}
# name -> hazard code: agentrt knowingly refuses to checkpoint this agent at some
# suspension; modes (b)/(c) then require a CannotCrossAwait carrying that code.
REFUSED: dict[str, str] = {}

_MISSING = object()


def case(
    *args: Any,
    expect: Any = _MISSING,
    raises: tuple[str, tuple] | None = None,
    name: str | None = None,
    refused: str | None = None,
    **kwargs: Any,
):
    if (expect is _MISSING) == (raises is None):
        raise TypeError("give exactly one of expect= or raises=")

    def register(fn):
        case_name = name or fn.__name__
        if case_name in EXPECTED:
            raise ValueError(f"duplicate corpus case name {case_name!r}")
        CASES.append(Case(case_name, fn, args, kwargs))
        EXPECTED[case_name] = ("raise", raises) if raises is not None else ("return", expect)
        if refused is not None:
            REFUSED[case_name] = refused
        return fn

    return register
