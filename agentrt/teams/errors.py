"""The errors of :mod:`agentrt.teams`: defined in :mod:`agentrt.exceptions` with every other error,
re-exported here."""

from agentrt.exceptions import BusLockTimeout as BusLockTimeout
from agentrt.exceptions import ContractError as ContractError
from agentrt.exceptions import GateBlocked as GateBlocked

__all__ = ["BusLockTimeout", "ContractError", "GateBlocked"]
