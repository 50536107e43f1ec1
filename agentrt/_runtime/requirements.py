"""Code requirements in a mixed fleet: which checkpoints this process can restore.

Each run row says what code its newest checkpoint needs (``code_required``, see
:mod:`agentrt._codec._requirement`).  A runtime judges each distinct text once, with the modules
imported now, and remembers the verdict: a worker passes those it lacks to every claim, and its
registry row (:mod:`agentrt._runtime.registry`) shows what it carries and lacks.
"""

from __future__ import annotations

from agentrt._codec import lacking_code

__all__ = ["MAX_JUDGED", "CodeJudge"]

#: How many distinct code requirements a runtime remembers its verdict on.
MAX_JUDGED = 4096


class CodeJudge:
    """The verdicts of one process on the code requirements it met."""

    def __init__(self) -> None:
        self._carried: dict[str, None] = {}  # ordered: the registry row keeps the newest
        self._lacking: dict[str, str] = {}
        #: Bumped whenever a requirement is judged (the worker registry writes its row again).
        self.version = 0

    def lacking_reason(self, code_required: str | None) -> str:
        """Why this process cannot restore a checkpoint that needs ``code_required``, or "" when it can
        or nothing is recorded.  Judged once per distinct text, with the modules imported now."""
        if not code_required or code_required in self._carried:
            return ""
        reason = self._lacking.get(code_required)
        if reason is None:
            reason = lacking_code(code_required)
            if reason:
                self.note_lacking(code_required, reason)
            else:
                if len(self._carried) >= MAX_JUDGED:
                    self._carried.clear()
                self._carried[code_required] = None
                self.version += 1
        return reason

    def note_lacking(self, code_required: str, reason: str) -> None:
        if len(self._lacking) >= MAX_JUDGED:  # judged again, at the cost of one claim and release each
            self._lacking.clear()
        self._lacking[code_required] = reason
        self.version += 1

    @property
    def lacking(self) -> list[str]:
        """The code requirements this process found it cannot meet."""
        return list(self._lacking)

    def judged(self) -> tuple[list[str], list[tuple[str, str]]]:
        """The code requirements judged here, oldest first: carried, and lacking with why."""
        return list(self._carried), list(self._lacking.items())
