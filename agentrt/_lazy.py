"""Lazy re-exports for package ``__init__`` modules (PEP 562), so ``import agentrt`` does no work.

A package lists ``{name: defining module}`` (or ``"module:attribute"`` to export an attribute under
another name) and gets a module ``__getattr__`` that imports the
defining module on first access of the name and caches the value in the package's namespace
(later accesses are plain attribute reads).  ``__dir__`` lists the exports too.  The names are
also imported under ``typing.TYPE_CHECKING`` in each package, for type checkers and editors.

Why: the runtime, the frame machinery (``bytecode``), the codec and the model layer cost
a few hundred milliseconds of imports that a CLI command such as ``agentrt runs`` or a script that
only needs ``agentrt.tool`` should not pay (issue 16, cold start).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any  # Any: a lazy export is whatever object the module holds


def lazy_exports(
    package: str, namespace: dict[str, Any], exports: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` whose names live in ``exports``' modules."""

    def __getattr__(name: str) -> Any:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = where.partition(":")  # "module:attr" exports attr under another name
        value = getattr(importlib.import_module(module), attribute or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
