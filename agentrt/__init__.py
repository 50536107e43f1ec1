"""agentrt: durable plain ``async def`` agents, checkpointed at the frame level.

This module is the friendly surface; :mod:`agentrt.lowlevel` is the sharp one.
"""

try:
    from agentrt._codec import serializable as serializable
except ImportError:  # TEMP while the codec lands
    def serializable(cls):  # type: ignore[no-redef]
        return cls
from agentrt.exceptions import AgentrtError as AgentrtError
from agentrt.exceptions import CannotCrossAwait as CannotCrossAwait
from agentrt.exceptions import CorruptBlob as CorruptBlob
from agentrt.exceptions import IncompatibleBlob as IncompatibleBlob
from agentrt.exceptions import UnsupportedSuspension as UnsupportedSuspension
from agentrt.lowlevel import Done as Done
from agentrt.lowlevel import Machine as Machine
from agentrt.lowlevel import suspend as suspend

__version__ = "0.1.0"

__all__ = [
    "AgentrtError",
    "CannotCrossAwait",
    "CorruptBlob",
    "Done",
    "IncompatibleBlob",
    "Machine",
    "UnsupportedSuspension",
    "serializable",
    "suspend",
]
