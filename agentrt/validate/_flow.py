"""Bytecode side of the check: which suspensions a binding's value is live across.

Liveness comes from the checkpoint engine (:func:`agentrt._frames._liveness.analyze`):
``Site.live_locals`` is exactly what a checkpoint at that suspension stores, so a
local the validator reports is one the runtime would have to encode, and a local it
leaves alone is one the runtime leaves out.  What liveness alone cannot say is
*which binding* of a local reaches a site (``m = re.match(...); use(m); m = m.group()``
must not blame the Match for the later ``await``), so this module adds the forward
half: from the ``STORE_FAST`` of one binding, follow the control-flow graph (the same
edges the liveness analysis uses, exception edges included) until another store or
``del`` of that local, and collect the suspension sites reached where it is live.

Cell and free variables are not tracked by liveness; a closure may read them at any
time, so for them every reached site counts.
"""

from __future__ import annotations

import dis
from collections import deque
from collections.abc import Iterable
from functools import cached_property
from types import CodeType

import attrs

from agentrt._frames import Analysis, Site, analyze
from agentrt._frames import real_instructions as _instructions
from agentrt._frames import successors as _successors
from agentrt._frames import uses_defs as _uses_defs

__all__ = ["CodeFlow", "Crossing"]

_CELL_STORES = frozenset({"STORE_DEREF", "DELETE_DEREF"})
_LOCAL_KILLS = frozenset({"DELETE_FAST"})


@attrs.frozen
class Crossing:
    """A value crossing suspension sites: the first one reached, and how many in all."""

    first: Site
    count: int


class CodeFlow:
    """The control-flow graph of one code object, with its suspension sites."""

    def __init__(self, code: CodeType) -> None:
        self.code = code
        self.analysis: Analysis = analyze(code, persist=False)  # compiled, not imported: leave no files
        self.instructions, self.by_offset = _instructions(code)
        entries = dis.Bytecode(code).exception_entries  # type: ignore[attr-defined]  # not in typeshed
        self._handlers: list[tuple[int, int, int]] = [(e.start, e.end, e.target) for e in entries]

    @cached_property
    def successors(self) -> list[list[int]]:
        """Instruction indices after each instruction, including its exception handler."""
        result = []
        for n, instr in enumerate(self.instructions):
            targets = _successors(self.instructions, n)
            handler = self._handler_of(instr.offset)
            if handler is not None:
                targets.append(handler)
            result.append([self.by_offset[t] for t in targets if t in self.by_offset])
        return result

    def _handler_of(self, offset: int) -> int | None:
        for start, end, target in self._handlers:
            if start <= offset < end:
                return target
        return None

    @cached_property
    def cells(self) -> frozenset[str]:
        return frozenset(self.code.co_cellvars) | frozenset(self.code.co_freevars)

    def _defined_names(self, index: int) -> tuple[str, ...]:
        instr = self.instructions[index]
        if instr.opname in _CELL_STORES:
            return (str(instr.argval),)
        if instr.opname in _LOCAL_KILLS:
            return (str(instr.argval),)
        _, defs = _uses_defs(instr)
        names = self.code.co_varnames
        return tuple(names[i] for i in defs if i < len(names))

    @cached_property
    def stores(self) -> dict[str, list[tuple[int, int | None, int | None]]]:
        """For each local or cell: ``(instruction index, line, column)`` of each store or del."""
        result: dict[str, list[tuple[int, int | None, int | None]]] = {}
        for n, instr in enumerate(self.instructions):
            positions = instr.positions
            line = positions.lineno if positions else None
            col = positions.col_offset if positions else None
            for name in self._defined_names(n):
                result.setdefault(name, []).append((n, line, col))
        return result

    def stores_at(self, name: str, line: int, col: int, *, exact_only: bool) -> list[int]:
        """Indices of the stores of ``name`` CPython attributes to ``line`` (and ``col``)."""
        candidates = [(n, c) for n, li, c in self.stores.get(name, []) if li == line]
        exact = [n for n, c in candidates if c == col]
        if exact or exact_only:
            return exact
        return [n for n, _ in candidates]

    def crossing(self, name: str, starts: Iterable[int] | None) -> Crossing | None:
        """Sites reached, with ``name`` live, from the given store instructions.

        ``starts=None`` means the function's entry (a parameter, or a free variable
        bound by the enclosing function before this frame ever ran).
        """
        is_cell = name in self.cells
        index = self.code.co_varnames.index(name) if name in self.code.co_varnames else None
        sites = self.analysis.sites
        seen: set[int] = set()
        queue: deque[int] = deque()
        if starts is None:
            queue.append(0)
            seen.add(0)
            entry = True
        else:
            for start in starts:
                for successor in self.successors[start]:
                    if successor not in seen:
                        seen.add(successor)
                        queue.append(successor)
            entry = False
        reached: list[Site] = []
        while queue:
            n = queue.popleft()
            instr = self.instructions[n]
            if name in self._defined_names(n) and not (entry and n == 0):
                continue  # rebound or deleted: this binding's value ends here
            site = sites.get(instr.offset)
            if site is not None and (is_cell or (index is not None and index in site.live_locals)):
                reached.append(site)
            for successor in self.successors[n]:
                if successor not in seen:
                    seen.add(successor)
                    queue.append(successor)
        if not reached:
            return None
        return Crossing(reached[0], len(reached))

    def first_site(self) -> Site | None:
        """The suspension site with the lowest offset (for values live in the whole frame)."""
        if not self.analysis.sites:
            return None
        return self.analysis.sites[min(self.analysis.sites)]
