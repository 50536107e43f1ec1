"""The errors of :mod:`agentrt.teams`: defined in :mod:`agentrt.exceptions` with every other error,
re-exported here."""

from agentrt.exceptions import BusLockTimeout as BusLockTimeout
from agentrt.exceptions import ContractError as ContractError
from agentrt.exceptions import GateBlocked as GateBlocked
from agentrt.exceptions import TeamRunNotFound as TeamRunNotFound

__all__ = ["BusLockTimeout", "ContractError", "GateBlocked", "TeamRunNotFound"]
