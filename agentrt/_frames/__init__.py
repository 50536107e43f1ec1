"""The unsafe core: the only package that reads frame internals or imports ``bytecode``.

This module is the package's front: what the rest of agentrt may use of it.  The engine (how the
core plugs into the codec, captures, restores and primes chains) is :mod:`._engine`; what a frame
record is, :mod:`._records`; bytecode analysis, :mod:`._liveness`; moving a frame to new code,
:mod:`._migrate`.  Importing the package loads the engine, as before (``install()`` registers it
with the codec).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrt._frames._capture import FINISHED as FINISHED
from agentrt._frames._capture import NOT_STARTED as NOT_STARTED
from agentrt._frames._capture import FrameState as FrameState
from agentrt._frames._capture import Kind as Kind
from agentrt._frames._capture import capture as capture
from agentrt._frames._engine import abandon as abandon
from agentrt._frames._engine import install as install
from agentrt._frames._engine import restored_pending as restored_pending
from agentrt._frames._liveness import Analysis as Analysis
from agentrt._frames._liveness import Site as Site
from agentrt._frames._liveness import SiteKind as SiteKind
from agentrt._frames._liveness import _instructions as real_instructions
from agentrt._frames._liveness import _successors as successors
from agentrt._frames._liveness import _uses_defs as uses_defs
from agentrt._frames._liveness import analyze as analyze
from agentrt._frames._records import RECORD_TYPES as RECORD_TYPES
from agentrt._frames._records import AnextRecord as AnextRecord
from agentrt._frames._records import FrameRecord as FrameRecord
from agentrt._frames._records import StepRecord as StepRecord
from agentrt._frames._records import record_owner as record_owner
from agentrt._frames._sites import SiteRef as SiteRef
from agentrt._frames._sites import normalized as normalized
from agentrt._frames._trap import is_stored_trap as is_stored_trap
from agentrt._frames._trap import is_trap as is_trap
from agentrt._frames._trap import register_trap as register_trap
from agentrt._frames._trap import trap_payload as trap_payload
from agentrt._lazy import lazy_exports

# Loaded on first use: moving frames (agentrt upgrade) is not needed to checkpoint or resume (the
# stack-slot analysis is loaded with the restore checks, ``_validate``).
if TYPE_CHECKING:
    from agentrt._frames._migrate import FrameMigration as FrameMigration
    from agentrt._frames._migrate import FrameRecord as ParsedFrameRecord
    from agentrt._frames._migrate import MigratingFrames as MigratingFrames
    from agentrt._frames._migrate import Move as Move
    from agentrt._frames._migrate import MovedFrame as MovedFrame
    from agentrt._frames._migrate import Verdict as Verdict
    from agentrt._frames._migrate import plan_move as plan_move
    from agentrt._frames._stack import InstrRef as InstrRef
    from agentrt._frames._stack import describe_slots as describe_slots

_LAZY = {
    "FrameMigration": "agentrt._frames._migrate",
    "ParsedFrameRecord": "agentrt._frames._migrate:FrameRecord",
    "MigratingFrames": "agentrt._frames._migrate",
    "Move": "agentrt._frames._migrate",
    "MovedFrame": "agentrt._frames._migrate",
    "Verdict": "agentrt._frames._migrate",
    "plan_move": "agentrt._frames._migrate",
    "InstrRef": "agentrt._frames._stack",
    "describe_slots": "agentrt._frames._stack",
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)

__all__ = [
    "FINISHED",
    "NOT_STARTED",
    "RECORD_TYPES",
    "Analysis",
    "AnextRecord",
    "FrameMigration",
    "FrameRecord",
    "FrameState",
    "InstrRef",
    "Kind",
    "MigratingFrames",
    "Move",
    "MovedFrame",
    "ParsedFrameRecord",
    "Site",
    "SiteKind",
    "SiteRef",
    "StepRecord",
    "Verdict",
    "abandon",
    "analyze",
    "capture",
    "describe_slots",
    "install",
    "is_stored_trap",
    "is_trap",
    "normalized",
    "plan_move",
    "real_instructions",
    "record_owner",
    "register_trap",
    "restored_pending",
    "successors",
    "trap_payload",
    "uses_defs",
]
