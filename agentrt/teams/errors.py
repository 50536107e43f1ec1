"""The errors of :mod:`agentrt.teams` (one module, as the rest of agentrt keeps them)."""

from __future__ import annotations

from agentrt.exceptions import AgentrtError

__all__ = ["BusLockTimeout", "ContractError", "GateBlocked"]


class ContractError(AgentrtError, ValueError):
    """A value broke a rule of one of the reference's wire contracts.

    ``key`` names the offending key (or ``None`` for the whole value) and ``rule`` the rule it
    broke, in the words of the reference's tables; ``where`` says which contract or file.
    """

    def __init__(self, where: str, key: str | None, rule: str) -> None:
        self.where = where
        self.key = key
        self.rule = rule
        at = f"{where}: key {key!r}" if key is not None else where
        super().__init__(f"{at}: {rule}")


class GateBlocked(ContractError):
    """The team decision gate refused to open (missing, stale or restructuring decision, or a
    stale or tampered decision trail)."""


class BusLockTimeout(AgentrtError, TimeoutError):
    """``Bus.publish`` could not take ``bus/.lock`` in time; nothing was published (fails closed)."""

    def __init__(self, lock_path: str, timeout_seconds: float) -> None:
        self.lock_path = lock_path
        self.timeout_seconds = timeout_seconds
        super().__init__(
            f"artifact bus: could not lock {lock_path} within {timeout_seconds:g}s, so nothing was "
            "published (the bus fails closed); another publisher holds it: retry, or raise "
            "Bus(run_dir, lock_timeout=...)"
        )
