"""The durable scheduler (re-exported by :mod:`agentrt`)."""

from agentrt._runtime.runtime import Runtime as Runtime
from agentrt._runtime.runtime import RuntimeEvent as RuntimeEvent
