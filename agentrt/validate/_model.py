"""The validator's values: one :class:`Finding` per hazard, and the :class:`Profile` that grades them.

Both are frozen so a finding can be put in a set, compared in a test, and handed
to a report without anyone changing it on the way.  The profile is a policy
value (like Temporal's ``SandboxRestrictions``): ``Profile.default`` and
``Profile.portable`` are the two the CLI offers, ``with_disabled()`` makes a copy.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal  # Any: JSON documents

import attrs

__all__ = ["ERROR", "PORTABILITY", "Finding", "Profile", "Severity"]

Severity = Literal["error", "portability"]

#: agentrt cannot checkpoint it: the run will stop with ``CannotCrossAwait`` at this await.
ERROR: Severity = "error"
#: agentrt resumes it, but the s11n value model / compiled-agent runtime would not.
PORTABILITY: Severity = "portability"


@attrs.frozen(order=True)
class Finding:
    """One thing that cannot (or, for portability, should not) cross an ``await``.

    ``line``/``col`` locate where the value is bound or the construct is written
    (``col`` is 1-based, like a compiler's); ``await_line`` is the first suspension the
    value crosses, ``None`` for findings about a construct rather than a live value.
    Ordering is by location, so sorted findings read top to bottom.
    """

    path: str
    line: int
    col: int
    code: str
    severity: Severity
    await_line: int | None
    function: str
    variable: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        """The finding as ``agentrt check --json`` prints it (keys as in docs/hazards.md)."""
        return {
            "code": self.code,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "await_line": self.await_line,
            "function": self.function,
            "variable": self.variable,
            "message": self.message,
        }


@attrs.frozen
class Profile:
    """How findings are graded: which count as errors for the exit status.

    ``default``: only error-severity findings fail the check (agentrt cannot resume
    them), and portability findings of the codes in ``signed_carries`` are not shown: a
    signed blob (the default) carries them (AR105, instances of importable classes, through
    the pickle protocol; AR112 portability, clients ``agentrt.reopenable`` re-creates).
    ``portable``: every portability finding is shown and fails too,
    for agents whose blobs must stay unsigned or run on the compiled-agent / s11n model.
    ``disabled`` codes are dropped altogether.
    """

    name: str
    portability_is_error: bool = False
    disabled: frozenset[str] = frozenset()
    signed_carries: frozenset[str] = frozenset()

    default: ClassVar[Profile]
    portable: ClassVar[Profile]

    @classmethod
    def named(cls, name: str) -> Profile:
        """The profile called ``name`` (``default`` or ``portable``); ``ValueError`` otherwise."""
        for profile in (cls.default, cls.portable):
            if profile.name == name:
                return profile
        raise ValueError(f"unknown profile {name!r} (choose default or portable)")

    def with_disabled(self, *codes: str) -> Profile:
        """A copy that drops findings with these codes."""
        return attrs.evolve(self, disabled=self.disabled | frozenset(codes))

    def keeps(self, finding: Finding) -> bool:
        if finding.severity == PORTABILITY and finding.code in self.signed_carries:
            return False
        return finding.code not in self.disabled

    def counts_as_error(self, finding: Finding) -> bool:
        """Whether ``finding`` makes the check fail (exit status 1) under this profile."""
        if not self.keeps(finding):
            return False
        return finding.severity == ERROR or self.portability_is_error


Profile.default = Profile("default", signed_carries=frozenset({"AR105", "AR112"}))
Profile.portable = Profile("portable", portability_is_error=True)
