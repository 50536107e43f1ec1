"""The new code of a module *without importing it*, for ``agentrt check --against STORE``.

Each module a checkpoint names is located the way the import system would find it
(:func:`agentrt.validate._resolve.find_module_file`, which imports nothing) and its
source compiled -- never executed -- the way an import compiles it, so the code
objects (and their digests) are the ones an import would produce.  Every code
object in the module's constant tree is indexed by ``co_qualname``.  Modules
already imported (agentrt's own) are read from ``sys.modules`` instead.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

from agentrt._codec import CodeIdentity, code_digest
from agentrt._codec import codes_by_qualname as _index
from agentrt.validate import find_module_file

__all__ = ["StaticResolver"]


class StaticResolver:
    """Resolves code identities against source files compiled, not imported (cached per module)."""

    def __init__(self, search: list[str] | None = None) -> None:
        self._search = search if search is not None else [os.getcwd(), *sys.path]
        self._modules: dict[str, dict[str, list[types.CodeType]] | str] = {}

    def __call__(self, identity: CodeIdentity) -> tuple[types.CodeType | None, str]:
        index = self._module(identity.module)
        if isinstance(index, str):
            return None, index
        candidates = index.get(identity.qualname, [])
        for candidate in candidates:
            if code_digest(candidate) == identity.digest:
                return candidate, ""
        if not candidates:
            return None, f"{identity.module}:{identity.qualname} no longer exists (renamed, moved or deleted)"
        if len(candidates) > 1:
            return (
                None,
                f"{identity.module}:{identity.qualname} is defined {len(candidates)} times in the new code",
            )
        return candidates[0], ""

    def _module(self, name: str) -> dict[str, list[types.CodeType]] | str:
        cached = self._modules.get(name)
        if cached is None:
            cached = self._modules[name] = self._load(name)
        return cached

    def _load(self, name: str) -> dict[str, list[types.CodeType]] | str:
        loaded = sys.modules.get(name)
        if loaded is not None:
            return _index(loaded, refresh=True)
        path = find_module_file(name, self._search)
        if path is None or path.is_dir():
            return (
                f"module {name!r} is not found in the new code (searched the working directory and sys.path)"
            )
        try:
            source = Path(path).read_bytes()
            module_code = compile(source, str(path), "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError) as exc:
            return f"module {name!r} ({path}) does not compile: {exc}"
        index: dict[str, list[types.CodeType]] = {}
        pending = [module_code]
        while pending:
            code = pending.pop()
            for const in code.co_consts:
                if type(const) is types.CodeType:
                    index.setdefault(const.co_qualname, []).append(const)
                    pending.append(const)
        return index
