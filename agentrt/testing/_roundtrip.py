"""Checkpoint and restore every Machine at every suspension (``Machine.roundtrip_hook``)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from agentrt.lowlevel import Machine

__all__ = ["RoundTripper", "RoundtripFailure", "roundtrip_every_suspension"]


class RoundtripFailure(AssertionError):
    """A suspended agent did not survive ``Machine.get()`` / ``Machine.set()``.

    The message says which step failed and why, followed by the frame dump of
    the live chain (as far as it can be read).
    """

    __module__ = "agentrt.testing"  # where users import it from (and how pytest names it)


class RoundTripper:
    """The ``Machine.roundtrip_hook``: ``get()`` the machine, prove the blob restores, hand it back.

    Counts the suspensions it carried over (``count``) and keeps the message of
    every failure (``failures``), so a test runner can fail a test even when the
    code under test caught the :class:`RoundtripFailure`.
    """

    def __init__(self) -> None:
        self.count = 0
        self.failures: list[str] = []
        self._reported: set[int] = set()  # failures a test runner has turned into a failed test
        self._lock = threading.Lock()

    def __call__(self, machine: Machine) -> bytes:
        stage = "Machine.get()"
        try:
            blob = machine.get()
            stage = "Machine.set()"
            # Restore once here, so a blob that does not load fails with the dump too; the
            # machine then restores it again for itself (Machine._roundtrip).
            Machine.set(blob).discard()
        except Exception as exc:
            message = failure_message(machine, stage, exc)
            with self._lock:
                self.failures.append(message)
            raise RoundtripFailure(message) from exc
        with self._lock:
            self.count += 1
        return blob

    def mark_reported(self, start: int) -> list[str]:
        """The failures since ``failures[start]``, now counted as reported by a failed test."""
        with self._lock:
            self._reported.update(range(start, len(self.failures)))
            return self.failures[start:]

    def unreported(self) -> list[str]:
        """Failures no test was failed for (they happened where the code caught them, outside a test)."""
        with self._lock:
            return [m for n, m in enumerate(self.failures) if n not in self._reported]


def failure_message(machine: Machine, stage: str, exc: BaseException) -> str:
    coro = machine._coro
    code = getattr(coro, "cr_code", None)
    agent = code.co_qualname if code is not None else type(coro).__name__
    head = (
        f"agentrt round-trip: {stage} failed for the agent {agent} while it waited on "
        f"{_short(machine.pending)}:\n  {type(exc).__name__}: {exc}"
    )
    return f"{head}\n\nframe dump of the live chain:\n{live_dump(machine)}"


def live_dump(machine: Machine) -> str:
    """The text frame dump of a live machine's chain (never raises)."""
    try:
        from agentrt.inspection import Source, dump_chain, render_text

        return render_text(dump_chain(machine._coro, Source("machine")))
    except Exception as exc:  # the dump is a courtesy: never hide the original failure
        return f"(the frame dump failed too: {type(exc).__name__}: {exc})\n"


def _short(value: object) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 120 else text[:117] + "..."


@contextlib.contextmanager
def roundtrip_every_suspension() -> Iterator[RoundTripper]:
    """Install a :class:`RoundTripper` as ``Machine.roundtrip_hook`` for the ``with`` block."""
    tripper = RoundTripper()
    previous = Machine.roundtrip_hook
    Machine.roundtrip_hook = tripper
    try:
        yield tripper
    finally:
        Machine.roundtrip_hook = previous
