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

from agentrt.inspection import Dump as Dump
from agentrt.inspection import ForkError as ForkError
from agentrt.inspection import ForkResult as ForkResult
from agentrt.inspection import FrameView as FrameView
from agentrt.inspection import Limits as Limits
from agentrt.inspection import Source as Source
from agentrt.inspection import diff_dumps as diff_dumps
from agentrt.inspection import diff_to_json as diff_to_json
from agentrt.inspection import dump_blob as dump_blob
from agentrt.inspection import dump_chain as dump_chain
from agentrt.inspection import fork_run as fork_run
from agentrt.inspection import render_diff as render_diff
from agentrt.inspection import render_text as render_text
from agentrt.inspection import to_json as to_json

__all__ = [
    "Dump",
    "ForkError",
    "ForkResult",
    "FrameView",
    "Limits",
    "Source",
    "diff_dumps",
    "diff_to_json",
    "dump_blob",
    "dump_chain",
    "fork_run",
    "render_diff",
    "render_text",
    "to_json",
]

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
