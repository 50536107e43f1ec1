"""The step budget (AR110): stop an agent that computes too long between two awaits.

Zero cost on the normal path: arming and disarming around a step is two
attribute writes and one uncontended lock.  One monitor thread per runtime wakes
a few times per budget period; when the armed step has run longer than the
budget it raises :class:`BudgetInterrupt` inside the stepping thread with
``PyThreadState_SetAsyncExc``.  ``BudgetInterrupt`` derives from
``BaseException`` so an agent's ``except Exception`` does not swallow it; the
runtime turns it into :class:`~agentrt.StepBudgetExceeded` naming the agent's
function and line.  An async exception is only delivered between bytecodes: a
step blocked inside one long C call is interrupted when that call returns.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import traceback
from types import TracebackType
from typing import Any  # Any: ctypes function pointers are untyped

__all__ = ["BudgetInterrupt", "Watchdog", "innermost_agent_frame"]


# Two separate function objects (``pythonapi[...]`` makes a new one each time): one takes the
# exception class, the other a NULL pointer, which clears a pending asynchronous exception.
# Made on first use, not at import (``import agentrt`` stays cheap; most processes never interrupt).
@functools.cache
def _async_exc_functions() -> tuple[Any, Any]:
    import ctypes

    set_exc = ctypes.pythonapi["PyThreadState_SetAsyncExc"]
    set_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)
    set_exc.restype = ctypes.c_int
    clear = ctypes.pythonapi["PyThreadState_SetAsyncExc"]
    clear.argtypes = (ctypes.c_ulong, ctypes.c_void_p)
    clear.restype = ctypes.c_int
    return set_exc, clear


_AGENTRT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class BudgetInterrupt(BaseException):
    """Raised asynchronously inside an agent step that exceeded its budget (internal)."""


def _clear_async_exc(thread_id: int) -> None:
    _async_exc_functions()[1](thread_id, None)


class Watchdog:
    """Monitors the step running in one thread (the runtime's event loop thread)."""

    def __init__(self, budget_seconds: float) -> None:
        if budget_seconds <= 0:
            raise ValueError(f"step budget must be > 0 seconds, got {budget_seconds!r}")
        self.budget_seconds = float(budget_seconds)
        self._lock = threading.Lock()
        self._started: float | None = None  # monotonic start of the armed step
        self._thread_id = 0
        self._fired_at: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._poll_seconds = min(self.budget_seconds / 4, 0.25)

    def _ensure_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._monitor, name="agentrt-step-budget", daemon=True)
            self._thread.start()

    def arm(self) -> None:
        if self._thread is None:
            self._ensure_thread()
        self._thread_id = threading.get_ident()
        self._fired_at = None
        self._started = time.monotonic()

    def disarm(self) -> None:
        with self._lock:
            self._started = None
            if self._fired_at is not None:
                # The interrupt may still be pending if the step returned just as it was sent.
                _clear_async_exc(self._thread_id)
                self._fired_at = None

    def _monitor(self) -> None:
        while not self._stop.wait(self._poll_seconds):
            started = self._started
            if started is None:
                continue
            now = time.monotonic()
            if now - started <= self.budget_seconds:
                continue
            with self._lock:
                if self._started != started:
                    continue
                if self._fired_at is not None and now - self._fired_at < self.budget_seconds:
                    continue
                self._fired_at = now
                _async_exc_functions()[0](self._thread_id, BudgetInterrupt)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=1)
        self._thread = None


def innermost_agent_frame(tb: TracebackType | None) -> tuple[str | None, str | None, int | None]:
    """``(function qualname, filename, lineno)`` of the innermost frame outside agentrt itself."""
    found: tuple[str | None, str | None, int | None] = (None, None, None)
    for frame, lineno in traceback.walk_tb(tb):
        filename = frame.f_code.co_filename
        if os.path.abspath(filename).startswith(_AGENTRT_DIR):
            continue
        name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
        found = (name, filename, lineno)
    return found
