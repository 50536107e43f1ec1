"""Errors of the checkpoint engine: an engine bug is never blamed on the agent or the blob.

:func:`inconsistency` builds :class:`~agentrt.exceptions.InternalInconsistency` (AR199) for a
place where the engine's own analysis and a frame, or the code it synthesized, disagree; it
names the agent's function and line and the engine function that noticed.
:func:`unsupported` builds :class:`~agentrt.exceptions.UnsupportedSuspension` with AR113 for a
suspension the engine knowingly does not capture.
"""

from __future__ import annotations

import sys
from types import CodeType

from agentrt.exceptions import InternalInconsistency, UnsupportedSuspension

#: A suspension shape the engine does not capture or resume (docs/hazards.md).
AR_UNSUPPORTED = "AR113"


def inconsistency(
    what: str, code: CodeType | None = None, lineno: int | None = None
) -> InternalInconsistency:
    caller = sys._getframe(1)
    engine_site = (
        f"{caller.f_code.co_qualname} ({caller.f_code.co_filename.rsplit('/', 1)[-1]}:{caller.f_lineno})"
    )
    return InternalInconsistency(
        what,
        function=code.co_qualname if code is not None else None,
        filename=code.co_filename if code is not None else None,
        lineno=lineno if lineno is not None else (code.co_firstlineno if code is not None else None),
        engine_site=engine_site,
    )


def unsupported(message: str) -> UnsupportedSuspension:
    return UnsupportedSuspension(f"{AR_UNSUPPORTED}: {message}")
