"""What a reply led to: the run's status once a driver took the reply, for the answer to the replier.

``Runtime.reply`` returns when the answer is journaled; the run goes on in a driver (this process's,
or a worker's).  Until that driver's first step the stored row still says ``waiting`` on the
question just answered, which is what ``POST /runs/ID/reply`` and ``agentrt reply`` used to print
-- a status the run had already left.  :func:`status_after_reply` waits, briefly and bounded, until
the row has moved past that question (``running``, the next question, finished) and returns it.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentrt._runtime.runtime import Runtime
    from agentrt.stores.base import RunRecord

__all__ = ["moved_on", "status_after_reply"]

#: How often the row is read again while waiting (a store read is a millisecond or less).
_POLL_SECONDS = 0.02


def moved_on(rec: RunRecord, question_seq: int) -> bool:
    """Whether the run has left the question at checkpoint ``question_seq``."""
    return rec.status != "waiting" or rec.seq != question_seq


async def status_after_reply(
    rt: Runtime, run_id: str, question_seq: int | None, timeout_seconds: float
) -> tuple[RunRecord, bool]:
    """The run's record once it left the question at ``question_seq`` (None: the reply went to a
    sub-run; the run itself waits on that sub-run, so it is read at once), and whether it did
    within ``timeout_seconds`` (no: nobody has taken the reply yet, the record says ``waiting``)."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        rec = rt.status(run_id)
        if question_seq is None or moved_on(rec, question_seq):
            return rec, True
        if time.monotonic() >= deadline:
            return rec, False
        await asyncio.sleep(_POLL_SECONDS)
