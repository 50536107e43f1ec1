"""The threads of sync tools: a pool that hands each call to the thread that went idle last.

``concurrent.futures.ThreadPoolExecutor`` lets every idle thread wait on one queue, and starts a
new thread whenever a call arrives before the last one has marked itself idle -- which, for a run
making one sync call after another, is nearly always: 400 calls in a row went to 7 threads, each
woken cold.  :class:`ToolThreads` keeps its idle threads on a stack: a call goes to the one that
finished last (its cache warm, often still running), a new thread starts only when no thread is
idle, and calls beyond ``max_workers`` wait in order.  A thread marks itself idle *before* it
publishes its result, so the next call of the same run finds it.

The threads are daemons: a process that exits without closing its runtime does not wait for a
sync tool still running (the run resumes elsewhere from its checkpoint, and the call is made again
with the same idempotency key, as after any crash).  ``shutdown`` stops them; with
``cancel_futures`` the calls not started yet are cancelled.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar  # Any: a tool's arguments and result are the user's values

__all__ = ["ToolThreads"]

T = TypeVar("T")

#: One call: its future, the function and its arguments.
_Call = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class _Worker:
    """One thread and the slot it is handed its next call in (``None``: stop)."""

    __slots__ = ("call", "wake")

    def __init__(self) -> None:
        self.call: _Call | None = None
        self.wake = threading.Lock()  # held while there is nothing to do; released to hand a call
        self.wake.acquire()

    def give(self, call: _Call | None) -> None:
        self.call = call
        self.wake.release()


class ToolThreads(Executor):
    """An executor of at most ``max_workers`` threads, the most recently idle one first."""

    def __init__(self, max_workers: int, thread_name_prefix: str = "agentrt-tool") -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be an int >= 1, got {max_workers!r}")
        self._max_workers = max_workers
        self._prefix = thread_name_prefix
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []  # a stack: the last to go idle is the first to work again
        self._pending: collections.deque[_Call] = collections.deque()
        self._threads: list[threading.Thread] = []
        self._shutdown = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        call: _Call = (future, fn, args, kwargs)
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
            if self._idle:
                self._idle.pop().give(call)
            elif len(self._threads) < self._max_workers:
                worker = _Worker()
                thread = threading.Thread(
                    target=self._work,
                    args=(worker, call),
                    name=f"{self._prefix}_{len(self._threads)}",
                    daemon=True,
                )
                self._threads.append(thread)
                thread.start()
            else:
                self._pending.append(call)
        return future

    def _work(self, worker: _Worker, call: _Call | None) -> None:
        while call is not None:
            future, fn, args, kwargs = call
            if not future.set_running_or_notify_cancel():
                call = self._next(worker)
                if call is None:
                    call = self._wait(worker)
                continue
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                call = self._next(worker)  # idle (or given the next call) before the caller wakes
                future.set_exception(exc)
                del exc
            else:
                call = self._next(worker)
                future.set_result(result)
                del result
            del future, fn, args, kwargs
            if call is None:
                call = self._wait(worker)

    def _next(self, worker: _Worker) -> _Call | None:
        """The next waiting call for ``worker``, or None after putting it on the idle stack."""
        with self._lock:
            if self._pending:
                return self._pending.popleft()
            if self._shutdown:
                return None
            self._idle.append(worker)
            worker.call = None
            return None

    def _wait(self, worker: _Worker) -> _Call | None:
        """Block until ``worker`` is handed a call (None: the pool shut down)."""
        with self._lock:
            stopping = self._shutdown and worker not in self._idle
        if stopping:
            return None
        worker.wake.acquire()
        return worker.call

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            if cancel_futures:
                while self._pending:
                    self._pending.popleft()[0].cancel()
            idle, self._idle = self._idle, []
            threads = list(self._threads)
        for worker in idle:
            worker.give(None)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()
