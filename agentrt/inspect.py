"""Compatibility alias: ``agentrt.inspect`` is now :mod:`agentrt.inspection`.

The old name shadowed the standard library's :mod:`inspect` for anyone reading
or running code inside the package.  Everything importable from
``agentrt.inspect`` and its submodules (``agentrt.inspect._build``, ...) still
is, as the very same objects; import :mod:`agentrt.inspection` in new code.
The alias is silent, so code (and test suites run with ``-W error``) that still
uses the old name keeps working unchanged.
"""

from __future__ import annotations

import importlib
import sys

from agentrt import inspection as _inspection
from agentrt.inspection import *  # noqa: F403 -- the alias re-exports exactly agentrt.inspection's public names

__all__ = list(_inspection.__all__)

#: Old submodule name -> where it lives now.  Registered in ``sys.modules`` so
#: ``import agentrt.inspect._build`` finds the same module object, not a copy.
MOVED_SUBMODULES = {
    "_build": "agentrt.inspection._build",
    "_diff": "agentrt.inspection._diff",
    "_fork": "agentrt.inspection._fork",
    "_model": "agentrt.inspection._model",
    "_render": "agentrt.inspection._render",
    "_values": "agentrt.inspection._values",
    "_stack": "agentrt._frames._stack",  # bytecode stack roles: frame knowledge, so in _frames
    "_cli": "agentrt._cli.checkpoint_cmds",  # agentrt dump / diff / fork: with the other commands
}

for _old, _new in MOVED_SUBMODULES.items():
    sys.modules[f"{__name__}.{_old}"] = importlib.import_module(_new)
