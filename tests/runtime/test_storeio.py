"""The one seam to the store: calls off the event loop, overlapped, in order per run, never cut short."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time

import pytest

from agentrt import MemoryStore, Runtime
from agentrt._runtime.storeio import DEFAULT_IO_THREADS, StoreIO, io_threads
from agentrt.stores import SqliteStore
from tests.runtime import agents as A


def test_threads_are_sized_for_the_store(tmp_path):
    assert io_threads(MemoryStore()) == 0  # no I/O: inline
    sqlite = SqliteStore(str(tmp_path / "s.db"))
    try:
        assert io_threads(sqlite) == 0  # NORMAL: a local commit costs less than a hop to a thread
    finally:
        sqlite.close()
    durable = SqliteStore(str(tmp_path / "full.db"), synchronous="FULL")
    try:
        assert io_threads(durable) == 1  # FULL: the fsync waits on a thread, never on the loop
    finally:
        durable.close()
    assert io_threads(object()) == DEFAULT_IO_THREADS

    class Declared:
        io_threads = 7

    assert io_threads(Declared()) == 7


def test_calls_run_off_the_loop_and_overlap():
    io = StoreIO(object(), threads=8)
    threads: set[int] = set()

    def slow(n: int) -> int:
        threads.add(threading.get_ident())
        time.sleep(0.2)
        return n

    async def main() -> tuple[list[int], float, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        beat = asyncio.ensure_future(ticker())
        started = time.monotonic()
        got = await asyncio.gather(*(io(slow, n) for n in range(8)))
        took = time.monotonic() - started
        beat.cancel()
        return got, took, ticks

    try:
        got, took, ticks = asyncio.run(main())
    finally:
        io.close()
    assert got == list(range(8))
    print(f"8 calls of 0.2 s took {took:.2f} s on {len(threads)} threads")
    assert len(threads) >= 2  # overlapped: more than one thread made the calls (timing is not asserted)
    assert ticks >= 2  # the loop ran meanwhile
    assert threading.main_thread().ident not in threads


def test_a_cancelled_caller_sees_the_cancel_only_once_its_call_ended():
    io = StoreIO(object(), threads=1)
    ended = threading.Event()

    def write() -> None:
        time.sleep(0.2)
        ended.set()

    async def main() -> bool:
        task = asyncio.ensure_future(io(write))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return ended.is_set()

    try:
        assert asyncio.run(main())  # nothing done after the cancel can overtake the write
    finally:
        io.close()


def test_ordered_calls_keep_each_runs_order():
    io = StoreIO(object(), threads=4)
    seen: dict[str, list[int]] = {"a": [], "b": [], "c": []}

    def append(run_id: str, n: int) -> None:
        time.sleep(0.001 * (n % 3))
        seen[run_id].append(n)

    futures = [io.ordered(run_id, append, run_id, n) for n in range(30) for run_id in seen]
    for future in futures:
        assert future is not None
        future.result()
    io.close()
    assert all(calls == list(range(30)) for calls in seen.values())


class SlowStore(MemoryStore):
    """A memory store whose calls take as long as a round trip to a distant database, and which
    counts how many of its calls were in flight at once."""

    io_threads = 16
    LATENCY = 0.01
    calls = itertools.count()
    in_flight = 0
    most_in_flight = 0
    counting = threading.Lock()

    def __getattribute__(self, name: str):
        value = super().__getattribute__(name)
        if name.startswith("_") or not callable(value) or name in ("close", "queue_stream"):
            return value

        def slow(*args, **kwargs):
            next(SlowStore.calls)
            with SlowStore.counting:
                SlowStore.in_flight += 1
                SlowStore.most_in_flight = max(SlowStore.most_in_flight, SlowStore.in_flight)
            try:
                time.sleep(SlowStore.LATENCY)
                return value(*args, **kwargs)
            finally:
                with SlowStore.counting:
                    SlowStore.in_flight -= 1

        return slow


def test_a_runtime_overlaps_the_round_trips_of_its_runs():
    store = SlowStore()
    runs, steps = 16, 3

    async def main() -> tuple[float, list[A.Total]]:
        async with Runtime(store, poll_seconds=0.05) as rt:
            started = time.monotonic()
            ids = [await rt.start(A.summer, {"n": steps}) for _ in range(runs)]
            outs = [await rt.wait(run_id, timeout=60) for run_id in ids]
            return time.monotonic() - started, outs

    before = next(SlowStore.calls)
    took, outs = asyncio.run(main())
    assert outs == [A.Total(sum(range(steps)))] * runs
    serial = (next(SlowStore.calls) - before) * SlowStore.LATENCY  # every call's latency, one by one
    print(f"took {took:.2f} s, serially {serial:.2f} s, at most {SlowStore.most_in_flight} calls at once")
    # Overlap, shown by the store itself rather than by the clock (a loaded CI machine makes any
    # timing ratio a coin toss): several runs' round trips were in flight at the same moment.
    assert SlowStore.most_in_flight >= 2, SlowStore.most_in_flight  # one at a time would be 1
