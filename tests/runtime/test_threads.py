"""The sync tools' thread pool (``agentrt._runtime.threads.ToolThreads``): calls in a row stay on
one warm thread, the pool never exceeds its size, errors and cancellation behave as in
``concurrent.futures``, and shutdown stops every thread."""

from __future__ import annotations

import threading
import time

import pytest

from agentrt._runtime.threads import ToolThreads


def test_calls_one_after_another_stay_on_one_thread():
    pool = ToolThreads(8)
    try:
        idents = {pool.submit(threading.get_ident).result(timeout=5) for _ in range(200)}
    finally:
        pool.shutdown()
    assert len(idents) == 1  # ThreadPoolExecutor spreads such a sequence over several cold threads


def test_at_most_max_workers_run_at_once_and_the_rest_wait_in_order():
    pool = ToolThreads(3)
    gate = threading.Event()
    running: list[int] = []
    peak = [0]
    lock = threading.Lock()

    def job(i: int) -> int:
        with lock:
            running.append(i)
            peak[0] = max(peak[0], len(running))
        gate.wait(5)
        with lock:
            running.remove(i)
        return i * 2

    futures = [pool.submit(job, i) for i in range(10)]
    time.sleep(0.1)
    assert peak[0] == 3 and not any(f.done() for f in futures)
    gate.set()
    assert [f.result(timeout=5) for f in futures] == [i * 2 for i in range(10)]
    assert peak[0] == 3
    pool.shutdown()


def test_errors_reach_the_future_and_the_thread_goes_on():
    pool = ToolThreads(1)

    def boom() -> None:
        raise KeyError("nope")

    with pytest.raises(KeyError, match="nope"):
        pool.submit(boom).result(timeout=5)
    assert pool.submit(lambda: 42).result(timeout=5) == 42
    pool.shutdown()


def test_shutdown_cancels_waiting_calls_and_stops_the_threads():
    pool = ToolThreads(1)
    gate = threading.Event()
    busy = pool.submit(gate.wait, 5)
    waiting = pool.submit(lambda: "never")
    pool.shutdown(wait=False, cancel_futures=True)
    assert waiting.cancelled()
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(lambda: None)
    gate.set()
    assert busy.result(timeout=5) is True
    for thread in pool._threads:
        thread.join(timeout=5)
        assert not thread.is_alive()


def test_shutdown_lets_calls_already_waiting_finish_without_cancel_futures():
    pool = ToolThreads(1)
    gate = threading.Event()
    first = pool.submit(gate.wait, 5)
    second = pool.submit(lambda: "done")
    threading.Timer(0.05, gate.set).start()
    pool.shutdown(wait=True)
    assert first.result() is True and second.result() == "done"


def test_a_cancelled_call_is_skipped():
    pool = ToolThreads(1)
    gate = threading.Event()
    pool.submit(gate.wait, 5)
    skipped = pool.submit(lambda: "ran")
    assert skipped.cancel()
    gate.set()
    assert pool.submit(lambda: "after").result(timeout=5) == "after"
    assert skipped.cancelled()
    pool.shutdown()
